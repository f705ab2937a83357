import { test } from 'node:test';
import assert from 'node:assert/strict';

import { tokenize, MAX_TEXT_LENGTH, MAX_TOKENS } from '../src/text/index.js';
import { SEGMENTER_CACHE_LIMIT, segmenterCacheSize } from '../src/text/tokenize.js';

const texts = (tokens) => tokens.map((t) => t.text);

// Offsets index the original string, tokens are in order and do not overlap, and together they
// cover every non-whitespace character exactly once.
function assertWellFormed(text, tokens) {
  let previousEnd = 0;
  let covered = '';
  for (const token of tokens) {
    assert.equal(text.slice(token.start, token.end), token.text, `token ${JSON.stringify(token)}`);
    assert.ok(
      token.start >= previousEnd,
      `token ${JSON.stringify(token)} overlaps its predecessor`,
    );
    assert.ok(token.end > token.start, 'empty token');
    assert.match(
      text.slice(previousEnd, token.start),
      /^\s*$/u,
      'a gap holds more than whitespace',
    );
    previousEnd = token.end;
    covered += token.text;
  }
  assert.match(text.slice(previousEnd), /^\s*$/u);
  assert.equal(covered, text.replace(/\s/gu, ''));
}

test('word level splits Chinese into dictionary words', () => {
  const tokens = tokenize('我爱自然语言处理', { granularity: 'word' });
  assert.deepEqual(texts(tokens), ['我', '爱', '自然', '语言', '处理']);
  assert.deepEqual(tokens[2], { text: '自然', start: 2, end: 4 });
});

test('word level is the default and keeps punctuation, drops whitespace', () => {
  const text = "The animal didn't cross the street because it was too tired.";
  const tokens = tokenize(text);
  assert.deepEqual(texts(tokens), [
    'The',
    'animal',
    "didn't",
    'cross',
    'the',
    'street',
    'because',
    'it',
    'was',
    'too',
    'tired',
    '.',
  ]);
  assertWellFormed(text, tokens);
});

test('mixed scripts, emoji, numbers and symbols at word level', () => {
  const text = 'Attention 机制很重要! 👍🏽 👨‍👩‍👧 🇫🇷 café — 3.14 $5';
  const tokens = tokenize(text);
  assert.deepEqual(texts(tokens), [
    'Attention',
    '机制',
    '很',
    '重要',
    '!',
    '👍🏽',
    '👨‍👩‍👧',
    '🇫🇷',
    'café',
    '—',
    '3.14',
    '$',
    '5',
  ]);
  assertWellFormed(text, tokens);
});

test('char level yields grapheme clusters without whitespace', () => {
  const text = 'e\u0301t\u00e9 👨‍👩‍👧 👍🏽\r\n自然';
  const tokens = tokenize(text, { granularity: 'char' });
  assert.deepEqual(texts(tokens), ['e\u0301', 't', '\u00e9', '👨‍👩‍👧', '👍🏽', '自', '然']);
  assert.deepEqual(tokens[3], { text: '👨‍👩‍👧', start: 5, end: 13 });
  assertWellFormed(text, tokens);
});

test('subword level: affixes, clitics, CJK characters, long words', () => {
  const split = (text) => texts(tokenize(text, { granularity: 'subword' }));
  assert.deepEqual(split('unbelievable carefully tokenization attention'), [
    'un',
    'believ',
    'able',
    'care',
    'ful',
    'ly',
    'token',
    'ization',
    'attent',
    'ion',
  ]);
  assert.deepEqual(split("didn't it's we\u2019re"), ['did', "n't", 'it', "'s", 'we', '\u2019re']);
  assert.deepEqual(split('我爱自然语言处理'), ['我', '爱', '自', '然', '语', '言', '处', '理']);
  assert.deepEqual(split('Donaudampfschifffahrt'), ['Donauda', 'mpfschi', 'fffahrt']);
  // Short words, words whose stem would get too short, and "un" before "i" stay whole.
  assert.deepEqual(split('the cat sings during universe, 3.14!'), [
    'the',
    'cat',
    'sings',
    'during',
    'universe',
    ',',
    '3.14',
    '!',
  ]);
  assert.deepEqual(split('Transformers UNDERSTAND'), ['Trans', 'form', 'ers', 'UNDER', 'STAND']);
});

