// Summaries of one attention row (one query's weights over the keys) for readouts next to a
// heatmap: how spread out the attention is, and where most of it goes.

/**
 * Shannon entropy of one attention row, in bits: 0 when all weight sits on one key, log2(n) when
 * it is spread evenly over n keys. The row is normalised by its sum first (rounding leaves it a
 * little off 1); an all-zero row (a query that sees no key) has entropy 0.
 * @param {ArrayLike<number>} weightsRow
 */
export function entropy(weightsRow) {
  let sum = 0;
  for (let i = 0; i < weightsRow.length; i++) sum += weightsRow[i];
  if (!(sum > 0)) return 0;
  let bits = 0;
  for (let i = 0; i < weightsRow.length; i++) {
    const p = weightsRow[i] / sum;
    if (p > 0) bits -= p * Math.log2(p);
  }
  return bits;
}

/**
 * The keys a query attends to most: the `count` largest weights of a row, largest first (ties by
 * lower index). Zero weights are left out.
 * @param {ArrayLike<number>} weightsRow
 * @param {number} [count]
 * @returns {Array<{ index: number, weight: number }>}
 */
export function topAttended(weightsRow, count = 3) {
  const entries = [];
  for (let i = 0; i < weightsRow.length; i++) {
    if (weightsRow[i] > 0) entries.push({ index: i, weight: weightsRow[i] });
  }
  entries.sort((a, b) => b.weight - a.weight || a.index - b.index);
  return entries.slice(0, count);
}
