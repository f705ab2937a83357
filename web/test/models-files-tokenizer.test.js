// The tokenizer wrapper over @huggingface/tokenizers, on real tokenizer.json files written by
// tests/models/tokenizers.py: GPT-2 ids equal an independent GPT-2 BPE (npm gpt-3-encoder) on
// English, Chinese, emoji and odd whitespace; offsets point back at the text each token came
// from; BERT's template marks special tokens and token types; bad files get clear errors; and
// the default `attnlens` entry never loads the tokenizer library.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import * as esbuild from 'esbuild';
import { encode as referenceEncode } from 'gpt-3-encoder';
import { createTokenizer } from '../src/models/tokenizer.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'attnlens-tokenizers-'));
const read = (name) => ({
  json: JSON.parse(readFileSync(join(out, name, 'tokenizer.json'), 'utf8')),
  config: JSON.parse(readFileSync(join(out, name, 'tokenizer_config.json'), 'utf8')),
});
const tokenizers = {};
before(async () => {
  execFileSync('/usr/bin/python3', [join(repo, 'tests/models/tokenizers.py'), out]);
  for (const name of ['gpt2', 'tiny-gpt2', 'tiny-bert'])
    tokenizers[name] = await createTokenizer(read(name));
});
after(() => rmSync(out, { recursive: true, force: true }));

const TEXTS = {
  english: 'The quick brown fox jumps over the lazy dog. It\'s 3.14, isn\'t it? "Yes!"',
  chinese: '注意力机制让每个词元回看之前的词元。你好，世界！',
  emoji: 'I ❤️ attention 😀👍🏽 🇫🇷 family: 👨‍👩‍👧‍👦!',
  whitespace: '  leading\tand\ttabs\n\nnew lines\r\n   trailing   \u00a0nbsp\u3000ideographic ',
  mixed: 'naïve café — résumé, 日本語 and ελληνικά',
};

describe('GPT-2 tokenizer parity with gpt-3-encoder', () => {
  for (const [kind, text] of Object.entries(TEXTS)) {
    it(`gives the same ids on ${kind} text`, () => {
      const { ids, tokens } = tokenizers.gpt2.encode(text);
      assert.deepEqual(ids, referenceEncode(text));
      assert.deepEqual(
        tokens.map((t) => t.id),
        ids,
      );
      assert.equal(tokenizers.gpt2.decode(ids), text);
    });
  }
});

// For byte-level BPE every byte belongs to exactly one token: a token's span covers whole
// characters, and consecutive tokens either follow each other or share a split character.
function checkByteLevelOffsets(tokenizer, text) {
  const { tokens } = tokenizer.encode(text);
  let covered = 0;
  for (const token of tokens) {
    assert.ok(token.start < token.end, `token ${token.text} has an empty span`);
    assert.ok(token.start <= covered && token.end >= covered, `token ${token.text} leaves a gap`);
    const piece = tokenizer.decode([token.id]);
    if (!piece.includes('\ufffd')) assert.equal(text.slice(token.start, token.end), piece);
    covered = token.end;
  }
  assert.equal(covered, text.length);
}

describe('offsets', () => {
  for (const [kind, text] of Object.entries(TEXTS)) {
    it(`GPT-2 spans cover ${kind} text exactly`, () => {
      checkByteLevelOffsets(tokenizers.gpt2, text);
      checkByteLevelOffsets(tokenizers['tiny-gpt2'], text);
    });
  }

  it('a character split across byte tokens belongs to each of them', () => {
    const text = 'a😀';
    const { tokens } = tokenizers['tiny-gpt2'].encode(text);
    assert.equal(tokens.length, 5);
    assert.deepEqual(
      tokens.slice(1).map((t) => [t.start, t.end]),
      Array(4).fill([1, 3]),
    );
  });

  it('BERT spans point at the original text through lowercasing, accents and CJK spacing', () => {
    const text = 'Héllo WORLD, 你好 😀 ﬁne.';
    const { tokens } = tokenizers['tiny-bert'].encode(text);
    const shown = tokens.map((t) => [t.text, text.slice(t.start, t.end), t.special]);
    assert.deepEqual(shown, [
      ['[CLS]', '', true],
      ['hello', 'Héllo', false],
      ['world', 'WORLD', false],
      [',', ',', false],
      ['你', '你', false],
      ['好', '好', false],
      ['[UNK]', '😀', false],
      ['[UNK]', 'ﬁne', false],
      ['.', '.', false],
      ['[SEP]', '', true],
    ]);
    assert.equal(tokens[0].start, 0);
    assert.equal(tokens.at(-1).start, text.length);
  });

  it('word pieces cover their word', () => {
    const text = 'walked looks';
    const { tokens } = tokenizers['tiny-bert'].encode(text, { addSpecialTokens: false });
    assert.deepEqual(
      tokens.map((t) => [t.text, text.slice(t.start, t.end)]),
      [
        ['walked', 'walked'],
        ['look', 'look'],
        ['##s', 's'],
      ],
    );
  });

  it('special tokens typed in the text keep their span and are marked', () => {
    const text = 'The capital of France is [MASK].';
    const { tokens } = tokenizers['tiny-bert'].encode(text);
    const mask = tokens.find((t) => t.text === '[MASK]');
    assert.equal(text.slice(mask.start, mask.end), '[MASK]');
    assert.equal(mask.special, true);
    assert.equal(mask.id, tokenizers['tiny-bert'].special.mask.id);
    const gpt = tokenizers.gpt2.encode('one<|endoftext|>two').tokens;
    assert.deepEqual(
      gpt.map((t) => [t.text, t.start, t.end, t.special]),
      [
        ['one', 0, 3, false],
        ['<|endoftext|>', 3, 16, true],
        ['two', 16, 19, false],
      ],
    );
  });
});

