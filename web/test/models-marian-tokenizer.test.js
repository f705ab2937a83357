// Marian's tokenizer (source.spm, target.spm, vocab.json) against SentencePiece itself
// (python3-sentencepiece) and MarianTokenizer's semantics written in Python
// (tests/models/make_tiny_marian.py): ids, spans in the source text (CJK, English, an emoji,
// full-width letters the normalizer folds, language codes, unknown pieces), the target side and
// decoding. Then the SentencePiece model file as hostile input.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, test } from 'node:test';
import { createMarianTokenizer } from '../src/models/marian-tokenizer.js';
import { readSentencePieceModel } from '../src/models/files/sentencepiece.js';
import { unigramTokenizerJson } from '../src/models/sentencepiece-unigram.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
let folder;
let expected;
let files;

before(() => {
  folder = mkdtempSync(join(tmpdir(), 'attnlens-marian-'));
  execFileSync('/usr/bin/python3', [join(REPO, 'tests/models/make_tiny_marian.py'), folder]);
  expected = JSON.parse(readFileSync(join(folder, 'marian-tokenizer.json'), 'utf8'));
  const model = join(folder, 'marian.safetensors');
  files = {
    sourceSpm: readFileSync(join(model, 'source.spm')),
    targetSpm: readFileSync(join(model, 'target.spm')),
    vocab: JSON.parse(readFileSync(join(model, 'vocab.json'), 'utf8')),
    config: JSON.parse(readFileSync(join(model, 'tokenizer_config.json'), 'utf8')),
  };
});

const spans = (encoding) => encoding.tokens.map((t) => [t.start, t.end]);

test('source ids and spans are SentencePiece and MarianTokenizer', async () => {
  const tokenizer = await createMarianTokenizer(files);
  for (const { text, ids, spans: want } of expected.source) {
    const encoding = tokenizer.encode(text);
    assert.deepEqual(encoding.ids, ids, JSON.stringify(text));
    assert.deepEqual(spans(encoding), want, `spans of ${JSON.stringify(text)}`);
  }
});

test('target text goes through target.spm', async () => {
  const tokenizer = await createMarianTokenizer(files);
  for (const { text, ids, spans: want } of expected.target) {
    const encoding = tokenizer.encodeTarget(text);
    assert.deepEqual(encoding.ids, ids, JSON.stringify(text));
    assert.deepEqual(spans(encoding), want, `spans of ${JSON.stringify(text)}`);
  }
});

test('decode writes what MarianTokenizer.decode writes', async () => {
  const tokenizer = await createMarianTokenizer(files);
  for (const { ids, skip, text } of expected.decode) {
    assert.equal(tokenizer.decode(ids, { skipSpecialTokens: skip }), text, `${ids} skip ${skip}`);
  }
});

test('special tokens, language codes and the vocabulary', async () => {
  const tokenizer = await createMarianTokenizer(files);
  assert.deepEqual(tokenizer.special.eos, { id: 0, text: '</s>' });
  assert.deepEqual(tokenizer.special.unk, { id: 1, text: '<unk>' });
  assert.equal(tokenizer.special.pad.id, files.vocab['<pad>']);
  assert.equal(tokenizer.vocabSize, Object.keys(files.vocab).length);
  assert.deepEqual(tokenizer.languageCodes, ['>>cmn_Hans<<', '>>yue_Hant<<']);
  const encoding = tokenizer.encode('>>cmn_Hans<< 我爱');
  assert.equal(encoding.tokens[0].text, '>>cmn_Hans<<');
  assert.equal(encoding.tokens.at(-1).special, true);
  // A piece vocab.json lacks is <unk>, and is text (not special) in the view.
  const unknown = tokenizer.encode('我的猫').tokens.find((t) => t.id === 1);
  assert.equal(unknown.special, false);
  assert.deepEqual(tokenizer.appendedText([4, 62], 80), {
    text: tokenizer.decode([4, 62, 80]).slice(tokenizer.decode([4, 62]).length),
    partial: false,
  });
});

test('bad vocabularies and arguments get named errors', async () => {
  const fails = (edit, parameter, message) =>
    assert.rejects(createMarianTokenizer({ ...files, ...edit }), (error) => {
      assert.equal(error.parameter, parameter, error.message);
      assert.match(error.message, message);
      return true;
    });
  await fails({ vocab: [] }, 'vocab.json', /JSON object/);
  await fails({ vocab: { '<unk>': -1 } }, 'vocab.json', /not an id/);
  await fails({ vocab: { '<unk>': 0.5 } }, 'vocab.json', /not an id/);
  await fails({ vocab: { '</s>': 0, '<pad>': 2 } }, 'vocab.json', /no unk token <unk>/);
  await fails({ config: { separate_vocabs: true } }, 'target_vocab.json', /JSON object/);
  await fails({ sourceSpm: 'source.spm' }, 'source.spm', /bytes of a SentencePiece model/);
  const tokenizer = await createMarianTokenizer(files);
  assert.throws(() => tokenizer.encode(7), { code: 'invalid_argument', parameter: 'text' });
  assert.throws(() => tokenizer.decode([0, -1]), { code: 'out_of_range', parameter: 'ids[1]' });
  assert.throws(() => tokenizer.decode([0.5]), { code: 'out_of_range', parameter: 'ids[0]' });
});

