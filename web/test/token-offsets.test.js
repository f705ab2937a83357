// Token spans and appended text for every tokenizer family the Hub uses, on real-format
// tokenizer.json files: byte-level BPE (GPT-2, Qwen2, SmolLM2; tests/models/tokenizers.py),
// SentencePiece BPE with byte fallback (Llama 2 legacy and Metaspace, from stories260K's
// tok512.bin) and Unigram (T5 and ALBERT conversions of a model trained with SentencePiece;
// tests/models/spm_tokenizers.py),
// WordPiece (BERT uncased, cased, Chinese). Each token's span is checked by re-deriving its
// piece from the span with rules written here, apart from the code under test; ids are checked
// against llama2.c's encode and SentencePiece itself; appending a token's text to the text gives
// what the tokenizer's own decode of the longer id list gives.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Tokenizer } from '@huggingface/tokenizers';
import { createTokenizer } from '../src/models/tokenizer.js';
import { alignedText, mapText, normalizeAligned } from '../src/models/aligned-text.js';
import { encodeWithSpans } from '../src/models/token-offsets.js';
import { tokenLabels, wordGroups } from '../src/interpret/words.js';
import { tokenize } from '../src/text/tokenize.js';
import { tokenLabel } from '../src/views/dom.js';
import { predictionLabel } from '../src/views/predictions.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'attnlens-token-offsets-'));
const readJson = (...parts) => JSON.parse(readFileSync(join(out, ...parts), 'utf8'));
const tokenizers = {};
const libraries = {}; // the library itself, to decode with

const FIXTURES = [
  'tiny-gpt2',
  'tiny-qwen2',
  'tiny-smollm2',
  'tiny-bert',
  'tiny-bert-cased',
  'tiny-bert-chinese',
  'llama2-legacy',
  'llama2-metaspace',
  't5-unigram',
  'albert-unigram',
];
before(async () => {
  execFileSync('/usr/bin/python3', [join(repo, 'tests/models/tokenizers.py'), out]);
  execFileSync('/usr/bin/python3', [join(repo, 'tests/models/spm_tokenizers.py'), out]);
  for (const name of FIXTURES) {
    const files = {
      json: readJson(name, 'tokenizer.json'),
      config: readJson(name, 'tokenizer_config.json'),
    };
    tokenizers[name] = await createTokenizer(files);
    libraries[name] = new Tokenizer(files.json, files.config);
  }
});
after(() => rmSync(out, { recursive: true, force: true }));

const TEXTS = {
  story: 'Once upon a time, there was a little girl named Lily.',
  spaces: '  two  spaces,   three\tand\t\ttabs\nnew\n\nlines  ',
  cjk: '你好，世界！注意力 机制',
  emoji: 'I ❤️ it 😀👍🏽 🇫🇷 family: 👨‍👩‍👧‍👦!',
  marks: 'café cafe\u0301 naïve Zoë',
  mixed: 'Lily said: "Wow!" 你好 😀 e\u0301 end ',
  single: 'a',
  empty: '',
};

// ---- An independent view of each family: the pipeline's text, character by character, with the
// original range of each character, and the bytes each token stands for.

function gpt2ByteMap() {
  const printable = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const map = new Map();
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    const code = printable.includes(b) ? b : 256 + extra++;
    map.set(String.fromCharCode(code), b);
  }
  return map;
}
const BYTE_OF = gpt2ByteMap();
const utf8 = (s) => [...new TextEncoder().encode(s)];

function charsOf(text, at = 0) {
  const chars = [];
  for (const ch of text) {
    chars.push({ ch, start: at, end: at + ch.length });
    at += ch.length;
  }
  return chars;
}

const FAMILIES = {
  byteLevel: {
    chars: (text) => charsOf(text),
    bytes: (token) => [...token].map((ch) => BYTE_OF.get(ch)),
  },
  llamaLegacy: {
    // In each piece of text between special tokens: '▁' in front, then every space as '▁'.
    chars: (text) => llamaChars(text, () => true),
    bytes: llamaBytes,
  },
  llamaMetaspace: {
    // Spaces as '▁', and one '▁' in front of the text unless it starts with one.
    chars: (text) => llamaChars(text, (part, index) => index === 0 && !part.startsWith(' ')),
    bytes: llamaBytes,
  },
};

