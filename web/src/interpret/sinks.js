// Attention sinks (Xiao et al. 2023, "Efficient Streaming Language Models with Attention
// Sinks"): many heads park most of their attention on the first token, whatever it says, when
// they have nothing better to do. Per layer and head, the share of a row's attention on the first
// token, and on the tokenizer's BOS/[CLS] token wherever it stands, averaged over the rows.
// The rows that can see only the first token (row 0 of a causal model) are left out: their whole
// weight lands there by construction and would count as a sink that no head chose.

import { boolean, typeError } from '../argument-checks.js';
import { describe } from '../errors.js';
import { badWeight, checkAttentionShape } from './rollout.js';

/**
 * @param {Float32Array} attention [layers, heads, N, N], as Model.run() returns it
 * @param {{ layers: number, heads: number, n: number }} shape
 * @param {{ causal?: boolean, bos?: boolean[] }} [options] causal (default true): row i sees
 *   keys 0..i only; bos: true per position holding the BOS/[CLS] token (none by default)
 * @returns {{ first: Float32Array, bos: Float32Array | null, rows: number }} first and bos
 *   [layers, heads], each the mean share over `rows` rows (null: no BOS/[CLS] in the text);
 *   with no row to average (one token of a causal model) rows is 0 and the shares are empty
 */
export function attentionSinks(attention, shape, options = {}) {
  const { attention: weights, layers, heads, n } = checkAttentionShape(attention, shape);
  const causal = boolean(options?.causal, 'causal', true);
  const bos = options?.bos ?? [];
  if (!Array.isArray(bos) || bos.length > n || bos.some((b) => typeof b !== 'boolean')) {
    throw typeError('bos', `must be up to ${n} booleans (one per token), got ${describe(bos)}`);
  }
  // The weights it reads, each checked: a NaN would turn a share into NaN.
  const weight = (at, k, i, j) => {
    const w = weights[at];
    if (!(w >= 0 && w <= 1)) throw badWeight(w, Math.floor(k / heads), k % heads, i, j);
    return w;
  };
  const bosColumns = [];
  bos.forEach((isBos, j) => isBos && bosColumns.push(j));
  const firstRow = causal ? 1 : 0;
  const rows = n - firstRow;
  const count = rows > 0 ? layers * heads : 0;
  const first = new Float32Array(count);
  const onBos = bosColumns.length > 0 ? new Float32Array(count) : null;
  for (let k = 0; k < count; k++) {
    const base = k * n * n;
    let sumFirst = 0;
    let sumBos = 0;
    for (let i = firstRow; i < n; i++) {
      const row = base + i * n;
      sumFirst += weight(row, k, i, 0);
      for (const j of bosColumns) sumBos += weight(row + j, k, i, j);
    }
    first[k] = sumFirst / rows;
    if (onBos) onBos[k] = sumBos / rows;
  }
  return { first, bos: onBos, rows: rows > 0 ? rows : 0 };
}

/**
 * attentionSinks' shares layer by layer, as a plot by layer shows them: every head's share on
 * the first token and the layer's mean, and the same on the BOS/[CLS] where that is a different
 * reading: the text has the token somewhere other than (or besides) the first position. When
 * the BOS is the first token and only there, the two shares are the same numbers and `bos` is
 * null.
 * @param {{ first: Float32Array, bos: Float32Array | null }} sinks
 * @param {{ layers: number, heads: number }} shape
 * @returns {{ bosApart: boolean, layers: { first: number[], firstMean: number,
 *   bos: number[] | null, bosMean: number | null }[] }}
 */
export function sinksByLayer({ first, bos }, { layers, heads }) {
  const bosApart = Boolean(bos) && bos.some((share, k) => share !== first[k]);
  const mean = (list) => list.reduce((a, b) => a + b, 0) / list.length;
  const rows = [];
  for (let l = 0; l < layers; l++) {
    const firstShares = Array.from(first.subarray(l * heads, (l + 1) * heads));
    const bosShares = bosApart ? Array.from(bos.subarray(l * heads, (l + 1) * heads)) : null;
    rows.push({
      first: firstShares,
      firstMean: mean(firstShares),
      bos: bosShares,
      bosMean: bosShares ? mean(bosShares) : null,
    });
  }
  return { bosApart, layers: rows };
}
