// WebGPU (SwiftShader) against wasm for the options of modern attention: grouped-query and
// multi-query heads (kvHeads); queryOffset, bias, ALiBi, softcap, lsh and topK with the masks,
// scores and temperature; on both strategies, head groups split by the binding limit, and
// multiHead; what still runs on wasm says why. Small problems: SwiftShader compiles each kernel
// in seconds.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { additiveWeights, assertClose, tensor } from '../support/helpers.js';
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

// The logit terms over 3 heads (ALiBi's slopes for a count that is no power of two), 7 queries
// after 12 past keys: [name, { heads, kvHeads, nq, nk }, options].
const TERMS = { heads: 3, kvHeads: 1, nq: 7, nk: 19 };
const OFFSET = TERMS.nk - TERMS.nq;
const biasOf = (heads, seed) => hideEvery(5, tensor(heads * TERMS.nq * TERMS.nk, seed, 2));
const TERM_CASES = [
  ['queryOffset, causal window', TERMS, { queryOffset: OFFSET, causal: true, window: 4 }],
  [
    'queryOffset, strided sparse with global tokens, dilated window',
    TERMS,
    {
      queryOffset: 5,
      sparse: { pattern: 'strided', stride: 3 },
      globalTokens: [2, 14],
      window: { before: 2, after: 3, dilation: 2 },
    },
  ],
  [
    'bias per head with hidden keys, key padding, temperature',
    { ...TERMS, kvHeads: 3 },
    { bias: biasOf(3, 60), keyLengths: [19, 4, 0], temperature: 0.7 },
  ],
  [
    'bias over every head, cosine, causal after past keys',
    TERMS,
    { bias: biasOf(1, 61), score: 'cosine', causal: true, queryOffset: OFFSET },
  ],
  ['alibi, causal after past keys', TERMS, { alibi: true, causal: true, queryOffset: OFFSET }],
  [
    'alibiSlopes, fixed sparse, custom mask',
    TERMS,
    {
      alibiSlopes: new Float32Array([0.5, -0.25, 2]),
      sparse: { pattern: 'fixed', stride: 4, summary: 2 },
      mask: Uint8Array.from({ length: TERMS.nq * TERMS.nk }, (_, c) => (c % 3 ? 1 : 0)),
    },
  ],
  [
    'softcap with bias and alibi, dot, temperature',
    TERMS,
    { softcap: 0.5, bias: biasOf(1, 62), alibi: true, score: 'dot', temperature: 2 },
  ],
  [
    'softcap, additive',
    { ...TERMS, kvHeads: 3 },
    { softcap: 1.5, score: 'additive', additive: additiveWeights(3, 6, D, 63, 0.8) },
  ],
  ['lsh, two rounds, causal', TERMS, { lsh: { buckets: 4, rounds: 2, seed: 9 }, causal: true }],
  [
    'lsh with global tokens and alibi, grouped-query',
    { ...TERMS, kvHeads: 3 },
    { lsh: { buckets: 6, seed: 3 }, globalTokens: [1, 11], alibi: true, queryOffset: 3 },
  ],
  [
    'topK with key padding, causal after past keys',
    { ...TERMS, kvHeads: 3 },
    { topK: 4, keyLengths: [19, 3, 0], causal: true, queryOffset: OFFSET },
  ],
  ['topK with softcap and bias', TERMS, { topK: 2, softcap: 1, bias: biasOf(1, 65) }],
  [
    'a bias hiding every key of some rows gives zeros',
    TERMS,
    { bias: hideRows(tensor(TERMS.nq * TERMS.nk, 64), [0, 4]), causal: true },
  ],
];

function hideEvery(step, values) {
  for (let i = 0; i < values.length; i += step) values[i] = -Infinity;
  return values;
}

