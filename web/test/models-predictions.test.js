// Predictions over a model's output rows when the model has more rows than its tokenizer has
// tokens (Qwen2.5: 151,936 rows for 151,665 tokens). A padding row can win a top-k (random or
// fine-tuned weights): it is reported as no token, never a RangeError from the tokenizer, and
// generate()'s text leaves it out, as the transformers library's decode does.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createTokenizer } from '../src/models/tokenizer.js';
import { idsWithTokens, predictedToken, topPredictions } from '../src/models/predictions.js';
import { tinyModel } from './support/tiny-models.mjs';

const read = (name) => JSON.parse(readFileSync(join(tinyModel('gpt2'), name), 'utf8'));

test('an output row past the tokenizer is a prediction of no token, not an error', async () => {
  const tokenizer = await createTokenizer({ json: read('tokenizer.json') });
  const tokens = tokenizer.vocabSize;
  const context = tokenizer.encode('The quick brown').ids;
  const rows = tokens + 3; // the model's vocabulary, padded
  const logits = new Float32Array(rows).fill(-4);
  logits[tokens + 1] = 6; // a padding row first
  logits[5] = 5;
  const logSumExp = Math.log(logits.reduce((sum, x) => sum + Math.exp(x), 0));
  const top = topPredictions(logits, 0, rows, logSumExp, 2, tokenizer, context);
  assert.deepEqual(
    top.map(({ id, token, text, partial }) => ({ id, token, text, partial })),
    [
      { id: tokens + 1, token: '', text: '', partial: false },
      { id: 5, token: tokenizer.idToToken(5), ...tokenizer.appendedText(context, 5) },
    ],
  );
  assert.ok(Math.abs(top[0].p - Math.exp(6 - logSumExp)) < 1e-12);
  assert.deepEqual(predictedToken(tokenizer, context, tokens), {
    token: '',
    text: '',
    partial: false,
  });
  assert.deepEqual(idsWithTokens(tokenizer, [0, tokens, 5, tokens + 2]), [0, 5]);
  // The tokenizer's own API stays strict about ids it does not have.
  assert.throws(() => tokenizer.idToToken(tokens), { name: 'RangeError', parameter: 'id' });
});