test('offsets stay exact in every granularity, over awkward input', () => {
  const samples = [
    '',
    '   ',
    'a',
    '  leading and trailing  ',
    'tab\tand\nnewline\r\nend',
    'Unbelievably, the transformers\u2019 attention didn\u2019t fail.',
    '注意力机制(Attention)是深度学习中的重要技术。',
    'トランスフォーマーは注意機構を使う',
    '한국어 문장을 나눕니다',
    'Ünïcödé naïve façade',
    '𝔸𝕥𝕥𝕖𝕟𝕥𝕚𝕠𝕟 😀😀 a\u200db',
    'x'.repeat(40),
    'interchangeableness internationalization',
  ];
  for (const text of samples) {
    for (const granularity of ['word', 'char', 'subword']) {
      assertWellFormed(text, tokenize(text, { granularity }));
    }
  }
});

test('locale is passed to the segmenter and checked', () => {
  assert.deepEqual(texts(tokenize('我爱自然语言处理', { locale: 'zh' })), [
    '我',
    '爱',
    '自然',
    '语言',
    '处理',
  ]);
  assert.throws(
    () => tokenize('x', { locale: 'not a locale!' }),
    (e) => e instanceof RangeError && e.parameter === 'locale' && /^locale: /.test(e.message),
  );
});

test('input checks name the argument', () => {
  assert.throws(
    () => tokenize(42),
    (e) => e instanceof TypeError && /^text: must be a string/.test(e.message),
  );
  assert.throws(() => tokenize(null), TypeError);
  assert.throws(
    () => tokenize('x', 'word'),
    (e) => e instanceof TypeError && /^options: /.test(e.message),
  );
  assert.throws(
    () => tokenize('x', { granularity: 'sentence' }),
    (e) => e instanceof RangeError && /^granularity: .*'word', 'char', 'subword'/.test(e.message),
  );
  assert.throws(() => tokenize('x', { granularity: 1 }), TypeError);
});

test('caps: text length and token count, with the cap in the message', () => {
  assert.equal(MAX_TEXT_LENGTH, 20000);
  assert.equal(MAX_TOKENS, 512);
  const atTokenCap = 'a '.repeat(MAX_TOKENS);
  assert.equal(tokenize(atTokenCap).length, MAX_TOKENS);
  assert.throws(
    () => tokenize(`${atTokenCap}b`),
    (e) =>
      e instanceof RangeError &&
      e.parameter === 'text' &&
      /513 word tokens exceed the cap of 512 \(MAX_TOKENS\)/.test(e.message),
  );
  // The same text can fit as words and overflow as characters.
  const words = 'attention '.repeat(60);
  assert.equal(tokenize(words).length, 60);
  assert.throws(() => tokenize(words, { granularity: 'char' }), /exceed the cap of 512/);

  const atLengthCap = ' '.repeat(MAX_TEXT_LENGTH - 1) + 'x';
  assert.deepEqual(texts(tokenize(atLengthCap)), ['x']);
  assert.throws(
    () => tokenize(`${atLengthCap} `),
    (e) =>
      e instanceof RangeError &&
      /20001 characters exceed the cap of 20000 \(MAX_TEXT_LENGTH/.test(e.message),
  );
});

test('a pasted book is refused quickly', () => {
  const book = 'It was the best of times, it was the worst of times. '.repeat(20000);
  const started = performance.now();
  assert.throws(() => tokenize(book), RangeError);
  assert.ok(performance.now() - started < 50, 'the length check must come before segmentation');
});

test('the segmenter cache stays bounded however many locales are used', () => {
  // Each distinct locale made (and kept) a Segmenter: 50,000 of them held 374 MiB.
  for (let i = 0; i < 200; i++) tokenize('我爱自然语言处理', { locale: `zh-x-v${i}` });
  assert.ok(
    segmenterCacheSize() <= SEGMENTER_CACHE_LIMIT,
    `${segmenterCacheSize()} Segmenters kept`,
  );
  // The most recently used ones stay: the same locale again reuses its Segmenter.
  const before = segmenterCacheSize();
  tokenize('again', { locale: 'zh-x-v199' });
  assert.equal(segmenterCacheSize(), before);
  // Spellings of one locale share one entry.
  tokenize('a', { locale: 'EN-us' });
  const withOne = segmenterCacheSize();
  tokenize('a', { locale: 'en-US' });
  tokenize('a', { locale: ['en-us'] });
  assert.equal(segmenterCacheSize(), withOne);
});
