// llama2.c's tokenizer file as a tokenizer.json: the converter (llama2c-tokenizer.js) against an
// independent one written the way the transformers library converts a Llama 2 SentencePiece
// model (tests/models/spm_tokenizers.py, after its SentencePieceExtractor and generate_merges).
// The bundled tok512.bin has merges of equal score ('▁t he' and '▁th e'): they must come in the
// library's order, since a BPE tokenizer ranks merges by their place in the list.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { llama2cTokenizerFiles } from '../src/models/files/llama2c-tokenizer.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const TOKENIZER = join(REPO, 'web/src/models/bundled/stories260K/tok512.bin');
const VOCAB = 512;
const SEQ_LEN = 512;

function referenceTokenizer() {
  const out = mkdtempSync(join(tmpdir(), 'attnlens-spm-'));
  try {
    execFileSync('/usr/bin/python3', [join(REPO, 'tests/models/spm_tokenizers.py'), out], {
      env: { ...process.env, ATTNLENS_TOK512: TOKENIZER },
    });
    return JSON.parse(readFileSync(join(out, 'llama2-legacy/tokenizer.json'), 'utf8'));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

test("tok512.bin's tokenizer.json is the one the transformers library's converter writes", () => {
  const expected = referenceTokenizer();
  const { json } = llama2cTokenizerFiles(readFileSync(TOKENIZER), 'tok512.bin', VOCAB, SEQ_LEN);
  assert.deepEqual(json.model.vocab, expected.model.vocab);
  assert.equal(json.model.merges.length, expected.model.merges.length);
  json.model.merges.forEach((merge, rank) => {
    assert.deepEqual(merge, expected.model.merges[rank], `merge ${rank}`);
  });
  for (const part of ['normalizer', 'pre_tokenizer', 'post_processor', 'decoder', 'added_tokens']) {
    assert.deepEqual(json[part], expected[part], part);
  }
  const { merges: _m, vocab: _v, ...model } = json.model;
  const { merges: _em, vocab: _ev, ...expectedModel } = expected.model;
  assert.deepEqual(model, expectedModel);
  // The ties this file has, in the library's order (longer left part first).
  const rank = (pair) => json.model.merges.findIndex((m) => m.join(' ') === pair);
  assert.ok(rank('▁t he') >= 0 && rank('▁th e') >= 0);
  assert.ok(rank('▁th e') < rank('▁t he'), "'▁th e' comes before '▁t he'");
});
