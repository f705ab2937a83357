// Regular expressions from a tokenizer.json are hostile input: a pattern that can backtrack
// exponentially is refused when the tokenizer loads (naming it and where it is), so run() can
// never be blocked by one; the patterns of real tokenizers still load.

import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadModel } from '../src/models/index.js';
import { patternProblem } from '../src/models/tokenizer-patterns.js';
import { createTokenizer } from '../src/models/tokenizer.js';
import { callBounded } from './support/bounded.mjs';
import { tokenizerFolder } from './support/model-fixtures.mjs';
import { tinyModel } from './support/tiny-models.mjs';

const readJson = (...path) => JSON.parse(readFileSync(join(...path), 'utf8'));
const tinyGpt2 = () => readJson(tokenizerFolder(), 'tiny-gpt2', 'tokenizer.json');

// The pre-tokenizer patterns of real tokenizers (their tokenizer.json files, or the pattern a
// ByteLevel pre-tokenizer applies itself).
const alternatives = (...parts) => parts.join('|');
const CONTRACTIONS = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)`;
const REAL_PATTERNS = {
  'GPT-2': String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`,
  'Llama 3': alternatives(
    CONTRACTIONS,
    String.raw`[^\r\n\p{L}\p{N}]?\p{L}+`,
    String.raw`\p{N}{1,3}`,
    String.raw` ?[^\s\p{L}\p{N}]+[\r\n]*`,
    String.raw`\s*[\r\n]+|\s+(?!\S)|\s+`,
  ),
  Qwen2: alternatives(
    CONTRACTIONS,
    String.raw`[^\r\n\p{L}\p{N}]?\p{L}+`,
    String.raw`\p{N}`,
    String.raw` ?[^\s\p{L}\p{N}]+[\r\n]*`,
    String.raw`\s*[\r\n]+|\s+(?!\S)|\s+`,
  ),
  'GPT-4o': alternatives(
    String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` +
      `${CONTRACTIONS}?`,
    String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*` +
      `${CONTRACTIONS}?`,
    String.raw`\p{N}{1,3}`,
    String.raw` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
    String.raw`\s*[\r\n]+|\s+(?!\S)|\s+`,
  ),
  BLOOM: ' ?[^(\\s|[.,!?…。，、।۔،])]+',
  'SmolLM2 digits': String.raw`\p{N}`,
};

const HOSTILE_PATTERNS = [
  ['(a+)+$', /nested quantifiers/],
  ['(a*)*b', /nested quantifiers/],
  ['(?:a|a)*$', /alternation/],
  ['(\\w+\\s?)+$', /nested quantifiers/],
  ['((ab)*c)+', /nested quantifiers/],
  ['(a?){25}a{25}', /nested quantifiers/],
  ['(a)\\1', /backreference/],
  [')(a+)+$', /nested quantifiers/],
  ['(?<x>a)\\k<x>', /backreference/],
];

describe('tokenizer.json regular expressions', () => {
  it('the patterns of real tokenizers load', async () => {
    for (const [name, pattern] of Object.entries(REAL_PATTERNS)) {
      assert.equal(patternProblem(pattern), null, name);
      const json = tinyGpt2();
      json.pre_tokenizer = {
        type: 'Sequence',
        pretokenizers: [
          { type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false },
          json.pre_tokenizer,
        ],
      };
      const tokenizer = await createTokenizer({ json });
      assert.ok(tokenizer.encode("Hello world, it's 2024!").ids.length > 0, name);
    }
    // The fixtures' own tokenizers, Qwen2's Split among them.
    for (const name of ['tiny-gpt2', 'tiny-bert', 'tiny-qwen2', 'tiny-smollm2', 'gpt2']) {
      await createTokenizer({ json: readJson(tokenizerFolder(), name, 'tokenizer.json') });
    }
  });

  it('patterns that can backtrack exponentially are refused by name and place', async () => {
    for (const [pattern, why] of HOSTILE_PATTERNS) {
      const where = [
        ['pre_tokenizer', { type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated' }],
        ['normalizer', { type: 'Replace', pattern: { Regex: pattern }, content: 'x' }],
        [
          'normalizer',
          {
            type: 'Sequence',
            normalizers: [
              { type: 'NFC' },
              { type: 'Replace', pattern: { Regex: pattern }, content: '' },
            ],
          },
        ],
      ];
      const paths = [
        'pre_tokenizer.pattern.Regex',
        'normalizer.pattern.Regex',
        'normalizer.normalizers[1].pattern.Regex',
      ];
      for (const [i, [part, value]] of where.entries()) {
        const json = { ...tinyGpt2(), [part]: value };
        await assert.rejects(createTokenizer({ json }), (error) => {
          assert.ok(error instanceof TypeError, error.message);
          assert.equal(error.code, 'invalid_argument');
          assert.equal(error.parameter, 'tokenizer.json');
          assert.equal(error.pattern, pattern);
          assert.equal(error.path, paths[i]);
          assert.ok(
            error.message.startsWith(
              `tokenizer.json: pattern ${JSON.stringify(pattern)} at ${paths[i]} is refused: `,
            ),
            error.message,
          );
          assert.match(error.message, why);
          return true;
        });
      }
    }
  });

  it('a model whose tokenizer has (a+)+$ is refused at load; run() is never blocked', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'attnlens-regex-'));
    cpSync(tinyModel('gpt2'), folder, { recursive: true });
    const json = readJson(folder, 'tokenizer.json');
    json.pre_tokenizer = {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: '(a+)+$' }, behavior: 'Isolated', invert: false },
        json.pre_tokenizer,
      ],
    };
    writeFileSync(join(folder, 'tokenizer.json'), JSON.stringify(json));
    // In a worker stopped after a few seconds: before the check, run('a' * 28 + '!') took minutes.
    const result = await callBounded(
      new URL('./support/run-model.mjs', import.meta.url),
      'runModel',
      [folder, `${'a'.repeat(28)}!`],
      { ms: 20000 },
    );
    assert.equal(result.ok, false, 'the model does not load');
    assert.equal(result.error.code, 'invalid_argument');
    assert.equal(result.error.parameter, 'tokenizer.json');
    assert.match(
      result.error.message,
      /pattern "\(a\+\)\+\$" at pre_tokenizer\.pretokenizers\[0\]/,
    );
    // The original files still load and run.
    const model = await loadModel(tinyModel('gpt2'));
    assert.ok((await model.run(`${'a'.repeat(28)}!`)).tokens.length > 0);
    model.dispose();
  });
});