function llamaChars(text, prepends) {
  const chars = [];
  let at = 0;
  text
    .split(/(<s>|<\/s>|<unk>)/)
    .filter((part) => part !== '')
    .forEach((part, index) => {
      if (!/^(<s>|<\/s>|<unk>)$/.test(part)) {
        if (prepends(part, index)) chars.push({ ch: '\u2581', start: at, end: at });
        for (const c of charsOf(part, at)) chars.push(c.ch === ' ' ? { ...c, ch: '\u2581' } : c);
      }
      at += part.length;
    });
  return chars;
}

function llamaBytes(token) {
  const byte = /^<0x([0-9A-F]{2})>$/.exec(token);
  return byte ? [parseInt(byte[1], 16)] : utf8(token);
}

// Every byte of the pipeline text belongs to exactly one token, in order; a token's span is the
// original range of the characters its bytes fall in (empty where they are all inserted).
function checkByBytes(text, tokens, family) {
  const chars = family.chars(text);
  const owner = []; // for each byte of the pipeline text, its character
  chars.forEach((c, i) => utf8(c.ch).forEach(() => owner.push(i)));
  const all = chars.flatMap((c) => utf8(c.ch));
  const content = tokens.filter((t) => !t.special);
  assert.deepEqual(
    content.flatMap((t) => family.bytes(t.text)),
    all,
    'the tokens are the text',
  );
  let at = 0;
  for (const token of content) {
    const n = family.bytes(token.text).length;
    const own = owner.slice(at, at + n).map((i) => chars[i]);
    at += n;
    const real = own.filter((c) => c.start < c.end);
    const expected = real.length
      ? { start: Math.min(...real.map((c) => c.start)), end: Math.max(...real.map((c) => c.end)) }
      : { start: own[0].start, end: own[0].start };
    assert.deepEqual(
      { start: token.start, end: token.end },
      expected,
      `${JSON.stringify(token.text)} in ${JSON.stringify(text)}`,
    );
  }
}

// What normalizers and pre-tokenizers may drop: whitespace, control and format characters.
const DROPPED = /^[\s\p{Cc}\p{Cf}]*$/u;
// ... and, where accents are stripped, combining marks.
const DROPPED_OR_MARK = /^[\s\p{Cc}\p{Cf}\p{Mn}]*$/u;

// Rules for families whose pieces are not the text's bytes: `derive` makes the piece a span
// stands for, `piece` what a token stands for. Spans come in order and what no span covers is
// dropped; an unknown token covers something that is not whitespace. Where a character becomes
// several (ﬁ -> fi) and tokens split them, each of those tokens spans that character: its piece
// is then inside what its span derives, and its span meets a neighbour's.
function checkByPieces(
  text,
  tokens,
  { derive, piece, unknown, prefixed = false, dropped = DROPPED },
) {
  const content = tokens.filter((t) => !t.special || t.start < t.end);
  let covered = 0;
  content.forEach((token, i) => {
    if (token.special) {
      // A special token typed in the text ([MASK], <s>) spans it.
      assert.equal(text.slice(token.start, token.end), token.text);
      covered = Math.max(covered, token.end);
      return;
    }
    const span = text.slice(token.start, token.end);
    const meets = (other) => other && other.start < token.end && token.start < other.end;
    const shared = meets(content[i - 1]) || meets(content[i + 1]);
    assert.ok(token.start >= covered || shared, `${token.text} overlaps the token before`);
    assert.match(text.slice(covered, token.start), dropped, `${token.text}: a gap`);
    if (token.id === unknown) {
      assert.match(span, /^\S(.*\S)?$/su, `the unknown token ${JSON.stringify(token)}`);
    } else {
      const want = piece(token.text);
      const got = derive(span);
      // Metaspace's '▁' in front of the text is in no text.
      const inserted = prefixed && i === 0 && want === ` ${got}`;
      const split = shared && got.includes(want.trimStart());
      assert.ok(
        got === want || inserted || split,
        `${JSON.stringify(token.text)} spans ${JSON.stringify(span)}`,
      );
    }
    covered = Math.max(covered, token.end);
  });
  assert.match(text.slice(covered), dropped, 'the end of the text is covered');
}

