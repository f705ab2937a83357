// 10,000 calls leave wasm heap usage flat: every per-call allocation (JS copies and the core's
// scratch) is freed, on success and on every kind of error.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { openFlavours, tensor } from './support/helpers.js';

const {
  simd: { attn, backend },
} = await openFlavours();

const q = tensor(2 * 16 * 8, 1);
const mask = Uint8Array.from({ length: 16 * 16 }, (_, i) => i % 3 !== 0);
const w = {
  wQuery: tensor(16 * 16, 2),
  wKey: tensor(16 * 16, 3),
  wValue: tensor(16 * 16, 4),
  wOut: tensor(16 * 16, 5),
};
const huge = Float32Array.from(q, (x) => x * 1e30);

// One of each path: weights out, masks in, projections, JS-side error, C++-side error.
const CALLS = [
  () =>
    attn.attention(q, q, q, {
      heads: 2,
      headDim: 8,
      returnWeights: true,
      returnScores: true,
      mask,
      causal: true,
    }),
  () => attn.attention(q, q, q, { heads: 2, headDim: 8, window: 3, globalTokens: [0] }),
  () =>
    attn.multiHead(tensor(16, 6), w, {
      heads: 2,
      headDim: 8,
      returnWeights: true,
      returnProjections: true,
    }),
  () => attn.maskMatrix({ queryLength: 16, keyLength: 16, mask }),
  () => attn.attention(q, q, q, { heads: 2, headDim: 8, temperature: -1 }).catch((e) => e),
  () =>
    attn
      .attention(huge, huge, q, { heads: 2, headDim: 8, score: 'dot', returnWeights: true })
      .catch((e) => e),
];

it('10,000 calls leave heap usage and memory size unchanged', async () => {
  for (const call of CALLS) await call(); // warm-up: first-use allocations of the runtime
  const heapBefore = backend.heapBytesInUse();
  const memoryBefore = backend.module.HEAPU8.length;
  let errors = 0;
  for (let i = 0; i < 10000; i++) {
    if ((await CALLS[i % CALLS.length]()) instanceof Error) errors++;
  }
  assert.equal(errors, 2 * Math.floor(10000 / CALLS.length) + (10000 % CALLS.length > 4 ? 1 : 0));
  assert.equal(backend.heapBytesInUse(), heapBefore);
  assert.equal(backend.module.HEAPU8.length, memoryBefore);
});
