// Attention rollout (Abnar and Zuidema 2020, "Quantifying Attention Flow in Transformers"): how
// much each input token reaches an output position through every layer, if information mixes
// linearly. Each layer's attention is averaged over its heads, the residual connection is added
// as the identity and the rows are renormalised, Ã = (A + I) / rowsum(A + I), which is
// 0.5 A + 0.5 I when A's rows sum to 1 (as the paper's code writes it: a row that attends to
// nothing, every key masked, keeps only the residual). Rollout is the product Ã_L ... Ã_1: row p
// says how much output position p of the last layer owes to each input token.
// Pure: matrices in, numbers out; the page, the CLI and Model.run({ rollout }) share it.

import { describe } from '../errors.js';
import { integer, rangeError, shapeError, typedArray, typeError } from '../argument-checks.js';

/**
 * Rows times layers times N^2 multiply-adds a rollout may cost (about a second in JavaScript):
 * all N rows of a 12-layer model fit up to N = 448; past it, ask for the rows you need.
 */
export const MAX_ROLLOUT_WORK = 2 ** 30;

/**
 * Checks attention [layers, heads, N, N] against its shape.
 * @returns {{ attention: Float32Array, layers: number, heads: number, n: number }}
 */
export function checkAttentionShape(attention, shape, name = 'attention') {
  const weights = typedArray(attention, name, Float32Array);
  if (shape === null || typeof shape !== 'object') {
    throw typeError('shape', `must be { layers, heads, n }, got ${describe(shape)}`);
  }
  const layers = integer(shape.layers, 'shape.layers', 1, 2 ** 16);
  const heads = integer(shape.heads, 'shape.heads', 1, 2 ** 16);
  const n = integer(shape.n, 'shape.n', 1, 2 ** 16);
  if (weights.length !== layers * heads * n * n) {
    throw shapeError(
      name,
      `has ${weights.length} weights; [layers ${layers}, heads ${heads}, N ${n}, N] needs ` +
        `${layers * heads * n * n}`,
    );
  }
  return { attention: weights, layers, heads, n };
}

/**
 * One layer's head-averaged attention with the residual mixed in, Ã = (A + I) / rowsum(A + I),
 * in float64 (the products of many layers would lose float32's digits). Every weight must be in
 * [0, 1] (a RangeError names the first that is not). `into`: a Float64Array [N, N] to reuse.
 * @returns {Float64Array} [N, N]
 */
export function residualMixed(attention, layer, heads, n, into = null) {
  const mixed = into ? into.fill(0) : new Float64Array(n * n);
  const size = n * n;
  for (let h = 0; h < heads; h++) {
    const base = (layer * heads + h) * size;
    for (let k = 0; k < size; k++) {
      const w = attention[base + k];
      // A NaN or a negative weight would make every later product (and flow's capacities)
      // meaningless: refuse it by place.
      if (!(w >= 0 && w <= 1)) throw badWeight(w, layer, h, Math.floor(k / n), k % n);
      mixed[k] += w;
    }
  }
  for (let i = 0; i < n; i++) {
    const row = i * n;
    mixed[row + i] += heads; // the identity, still summed over heads like A
    let sum = 0;
    for (let j = 0; j < n; j++) sum += mixed[row + j];
    for (let j = 0; j < n; j++) mixed[row + j] /= sum;
  }
  return mixed;
}

/**
 * Attention rollout of the chosen output positions over the input tokens.
 * @param {Float32Array} attention [layers, heads, N, N], as Model.run() returns it
 * @param {{ layers: number, heads: number, n: number }} shape
 * @param {{ rows?: number[] }} [options] output positions (default all N, in order)
 * @returns {Float32Array} [rows, N]: row r is the rollout of position rows[r]; each sums to 1
 */
export function attentionRollout(attention, shape, options = {}) {
  const { attention: weights, layers, heads, n } = checkAttentionShape(attention, shape);
  const rows = checkRows(options?.rows, n);
  checkRolloutWork(rows.length, layers, n, 'rows');
  // One layer's Ã at a time, applied to every row's vector, last layer first: a row of
  // Ã_L ... Ã_1 is e_p Ã_L ... Ã_1, N^2 per layer and row instead of a matrix product's N^3,
  // and N^2 of memory instead of the layers' L N^2 (a camera runs this every frame).
  let current = new Float64Array(rows.length * n);
  let next = new Float64Array(rows.length * n);
  rows.forEach((position, r) => (current[r * n + position] = 1));
  const mixed = new Float64Array(n * n);
  for (let l = layers - 1; l >= 0; l--) {
    residualMixed(weights, l, heads, n, mixed);
    next.fill(0);
    for (let r = 0; r < rows.length; r++) {
      const at = r * n;
      for (let i = 0; i < n; i++) {
        const share = current[at + i];
        if (share === 0) continue;
        const row = i * n;
        for (let j = 0; j < n; j++) next[at + j] += share * mixed[row + j];
      }
    }
    [current, next] = [next, current];
  }
  return Float32Array.from(current);
}

/** Refuses, naming `name`, a rollout of `rows` rows that would cost more than MAX_ROLLOUT_WORK. */
export function checkRolloutWork(rows, layers, n, name) {
  if (rows * layers * n * n > MAX_ROLLOUT_WORK) {
    throw rangeError(
      name,
      `${rows} rows of ${layers} layers over ${n} tokens cost ${rows * layers * n * n} ` +
        `multiply-adds, more than MAX_ROLLOUT_WORK (${MAX_ROLLOUT_WORK}); ask for fewer rows`,
    );
  }
}

/** The error for a weight that is no probability, naming where it is. */
export function badWeight(w, layer, head, i, j) {
  return rangeError('attention', `[${layer}][${head}][${i}][${j}] is ${w}, not a weight in [0, 1]`);
}

/** `rows`: undefined (every position) or a non-empty array of positions in [0, N). */
export function checkRows(rows, n, name = 'rows') {
  if (rows === undefined) return Array.from({ length: n }, (_, i) => i);
  if (!Array.isArray(rows) || rows.length === 0) {
    throw typeError(name, `must be a non-empty array of positions, got ${describe(rows)}`);
  }
  return rows.map((position, i) => integer(position, `${name}[${i}]`, 0, n - 1));
}