const stripAccents = (s) => s.normalize('NFD').replace(/\p{Mn}/gu, '');
const RULES = {
  'tiny-bert': {
    derive: (s) => stripAccents(s).toLowerCase(),
    piece: (t) => t.replace(/^##/, ''),
    dropped: DROPPED_OR_MARK,
  },
  'tiny-bert-cased': { derive: (s) => s, piece: (t) => t.replace(/^##/, '') },
  't5-unigram': {
    // The library's Precompiled: NFKC, with zero-width and other spaces as spaces.
    derive: (s) => s.replace(/[\s\u200b-\u200f]+/gu, ' ').normalize('NFKC'),
    piece: (t) => t.replaceAll('\u2581', ' '),
    prefixed: true,
  },
};
RULES['tiny-bert-chinese'] = RULES['tiny-bert-cased'];
RULES['albert-unigram'] = {
  ...RULES['t5-unigram'],
  dropped: DROPPED_OR_MARK,
  // ALBERT: `` and '' as ", accents removed (NFKD), lowercased, then as T5.
  derive: (s) =>
    RULES['t5-unigram'].derive(
      stripAccents(s.replace(/``|''/g, '"').normalize('NFKD')).toLowerCase(),
    ),
};

function check(name, text) {
  const tokenizer = tokenizers[name];
  const unknown = tokenizer.special.unk?.id;
  const { tokens } = tokenizer.encode(text);
  if (name === 'tiny-gpt2' || name === 'tiny-smollm2')
    checkByBytes(text, tokens, FAMILIES.byteLevel);
  else if (name === 'tiny-qwen2') {
    // Qwen2 normalizes to NFC first: a text NFC leaves alone has its bytes; others are below.
    if (text.normalize('NFC') === text) checkByBytes(text, tokens, FAMILIES.byteLevel);
  } else if (name === 'llama2-legacy') checkByBytes(text, tokens, FAMILIES.llamaLegacy);
  else if (name === 'llama2-metaspace') checkByBytes(text, tokens, FAMILIES.llamaMetaspace);
  else checkByPieces(text, tokens, { ...RULES[name], unknown });
  return tokens;
}

describe('every token spans its own piece of the text', () => {
  for (const name of FIXTURES) {
    it(name, () => {
      for (const text of Object.values(TEXTS)) check(name, text);
    });
  }

  // Seeded random texts from the awkward characters, every family checked as above.
  const ALPHABET = [
    ...'aeLy ',
    ' ',
    '  ',
    '\t',
    '\n',
    '\r\n',
    '\u00a0',
    '\u3000',
    '你',
    '好',
    '。',
    '😀',
    '👍🏽',
    '\u0301',
    'é',
    'ﬁ',
    '!',
    ',',
    "''",
    '``',
    '<s>',
    '[MASK]',
    '\u200d',
  ];
  it('random texts of awkward characters, every family', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let n = 0; n < 60; n++) {
      let text = '';
      const length = 1 + Math.floor(random() * 12);
      for (let k = 0; k < length; k++) text += ALPHABET[Math.floor(random() * ALPHABET.length)];
      for (const name of FIXTURES) {
        try {
          check(name, text);
        } catch (error) {
          error.message = `${name} on ${JSON.stringify(text)}: ${error.message}`;
          throw error;
        }
      }
    }
  });

  it('byte-level BPE with add_prefix_space: the space it adds spans nothing', async () => {
    const json = readJson('tiny-gpt2', 'tokenizer.json');
    json.pre_tokenizer = { ...json.pre_tokenizer, add_prefix_space: true };
    const tokenizer = await createTokenizer({ json, config: null });
    const prefixed = {
      chars: (text) => [
        ...(text.startsWith(' ') || text === '' ? [] : [{ ch: ' ', start: 0, end: 0 }]),
        ...charsOf(text),
      ],
      bytes: FAMILIES.byteLevel.bytes,
    };
    for (const text of Object.values(TEXTS)) {
      checkByBytes(text, tokenizer.encode(text).tokens, prefixed);
    }
  });

  it('a post-processor that trims offsets (RoBERTa) leaves the spaces out', async () => {
    const json = readJson('tiny-gpt2', 'tokenizer.json');
    json.post_processor = { ...json.post_processor, trim_offsets: true };
    const tokenizer = await createTokenizer({ json, config: null });
    const text = 'Once upon  a time';
    const shown = tokenizer.encode(text).tokens.map((t) => text.slice(t.start, t.end));
    assert.ok(
      shown.every((piece) => piece === piece.trim()),
      JSON.stringify(shown),
    );
    assert.ok(shown.includes('time'), JSON.stringify(shown));
  });

  it('byte pieces of one character share its span (Llama 2 byte fallback)', () => {
    const text = 'a 你 😀';
    const tokens = tokenizers['llama2-legacy'].encode(text).tokens;
    const shown = tokens.map((t) => [t.text, text.slice(t.start, t.end)]);
    assert.deepEqual(shown, [
      ['<s>', ''],
      ['\u2581a', 'a'],
      ['\u2581', ' '],
      ['<0xE4>', '你'],
      ['<0xBD>', '你'],
      ['<0xA0>', '你'],
      ['\u2581', ' '],
      ['<0xF0>', '😀'],
      ['<0x9F>', '😀'],
      ['<0x98>', '😀'],
      ['<0x80>', '😀'],
    ]);
  });

  it('Llama 2: each word after the first has its own span, leading space included', () => {
    const text = 'Once upon a time there was';
    const { tokens } = tokenizers['llama2-legacy'].encode(text);
    const words = tokens.filter((t) => !t.special).map((t) => text.slice(t.start, t.end));
    assert.equal(words.join(''), text);
    assert.deepEqual(words.slice(0, 4), ['Once', ' upon', ' a', ' time']);
  });

  it('Qwen2 composes a letter and its combining mark (NFC): the token spans both', () => {
    const text = 'cafe\u0301';
    const { tokens } = tokenizers['tiny-qwen2'].encode(text);
    // é is two bytes after NFC: each byte token of it spans 'e' and the mark.
    const accent = tokens.filter((t) => t.end === text.length);
    assert.ok(accent.length >= 1);
    for (const t of accent) assert.equal(text.slice(t.start, t.end).normalize('NFC').at(-1), 'é');
    assert.equal(tokens[0].start, 0);
  });

  it('T5: a run of spaces is one "▁" spanning all of it; unknown characters are <unk>', () => {
    const text = 'the   cat 😀';
    const { tokens } = tokenizers['t5-unigram'].encode(text);
    const shown = tokens.filter((t) => !t.special).map((t) => text.slice(t.start, t.end));
    assert.ok(
      shown.some((s) => s.startsWith('   ')),
      JSON.stringify(shown),
    );
    assert.equal(shown.at(-1), '😀');
  });
});

describe('ids', () => {
  for (const name of ['llama2-legacy', 'llama2-metaspace', 't5-unigram', 'albert-unigram']) {
    const reference = name.endsWith('unigram') ? 'SentencePiece' : "llama2.c's run.c";
    it(`${name}: as ${reference} encodes`, () => {
      for (const { text, ids } of readJson(name, 'expected.json')) {
        assert.deepEqual(tokenizers[name].encode(text).ids, ids, JSON.stringify(text));
      }
    });
  }
});

describe('what a token adds to the text', () => {
  // The tokenizer's own decode, without special tokens and without the clean-up of spaces
  // before punctuation (which rewrites text already there, so no appended text can give it).
  const decode = (name, ids) =>
    ids.length
      ? libraries[name].decode(ids, {
          skip_special_tokens: true,
          clean_up_tokenization_spaces: false,
        })
      : '';

  for (const name of FIXTURES) {
    it(`${name}: appending its text gives the decode of the longer id list`, () => {
      const tokenizer = tokenizers[name];
      for (const text of [TEXTS.story, TEXTS.mixed, TEXTS.empty]) {
        const { ids } = tokenizer.encode(text, { addSpecialTokens: true });
        const before = decode(name, ids);
        for (let id = 0; id < tokenizer.vocabSize; id += name.includes('bert') ? 3 : 1) {
          const { text: added } = tokenizer.appendedText(ids, id);
          assert.equal(before + added, decode(name, [...ids, id]), `id ${id}`);
        }
      }
    });
  }

  it('keeps the leading space: "▁p" and "Ġp" add " p"; "p" adds "p"', () => {
    const llama = tokenizers['llama2-legacy'];
    const context = llama.encode('Once').ids;
    assert.equal(llama.appendedText(context, llama.tokenToId('\u2581p')).text, ' p');
    assert.equal(llama.appendedText(context, llama.tokenToId('p')).text, 'p');
    const gpt = tokenizers['tiny-gpt2'];
    const ids = gpt.encode('Once').ids;
    assert.equal(gpt.appendedText(ids, gpt.tokenToId('\u0120t')).text, ' t');
    // After BOS alone a Llama text starts without the space the '▁' stands for.
    assert.equal(llama.appendedText([1], llama.tokenToId('\u2581Once')).text, 'Once');
  });

  it('a byte piece of part of a character adds U+FFFD and is marked partial', () => {
    const llama = tokenizers['llama2-legacy'];
    const context = llama.encode('Once').ids;
    assert.deepEqual(llama.appendedText(context, llama.tokenToId('<0xE4>')), {
      text: '\uFFFD',
      partial: true,
    });
    assert.deepEqual(llama.appendedText(context, llama.tokenToId('<0x41>')), {
      text: 'A',
      partial: false,
    });
    assert.deepEqual(llama.appendedText(context, 2), { text: '', partial: false });
  });

  it('appending each next token in turn rebuilds the decoded text', () => {
    for (const name of ['llama2-legacy', 'llama2-metaspace', 'tiny-gpt2', 't5-unigram']) {
      const tokenizer = tokenizers[name];
      const ids = tokenizer.encode(TEXTS.story).ids;
      let text = '';
      for (let i = 0; i < ids.length; i++) {
        text += tokenizer.appendedText(ids.slice(0, i), ids[i]).text;
      }
      assert.equal(text, decode(name, ids), name);
    }
  });
});

describe('words and labels on the page', () => {
  const STORY = 'Once upon a time, there was a little girl named Lily. 你好 😀';

  for (const name of ['llama2-legacy', 'llama2-metaspace', 'tiny-gpt2', 't5-unigram']) {
    it(`${name}: word view groups the pieces by the text's words`, () => {
      const { tokens } = tokenizers[name].encode(STORY);
      const words = tokenize(STORY, { granularity: 'word' });
      const groups = wordGroups(tokens, [words]).filter((g) => !g.special);
      const shown = groups.map((g) => STORY.slice(g.start, g.end));
      // Every word of the text is a group of its own, in order (punctuation included).
      assert.deepEqual(
        shown,
        words.map((w) => STORY.slice(w.start, w.end)),
      );
      assert.ok(groups.length >= 15, `${groups.length} groups`);
    });
  }

  it('the context line and the predictions mark a word boundary with the same ·', () => {
    const llama = tokenizers['llama2-legacy'];
    const text = 'Once upon';
    const { ids, tokens } = llama.encode(text);
    const labels = tokenLabels(tokens, [text]).map((t) => tokenLabel(t.text));
    assert.deepEqual(labels, ['<s>', 'Once', '·upon']);
    const id = llama.tokenToId('\u2581a');
    const entry = { id, token: '\u2581a', ...llama.appendedText(ids, id) };
    assert.equal(predictionLabel(entry), '·a');
    // A piece of a character shows its vocabulary entry; so does a special token.
    const byte = llama.tokenToId('<0xE4>');
    assert.equal(predictionLabel({ token: '<0xE4>', ...llama.appendedText(ids, byte) }), '<0xE4>');
    assert.equal(predictionLabel({ token: '</s>', ...llama.appendedText(ids, 2) }), '</s>');
    // A '▁' put in front of the text reads as the space it stands for.
    const lead = tokenLabels(llama.encode(' x').tokens, [' x']).map((t) => tokenLabel(t.text));
    assert.deepEqual(lead, ['<s>', '·', '·', 'x']);
  });
});

describe('where a step is not known, spans get coarser, never wrong', () => {
  it('a normalizer component of an unknown kind maps words, or the whole text', () => {
    const reverseWords = {
      config: { type: 'SomethingNew' },
      normalize: (s) => s.replace(/\S+/gu, (w) => [...w].reverse().join('')),
    };
    const text = 'ab cd';
    const aligned = normalizeAligned(alignedText(text), reverseWords);
    assert.equal(aligned.chars.join(''), 'ba dc');
    assert.deepEqual(
      aligned.chars.map((_, i) => [aligned.starts[i], aligned.ends[i]]),
      [
        [0, 2],
        [0, 2],
        [2, 3],
        [3, 5],
        [3, 5],
      ],
    );
    const shuffle = mapText(alignedText('ab cd'), (s) => [...s].reverse().join(''));
    assert.deepEqual(new Set(shuffle.starts), new Set([0]));
    assert.deepEqual(new Set(shuffle.ends), new Set([5]));
  });

  it('a library whose insides are not as known gives every token the whole text', () => {
    // Only encode(): the replay cannot run, so no span is guessed.
    const json = readJson('llama2-legacy', 'tokenizer.json');
    const library = { encode: () => ({ ids: [5, 6], tokens: ['\u2581a', 'b'] }) };
    const spans = encodeWithSpans(library, json, 'a b', { surface: () => [] });
    assert.deepEqual(
      spans.map((s) => [s.id, s.start, s.end]),
      [
        [5, 0, 3],
        [6, 0, 3],
      ],
    );
  });
});
