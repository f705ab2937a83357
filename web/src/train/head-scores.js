// What each head of a causal model does on a sequence, from its attention weights
// [layers, heads, N, N]:
//   entropy        the mean over rows of -sum_j p_ij ln p_ij (nats): how spread out the head
//                  looks; it falls as attention sharpens
//   previousToken  the mean weight row i puts on token i - 1 (rows 1..N-1): the interpret
//                  module's `previous` measure (src/interpret/head-labels.js), one definition
//                  for the model pages and the trainer
//   induction      the mean weight row i puts on the tokens right after the earlier occurrences
//                  of token i (on a sequence repeated once: the token after its previous
//                  occurrence), over the rows whose token occurred before (null when none did)
//   label          'induction' when induction > HEAD_LABEL_THRESHOLD, else 'previous-token'
//                  when previousToken is, else null

import { headMeasures, LABEL_THRESHOLDS } from '../interpret/head-labels.js';

/** A head is labelled when more than this share of its weight goes where the label says. */
export const HEAD_LABEL_THRESHOLD = LABEL_THRESHOLDS.previous;

/**
 * @param {Float32Array} attention [layers, heads, N, N]
 * @param {ArrayLike<number>} ids the sequence's N token ids
 * @returns {{ layer, head, entropy, previousToken, induction, label }[]} layer by layer
 */
export function headScores(attention, ids, layers, heads) {
  const n = ids.length;
  // For every row, the columns right after the earlier occurrences of its token.
  const after = [];
  const seen = new Map();
  for (let i = 0; i < n; i++) {
    const earlier = seen.get(ids[i]) ?? [];
    after.push(earlier.map((j) => j + 1));
    seen.set(ids[i], [...earlier, i]);
  }
  const repeated = after.filter((columns) => columns.length > 0).length;
  const causal = new Uint8Array(n * n);
  for (let i = 0; i < n; i++) causal.fill(1, i * n, i * n + i + 1);
  const scores = [];
  for (let layer = 0; layer < layers; layer++) {
    for (let head = 0; head < heads; head++) {
      const base = (layer * heads + head) * n * n;
      const weights = attention.subarray(base, base + n * n);
      let entropy = 0,
        induction = 0;
      for (let i = 0; i < n; i++) {
        const row = i * n;
        for (let j = 0; j <= i; j++) {
          const p = weights[row + j];
          if (p > 0) entropy -= p * Math.log(p);
        }
        for (const j of after[i]) induction += weights[row + j];
      }
      const previousToken = headMeasures(weights, { n, mask: causal }).measures.previous ?? 0;
      const inductionScore = repeated > 0 ? induction / repeated : null;
      let label = null;
      if (inductionScore !== null && inductionScore > HEAD_LABEL_THRESHOLD) label = 'induction';
      else if (previousToken > HEAD_LABEL_THRESHOLD) label = 'previous-token';
      scores.push({
        layer,
        head,
        entropy: entropy / n,
        previousToken,
        induction: inductionScore,
        label,
      });
    }
  }
  return scores;
}
