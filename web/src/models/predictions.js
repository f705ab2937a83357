// The top-k tokens of one row of logits, with their softmax probabilities.

// Up to this k a running insertion into a sorted list of k beats sorting the whole vocabulary.
const INSERTION_LIMIT = 64;

/**
 * @param {Float32Array} logits rows of `vocab` logits
 * @param {number} offset index of the row's first logit
 * @returns {{ id: number, token: string, text: string, p: number }[]} best first; `token` is
 *   the vocabulary entry ('Ġthe', '##ing'), `text` what it decodes to (' the', 'ing')
 */
export function topPredictions(logits, offset, vocab, k, tokenizer) {
  let max = -Infinity;
  for (let v = 0; v < vocab; v++) max = Math.max(max, logits[offset + v]);
  let sum = 0;
  for (let v = 0; v < vocab; v++) sum += Math.exp(logits[offset + v] - max);
  const best =
    k <= INSERTION_LIMIT
      ? topByInsertion(logits, offset, vocab, k)
      : topBySort(logits, offset, vocab, k);
  return best.map((id) => ({
    id,
    token: tokenizer.idToToken(id) ?? '',
    text: tokenizer.decode([id]),
    p: Math.exp(logits[offset + id] - max) / sum,
  }));
}

// Ties go to the smaller id, as a stable sort would order them.
function topByInsertion(logits, offset, vocab, k) {
  const ids = [];
  for (let v = 0; v < vocab; v++) {
    const x = logits[offset + v];
    if (ids.length === k && x <= logits[offset + ids[k - 1]]) continue;
    let at = ids.length < k ? ids.length : k - 1;
    while (at > 0 && logits[offset + ids[at - 1]] < x) {
      if (at < k) ids[at] = ids[at - 1];
      at--;
    }
    ids[at] = v;
  }
  return ids;
}

function topBySort(logits, offset, vocab, k) {
  const ids = Array.from({ length: vocab }, (_, v) => v);
  ids.sort((a, b) => logits[offset + b] - logits[offset + a] || a - b);
  return ids.slice(0, k);
}