test('separate_vocabs maps the target side through target_vocab.json', async () => {
  const targetVocab = Object.fromEntries(
    Object.entries(files.vocab).map(([piece, id]) => [piece, id === 0 || id === 1 ? id : id + 1]),
  );
  const tokenizer = await createMarianTokenizer({
    ...files,
    targetVocab,
    config: { ...files.config, separate_vocabs: true },
  });
  const { text, ids } = expected.target[0];
  assert.deepEqual(
    tokenizer.encodeTarget(text).ids,
    ids.map((id) => (id <= 1 ? id : id + 1)),
  );
  assert.equal(
    tokenizer.decode(tokenizer.encodeTarget(text).ids, { skipSpecialTokens: true }),
    text,
  );
  assert.deepEqual(tokenizer.languageCodes, []);
});

// The protobuf as hostile input: every length, varint and type checked, the file named.
const varint = (n) => {
  const out = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
};
const field = (number, bytes) => [...varint(number * 8 + 2), ...varint(bytes.length), ...bytes];
const piece = (text, type) => {
  const utf8 = [...new TextEncoder().encode(text)];
  return field(1, [...field(1, utf8), 0x15, 0, 0, 0x80, 0xbf, 0x18, type]);
};
const spm = (...parts) => Uint8Array.from(parts.flat());
const NORMALIZER = field(3, [0x18, 1]);
const TRAINER = field(2, [0x18, 1]);

test('a minimal hand-written model reads, and every broken one is refused by name', () => {
  const good = spm(piece('<unk>', 2), piece('▁a', 1), TRAINER, NORMALIZER);
  const model = readSentencePieceModel(good, 'source.spm');
  assert.deepEqual(
    model.pieces.map((p) => [p.piece, p.score, p.type]),
    [
      ['<unk>', -1, 'unknown'],
      ['▁a', -1, 'normal'],
    ],
  );
  const refused = (bytes, message) =>
    assert.throws(
      () => readSentencePieceModel(bytes, 'target.spm'),
      (error) => error.parameter === 'target.spm' && message.test(error.message),
    );
  refused(good.subarray(0, good.length - 1), /past the end/);
  refused(spm(piece('<unk>', 2), [0x0a, 0xff, 0xff, 0xff, 0x7f]), /past the end/);
  refused(spm([0x0a, ...Array(11).fill(0xff)]), /varint longer than 10 bytes/);
  refused(spm(piece('<unk>', 2), [0x0b]), /wire type 3/);
  refused(spm(field(1, field(1, [0xff, 0xfe])), NORMALIZER), /not UTF-8/);
  refused(spm(piece('<unk>', 2), piece('a', 9), NORMALIZER), /type 9/);
  refused(spm(piece('<unk>', 2), NORMALIZER, field(1, [0x15, 0, 0, 0x80, 0x7f])), /score Infinity/);
  refused(spm(piece('<unk>', 2), field(2, [0x18, 9]), NORMALIZER), /model_type is 9/);
  refused(spm(piece('▁a', 1), NORMALIZER), /not the unknown piece/);
  refused(spm(piece('<unk>', 2)), /no normalizer spec/);
  refused(spm(NORMALIZER), /no pieces/);
  refused(spm(piece('<unk>', 2), field(2, [0xc0, 0x02, 7]), NORMALIZER), /unk_id 7/);
  refused(spm(field(1, field(1, Array(1025).fill(0x61))), NORMALIZER), /1025 bytes/);
  refused(new Uint8Array(64 * 1024 * 1024 + 1), /more than a SentencePiece model/);

  const bpe = readSentencePieceModel(
    spm(piece('<unk>', 2), field(2, [0x18, 2]), NORMALIZER),
    'source.spm',
  );
  assert.throws(() => unigramTokenizerJson(bpe, 'source.spm'), /bpe model; only Unigram/);
  const twice = readSentencePieceModel(
    spm(piece('<unk>', 2), piece('a', 1), piece('a', 1), NORMALIZER),
    'source.spm',
  );
  assert.throws(() => unigramTokenizerJson(twice, 'source.spm'), /piece "a" twice/);
});
