// The correctness check every library passes before it is timed: its output against attention
// computed here in float64, row by row, straight from the definition.
//
// At N <= FULL_CHECK_MAX_N every row of every head is compared; above, a fixed sample of rows
// (first, last and seeded picks in each head) plus a scan of the whole output for NaN/Infinity.

import { mulberry32 } from '../../../web/scripts/random.js';
import { DEPTH, HEADS, visibleKeys } from './workload.js';

export const FULL_CHECK_MAX_N = 512;
/** Largest |library - reference| accepted, on outputs of magnitude <= 1 (V is in [-1, 1)). */
export const TOLERANCE = 2e-4;
const SAMPLED_ROWS_PER_HEAD = 8;

/** softmax(q_i . K^T / sqrt(D) over visible keys) . V for one query row, in float64. */
export function referenceRow({ n, q, k, v }, mask, head, row) {
  const scale = 1 / Math.sqrt(DEPTH);
  const [start, end] = visibleKeys(mask, row, n);
  const query = (head * n + row) * DEPTH;
  const logits = new Float64Array(end - start);
  let max = -Infinity;
  for (let j = start; j < end; j++) {
    const key = (head * n + j) * DEPTH;
    let dot = 0;
    for (let d = 0; d < DEPTH; d++) dot += q[query + d] * k[key + d];
    logits[j - start] = dot * scale;
    if (logits[j - start] > max) max = logits[j - start];
  }
  const out = new Float64Array(DEPTH);
  let sum = 0;
  for (let j = start; j < end; j++) {
    const p = Math.exp(logits[j - start] - max);
    sum += p;
    const value = (head * n + j) * DEPTH;
    for (let d = 0; d < DEPTH; d++) out[d] += p * v[value + d];
  }
  for (let d = 0; d < DEPTH; d++) out[d] /= sum;
  return out;
}

/** The (head, row) pairs compared for a sequence length n. */
export function rowsToCheck(n) {
  const rows = [];
  if (n <= FULL_CHECK_MAX_N) {
    for (let h = 0; h < HEADS; h++) for (let i = 0; i < n; i++) rows.push([h, i]);
    return rows;
  }
  const next = mulberry32(12345);
  for (let h = 0; h < HEADS; h++) {
    const picks = new Set([0, n - 1]);
    while (picks.size < SAMPLED_ROWS_PER_HEAD) picks.add(next() % n);
    for (const i of [...picks].sort((a, b) => a - b)) rows.push([h, i]);
  }
  return rows;
}

/**
 * Compares a head-major [H, N, D] output with the reference.
 * @returns {{ passed: boolean, rowsChecked: number, maxAbsError: number, worst: string,
 *   nonFinite: number, checksum: number }}
 */
export function checkOutput(output, inputs, mask) {
  const { n } = inputs;
  const result = {
    passed: false,
    rowsChecked: 0,
    maxAbsError: 0,
    worst: '',
    nonFinite: 0,
    checksum: 0,
  };
  if (!(output instanceof Float32Array) || output.length !== HEADS * n * DEPTH) {
    result.worst = `expected a Float32Array of ${HEADS * n * DEPTH} values, got ${output?.constructor?.name} of ${output?.length}`;
    return result;
  }
  for (let i = 0; i < output.length; i++) {
    const x = output[i];
    if (Number.isFinite(x)) result.checksum += x;
    else result.nonFinite++;
  }
  for (const [h, i] of rowsToCheck(n)) {
    const expected = referenceRow(inputs, mask, h, i);
    const offset = (h * n + i) * DEPTH;
    for (let d = 0; d < DEPTH; d++) {
      const error = Math.abs(output[offset + d] - expected[d]);
      if (!(error <= result.maxAbsError)) {
        result.maxAbsError = Number.isNaN(error) ? Infinity : error;
        result.worst = `head ${h} row ${i} column ${d}: ${output[offset + d]} vs ${expected[d]}`;
      }
    }
    result.rowsChecked++;
  }
  result.passed = result.nonFinite === 0 && result.maxAbsError <= TOLERANCE;
  return result;
}