function hideRows(values, rows) {
  for (const row of rows) values.fill(-Infinity, row * TERMS.nk, (row + 1) * TERMS.nk);
  return values;
}

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
  for (const [name, shape, options] of [...CASES, ...TERM_CASES]) {
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
    // group, each uploading only the K/V head it reads (and, with a bias per head, its bias).
    const small = await openGpuAttention({ maxBufferBytes: 1024 });
    try {
      // 40 x 6 keys: a head's bias (960 bytes) fits a binding too.
      const bias = tensor(6 * 40 * 6, 31);
      for (const [nk, extra] of [
        [40, { causal: true, queryOffset: 2 }],
        [40, { window: 3, returnWeights: true }],
        [6, { bias, alibi: true, causal: true }],
        [6, { bias, softcap: 2, returnWeights: true }],
      ]) {
        const tensors = inputsFor({ heads: 6, kvHeads: 2, nq: 40, nk }, 30);
        const call = { heads: 6, kvHeads: 2, headDim: D, valueDim: DV, ...extra };
        const r = await small.attention(...tensors, call);
        assert.equal(r.stats.backend, 'webgpu', r.stats.fallbackReason);
        assertSameResults(r, await wasm.attention(...tensors, call), Object.keys(extra).join(' '));
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
    const bias = tensor(11 * 11, 56);
    for (const extra of [
      { causal: true, returnProjections: true },
      { returnWeights: true, bias, softcap: 3, topK: 4 },
      { alibi: true, causal: true, window: 2, queryOffset: 4 },
    ]) {
      const options = { heads, kvHeads, headDim: D, valueDim: DV, ...extra };
      const r = await gpu.multiHead(x, w, options);
      assert.equal(r.stats.backend, 'webgpu', r.stats.fallbackReason);
      assertSameResults(r, await wasm.multiHead(x, w, options), Object.keys(extra).join(' '));
    }
  });

  it('topK keeps the lower keys among equal logits', async () => {
    // Keys repeat three vectors: a row's logits tie in threes.
    const [q, k0, v] = inputsFor(TERMS, 66);
    const k = k0.map((_, e) => k0[e % (3 * D)]);
    const options = { heads: 3, kvHeads: 1, headDim: D, valueDim: DV, topK: 5 };
    const r = await gpu.attention(q, k, v, { ...options, returnWeights: true });
    assert.equal(r.stats.backend, 'webgpu', r.stats.fallbackReason);
    const expected = await wasm.attention(q, k, v, { ...options, returnWeights: true });
    assertSameResults(r, expected, 'ties');
    const kept = r.weights.subarray(0, TERMS.nk).filter((w) => w > 0).length;
    assert.equal(kept, 5);
  });

  it('what runs on wasm says why: topK streamed, a huge bias, lsh in multiHead', async () => {
    const tensors = inputsFor(TERMS, 70);
    const options = { heads: 3, kvHeads: 1, headDim: D, valueDim: DV, topK: 3 };
    const streamed = { ...options, strategy: 'streaming' };
    const r = await gpu.attention(...tensors, streamed);
    assert.match(r.stats.fallbackReason, /topK on WebGPU .* materialized strategy only/);
    assertClose(r.output, (await wasm.attention(...tensors, streamed)).output, 'topK', 0);

    // A finite bias beyond FLT_MAX / 4 (the GPU's hidden-key sentinel lies there).
    const bias = biasOf(1, 67);
    bias[3] = -1e38;
    const huge = { ...options, topK: undefined, bias, temperature: 16 };
    const b = await gpu.attention(...tensors, huge);
    assert.match(b.stats.fallbackReason, /overflow/);
    assertClose(b.output, (await wasm.attention(...tensors, huge)).output, 'huge bias', 0);

    const w = {
      wQuery: tensor(6 * 2 * D, 71),
      wKey: tensor(6 * 2 * D, 72),
      wValue: tensor(6 * 2 * DV, 73),
      wOut: tensor(2 * DV * 6, 74),
    };
    const x = tensor(9 * 6, 75);
    const hashed = { heads: 2, headDim: D, valueDim: DV, lsh: { buckets: 4 } };
    const m = await gpu.multiHead(x, w, hashed);
    assert.match(m.stats.fallbackReason, /lsh hashes the projected queries and keys on the CPU/);
    assertClose(m.output, (await wasm.multiHead(x, w, hashed)).output, 'multiHead lsh', 0);
  });
});