describe('BERT template', () => {
  it('encodes a pair as [CLS] A [SEP] B [SEP] with token types 0 then 1', () => {
    const text = 'the cat sat';
    const pair = 'a dog ran';
    const { ids, typeIds, tokens } = tokenizers['tiny-bert'].encode(text, { pair });
    assert.deepEqual(
      tokens.map((t) => t.text),
      ['[CLS]', 'the', 'cat', 'sat', '[SEP]', 'a', 'dog', 'ran', '[SEP]'],
    );
    assert.deepEqual(typeIds, [0, 0, 0, 0, 0, 1, 1, 1, 1]);
    assert.deepEqual(
      tokens.map((t) => t.segment),
      [0, 0, 0, 0, 0, 1, 1, 1, 1],
    );
    assert.deepEqual(
      tokens.map((t) => t.id),
      ids,
    );
    for (const t of tokens.filter((t) => !t.special)) {
      assert.equal((t.segment ? pair : text).slice(t.start, t.end), t.text);
    }
    assert.deepEqual([tokens[4].start, tokens[4].end, tokens[8].start], [11, 11, 9]);
    const plain = tokenizers['tiny-bert'].encode(text, { addSpecialTokens: false });
    assert.deepEqual(
      plain.tokens.map((t) => t.text),
      ['the', 'cat', 'sat'],
    );
  });

  it('knows its special tokens, vocabulary and limits', () => {
    const bert = tokenizers['tiny-bert'];
    for (const role of ['mask', 'cls', 'sep', 'pad', 'unk']) {
      assert.equal(bert.idToToken(bert.special[role].id), bert.special[role].text);
    }
    assert.equal(bert.tokenToId('[CLS]'), bert.special.cls.id);
    assert.equal(bert.tokenToId('no-such-token'), undefined);
    assert.equal(bert.maxLength, 512);
    const gpt2 = tokenizers.gpt2;
    assert.equal(gpt2.vocabSize, 50257);
    assert.deepEqual(gpt2.special.eos, { id: 50256, text: '<|endoftext|>' });
    assert.equal(gpt2.special.mask, undefined);
    assert.equal(gpt2.decode([]), '');
  });
});

describe('tokenizer errors', () => {
  it('refuses bad files with the file named', async () => {
    await assert.rejects(createTokenizer({ json: { version: '1.0' } }), {
      name: 'TypeError',
      parameter: 'tokenizer.json',
      message: /no "model"/,
    });
    await assert.rejects(createTokenizer({ json: { model: { type: 'Nonsense' } } }), {
      name: 'TypeError',
      parameter: 'tokenizer.json',
      message: /Nonsense/,
    });
    await assert.rejects(createTokenizer({ json: [], config: null }), {
      parameter: 'tokenizer.json',
    });
    await assert.rejects(createTokenizer({ json: read('tiny-bert').json, config: 'x' }), {
      parameter: 'tokenizer_config.json',
    });
  });

  it('refuses bad arguments', () => {
    const bert = tokenizers['tiny-bert'];
    assert.throws(() => bert.encode(42), { name: 'TypeError', parameter: 'text' });
    assert.throws(() => bert.encode('a', { pairs: 'b' }), {
      parameter: 'options',
      message: /unknown option 'pairs'/,
    });
    assert.throws(() => bert.encode('a', { pair: 3 }), { parameter: 'pair' });
    assert.throws(() => bert.decode([0, bert.vocabSize]), {
      name: 'RangeError',
      parameter: 'ids[1]',
    });
    assert.throws(() => bert.idToToken(-1), { name: 'RangeError', parameter: 'id' });
    assert.throws(() => bert.appendedText('12', 1), { name: 'TypeError', parameter: 'ids' });
    assert.throws(() => bert.appendedText([1.5], 1), { name: 'RangeError', parameter: 'ids[0]' });
    assert.throws(() => bert.appendedText([1], bert.vocabSize), {
      name: 'RangeError',
      parameter: 'id',
    });
    assert.equal(bert.appendedText(new Int32Array([2]), 1).partial, false);
    assert.throws(() => bert.tokenToId(5), { name: 'TypeError', parameter: 'token' });
  });
});

it("the default 'attnlens' entry does not load the tokenizer or the model files", async () => {
  const { metafile } = await esbuild.build({
    entryPoints: [fileURLToPath(new URL('../src/index.js', import.meta.url))],
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform: 'neutral',
    logLevel: 'silent',
  });
  const loaded = Object.keys(metafile.inputs).filter((path) =>
    /@huggingface|fflate|src\/models\//.test(path),
  );
  assert.deepEqual(loaded, []);
});
