// The per-head summaries the views show beside the weights: each query row's entropy and each
// key's mean weight (a key every query favours is a column stripe: a sink, not a match for any
// one query). The untrained layer's results (compute-core.js) and a real model's layer
// (model/view.js) are summarised alike.
import { entropy } from '../src/row-stats.js';

// Entropy (bits) of each query row of a row-major [rows, cols] weight matrix.
function rowEntropies(weights, rows, cols) {
  const out = new Float32Array(rows);
  for (let r = 0; r < rows; r++) out[r] = entropy(weights.subarray(r * cols, (r + 1) * cols));
  return out;
}

// The mean weight each key gets from the queries that may see it (NaN for a key no query sees).
function columnMeans(weights, mask, rows, cols) {
  const sums = new Float64Array(cols);
  const counts = new Uint32Array(cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      if (!mask[r * cols + c]) continue;
      sums[c] += weights[r * cols + c];
      counts[c] += 1;
    }
  }
  return Float32Array.from(sums, (sum, c) => (counts[c] ? sum / counts[c] : Number.NaN));
}

/** heads: [{ weights, scores? }] sharing one [rows, cols] mask. */
export function headSummaries(heads, mask, rows, cols) {
  return heads.map((head) => ({
    weights: head.weights,
    scores: head.scores,
    entropy: rowEntropies(head.weights, rows, cols),
    columnMeans: columnMeans(head.weights, mask, rows, cols),
  }));
}
