// WebGPU (SwiftShader) against wasm for the options of modern attention: grouped-query and
// multi-query heads (kvHeads), on both strategies, every score kind, head groups split by the
// binding limit, and multiHead. Small problems: SwiftShader compiles each kernel in seconds.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { additiveWeights, tensor } from '../support/helpers.js';
import { assertSameResults, openGpuAttention, openWasmAttention } from './support.js';

const D = 3;
const DV = 5;

// [name, { heads, kvHeads, nq, nk }, options]
const CASES = [
  ['grouped-query, two query heads per K/V head', { heads: 4, kvHeads: 2, nq: 19, nk: 23 }, {}],
  ['multi-query, causal', { heads: 3, kvHeads: 1, nq: 21, nk: 21 }, { causal: true }],
  ['grouped-query, cosine', { heads: 4, kvHeads: 2, nq: 9, nk: 13 }, { score: 'cosine' }],
  [
    'grouped-query, additive (keys projected per query head)',
    { heads: 4, kvHeads: 2, nq: 9, nk: 13 },
    { score: 'additive', additive: additiveWeights(4, 5, D, 40, 0.8) },
  ],
];

function inputsFor({ heads, kvHeads, nq, nk }, seed = 11) {
  return [
    tensor(heads * nq * D, seed, 1.5),
    tensor(kvHeads * nk * D, seed + 1, 1.5),
    tensor(kvHeads * nk * DV, seed + 2),
  ];
}

let wasm;
let gpu;
before(async () => {
  wasm = await openWasmAttention();
  gpu = await openGpuAttention();
});
after(() => {
  gpu.dispose();
  wasm.dispose();
});

describe('modern attention on WebGPU equals wasm', () => {
  for (const [name, shape, options] of CASES) {
    it(name, async () => {
      const tensors = inputsFor(shape);
      const common = { heads: shape.heads, kvHeads: shape.kvHeads, headDim: D, valueDim: DV };
      for (const extra of [{}, { returnWeights: true, returnScores: true }]) {
        const call = { ...common, ...options, ...extra };
        const r = await gpu.attention(...tensors, call);
        assert.equal(r.stats.backend, 'webgpu', r.stats.fallbackReason);
        assertSameResults(r, await wasm.attention(...tensors, call), r.stats.strategy);
      }
    });
  }

  it('a KV cache on a WebGPU instance runs on wasm, in its wasm memory', async () => {
    const [q, k, v] = inputsFor({ heads: 4, kvHeads: 2, nq: 3, nk: 11 });
    const cache = gpu.kvCache({ heads: 2, queryHeads: 4, headDim: D, valueDim: DV, capacity: 16 });
    cache.append(k, v);
    const r = await cache.attend(q, { causal: true });
    assert.match(r.stats.backend, /^wasm-/);
    const call = { heads: 4, kvHeads: 2, headDim: D, valueDim: DV, causal: true, queryOffset: 8 };
    assert.deepEqual(r.output, (await wasm.attention(q, k, v, call)).output);
    cache.dispose();
  });

  it('grouped-query heads split into groups by the binding limit', async () => {
    // 40 x 5 floats per head tensor (800 bytes) under a 1024-byte binding: one query head per
    // group, each uploading only the K/V head it reads.
    const small = await openGpuAttention({ maxBufferBytes: 1024 });
    try {
      const shape = { heads: 6, kvHeads: 2, nq: 40, nk: 40 };
      const tensors = inputsFor(shape, 30);
      for (const extra of [{ causal: true }, { window: 3, returnWeights: true }]) {
        const call = { heads: 6, kvHeads: 2, headDim: D, valueDim: DV, ...extra };
        const r = await small.attention(...tensors, call);
        assert.equal(r.stats.backend, 'webgpu', r.stats.fallbackReason);
        assertSameResults(r, await wasm.attention(...tensors, call), JSON.stringify(extra));
      }
    } finally {
      small.dispose();
    }
  });

  it('multiHead with kvHeads', async () => {
    const [heads, kvHeads, modelDim] = [4, 2, 6];
    const w = {
      wQuery: tensor(modelDim * heads * D, 50, 0.5),
      wKey: tensor(modelDim * kvHeads * D, 51, 0.5),
      wValue: tensor(modelDim * kvHeads * DV, 52, 0.5),
      wOut: tensor(heads * DV * modelDim, 53, 0.5),
      bKey: tensor(kvHeads * D, 54, 0.2),
    };
    const x = tensor(11 * modelDim, 55);
    for (const extra of [{ causal: true, returnProjections: true }, { returnWeights: true }]) {
      const options = { heads, kvHeads, headDim: D, valueDim: DV, ...extra };
      const r = await gpu.multiHead(x, w, options);
      assert.equal(r.stats.backend, 'webgpu', r.stats.fallbackReason);
      assertSameResults(r, await wasm.multiHead(x, w, options), JSON.stringify(extra));
    }
  });
});
