// The top-k tokens of one row of logits, with their softmax probabilities (the row's
// log-sum-exp comes from the core, which has a SIMD exp: 50257 Math.exp calls take ~1.6 ms).

/**
 * @param {Float32Array} logits rows of `vocab` logits
 * @param {number} offset index of the row's first logit
 * @param {number} logSumExp log sum_v exp(logit_v) of the row
 * @param {number[]} context the ids before the predicted position
 * @returns {{ id: number, token: string, text: string, partial: boolean, p: number }[]} best
 *   first; `token` is the vocabulary entry ('Ġthe', '▁the', '##ing'), `text` what it adds to
 *   the text before it (' the', ' the', 'ing'; see tokenizer.appendedText)
 */
export function topPredictions(logits, offset, vocab, logSumExp, k, tokenizer, context) {
  return topIds(logits, offset, vocab, k).map((id) => ({
    id,
    ...predictedToken(tokenizer, context, id),
    p: Math.exp(logits[offset + id] - logSumExp),
  }));
}

/**
 * The token a model's output row `id` stands for and what it adds after `context`. A model may
 * have more output rows than its tokenizer has tokens (Qwen2.5: 151,936 rows for 151,665 tokens,
 * padded for speed): such a row is no token, so its token and text are '' (as the transformers
 * library's decode skips an id its tokenizer lacks).
 * @returns {{ token: string, text: string, partial: boolean }}
 */
export function predictedToken(tokenizer, context, id) {
  if (id >= tokenizer.vocabSize) return { token: '', text: '', partial: false };
  return { token: tokenizer.idToToken(id) ?? '', ...tokenizer.appendedText(context, id) };
}

/** `ids` less those its tokenizer has no token for (see predictedToken). */
export function idsWithTokens(tokenizer, ids) {
  return Array.from(ids).filter((id) => id < tokenizer.vocabSize);
}

// Up to this k a running insertion into a sorted list of k beats sorting the whole vocabulary.
const INSERTION_LIMIT = 64;

/** The ids of the k largest logits, largest first; ties go to the smaller id (a stable order). */
export function topIds(logits, offset, vocab, k) {
  if (k > INSERTION_LIMIT) {
    const ids = Array.from({ length: vocab }, (_, v) => v);
    ids.sort((a, b) => logits[offset + b] - logits[offset + a] || a - b);
    return ids.slice(0, k);
  }
  const ids = [];
  const values = [];
  let threshold = -Infinity; // the k-th largest so far, once there are k
  for (let v = 0; v < vocab; v++) {
    const x = logits[offset + v];
    if (ids.length === k && x <= threshold) continue;
    let at = ids.length < k ? ids.length : k - 1;
    while (at > 0 && values[at - 1] < x) {
      if (at < k) {
        ids[at] = ids[at - 1];
        values[at] = values[at - 1];
      }
      at--;
    }
    ids[at] = v;
    values[at] = x;
    if (ids.length === k) threshold = values[k - 1];
  }
  return ids;
}
