// Attention written directly in JavaScript, as someone without a library would: loops over heads,
// queries and the keys each query may see (a mask costs nothing but its loop bounds), float64
// arithmetic on Float32Array inputs, one float32 rounding at the end.

import { DEPTH, HEADS, visibleKeys } from '../core/workload.js';

function attention({ n, q, k, v }, mask) {
  const out = new Float32Array(HEADS * n * DEPTH);
  const weights = new Float64Array(n);
  const row = new Float64Array(DEPTH);
  const scale = 1 / Math.sqrt(DEPTH);
  for (let h = 0; h < HEADS; h++) {
    const base = h * n * DEPTH;
    for (let i = 0; i < n; i++) {
      const [start, end] = visibleKeys(mask, i, n);
      const qi = base + i * DEPTH;
      let max = -Infinity;
      for (let j = start; j < end; j++) {
        const kj = base + j * DEPTH;
        let dot = 0;
        for (let d = 0; d < DEPTH; d++) dot += q[qi + d] * k[kj + d];
        weights[j] = dot * scale;
        if (weights[j] > max) max = weights[j];
      }
      let sum = 0;
      row.fill(0);
      for (let j = start; j < end; j++) {
        const p = Math.exp(weights[j] - max);
        sum += p;
        const vj = base + j * DEPTH;
        for (let d = 0; d < DEPTH; d++) row[d] += p * v[vj + d];
      }
      for (let d = 0; d < DEPTH; d++) out[qi + d] = row[d] / sum;
    }
  }
  return out;
}

export async function open({ threads }) {
  if (threads !== 1) return { unavailable: 'plain JavaScript runs on one thread' };
  return {
    version: '',
    detail: 'loops in JavaScript',
    prepare(inputs, mask) {
      return { call: async () => attention(inputs, mask), headMajor: (output) => output };
    },
  };
}
