// The next token from a row of logits, as the transformers library's generate() picks it:
// greedy at temperature 0 (the largest logit; ties go to the smaller id, the order predictions
// use), otherwise a seeded draw from softmax(logits / temperature) restricted, in that
// library's order, to the topK largest logits, then to the smallest set of the most likely
// tokens whose probability reaches topP (nucleus sampling).

import { topIds } from './predictions.js';

/**
 * @param {Float32Array} logits rows of `vocab` logits; the row starts at `offset`
 * @param {{ temperature: number, topK: number, topP: number }} options topK 0: every token
 * @param {() => number} random uniform uint32s (text/hash.js mulberry32), used only when sampling
 * @returns {number} the token id
 */
export function pickToken(logits, offset, vocab, { temperature, topK, topP }, random) {
  if (temperature === 0) return topIds(logits, offset, vocab, 1)[0];
  // Candidates best first when a cut needs the order; every id (unsorted) otherwise.
  let ids;
  if (topK > 0 && topK < vocab) ids = topIds(logits, offset, vocab, topK);
  else if (topP < 1) ids = topIds(logits, offset, vocab, vocab);
  else ids = Array.from({ length: vocab }, (_, v) => v);
  let max = -Infinity;
  for (const id of ids) max = Math.max(max, logits[offset + id]);
  const weights = ids.map((id) => Math.exp((logits[offset + id] - max) / temperature));
  let total = weights.reduce((sum, w) => sum + w, 0);
  let count = ids.length;
  if (topP < 1) {
    // Keep the most likely tokens until their probability reaches topP, the one that crosses
    // it included (at least one token always stays).
    let kept = 0;
    count = 0;
    while (count < ids.length && (count === 0 || kept < topP * total)) kept += weights[count++];
    total = kept;
  }
  let u = (random() / 4294967296) * total;
  for (let i = 0; i < count; i++) {
    u -= weights[i];
    if (u < 0) return ids[i];
  }
  return ids[count - 1]; // rounding left u at the very top of the range
}
