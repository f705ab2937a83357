// run({ lens }): the logit lens (nostalgebraist, 2020). Every hidden state, the embeddings' and
// each layer's, put through the model's own final norm and output layer in the core
// (src/models/lens.cpp), which hands back only each position's top k tokens: a GPT-2 run never
// holds [layers, N, 50257] logits.

import { describe } from '../errors.js';
import { integer, optionsObject, typeError } from '../argument-checks.js';
import { predictedToken } from './predictions.js';

const DEFAULT_LENS_TOP_K = 5;
// The core's bound (lens.cpp's kMaxLensTopK).
const MAX_LENS_TOP_K = 1024;

/** lens: true, false/undefined, or { topK }: the k to ask the core for (0: no lens). */
export function checkLens(lens, vocab) {
  if (lens === undefined || lens === false) return 0;
  if (lens === true) return Math.min(DEFAULT_LENS_TOP_K, vocab);
  if (lens === null || typeof lens !== 'object') {
    throw typeError('lens', `must be true or { topK }, got ${describe(lens)}`);
  }
  const raw = optionsObject(lens, 'lens', ['topK']);
  if (raw.topK === undefined) return Math.min(DEFAULT_LENS_TOP_K, vocab);
  return integer(raw.topK, 'lens.topK', 1, Math.min(MAX_LENS_TOP_K, vocab));
}

/**
 * run()'s `lens`: { topK, ids, probabilities, top }. ids (Int32Array) and probabilities
 * (Float32Array) are [layers + 1, N, topK], best first; state 0 is the embeddings', state l + 1
 * layer l's output. top[state][position]: [{ id, token, text, p }], `text` what the token adds
 * after the tokens up to that position (causal models) or before it (BERT), as predictions'.
 */
export function lensResult(
  { lensIds, lensProbabilities },
  { layers, n, topK, tokenizer, ids, causal },
) {
  const top = [];
  for (let state = 0; state <= layers; state++) {
    const rows = [];
    for (let i = 0; i < n; i++) {
      const context = ids.slice(0, causal ? i + 1 : i);
      const row = [];
      for (let j = 0; j < topK; j++) {
        const at = (state * n + i) * topK + j;
        const id = lensIds[at];
        const { token, text } = predictedToken(tokenizer, context, id);
        row.push({ id, token, text, p: lensProbabilities[at] });
      }
      rows.push(row);
    }
    top.push(rows);
  }
  return { topK, ids: lensIds, probabilities: lensProbabilities, top };
}
