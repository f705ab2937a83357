// WebGPU (SwiftShader) against wasm: every mask, every score, temperature and scale, awkward
// shapes (N = 1, N = 67, D = 3, Nq != Nk), both strategies (the materialized one also returns
// weights and scores), and multiHead; with subgroup reductions and with the plain fallback.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { additiveWeights as weightsFor, random, tensor } from '../support/helpers.js';
import { assertSameResults, openGpuAttention, openWasmAttention } from './support.js';

const D = 3;
const DV = 5;

function flags(length, seed, density) {
  const next = random(seed);
  return Uint8Array.from({ length }, () => (next() * 0.5 + 0.5 < density ? 1 : 0));
}

// Larger projections than the default make tanh saturate for some pairs, as trained ones do.
const additiveWeights = (heads, hidden, headDim, seed) =>
  weightsFor(heads, hidden, headDim, seed, 0.8);

// A custom mask over 67 x 67 in which query 10 sees nothing.
const customMask = flags(67 * 67, 7, 0.6);
customMask.fill(0, 10 * 67, 11 * 67);

const SELF = { heads: 2, nq: 67, nk: 67 };

// [name, shape, options, { zeroQuery, headDim, valueDim }]
const CASES = [
  ['no mask', SELF, {}],
  ['causal', SELF, { causal: true }],
  ['window 5', SELF, { window: 5 }],
  ['window before 3, after 1, dilation 2', SELF, { window: { before: 3, after: 1, dilation: 2 } }],
  ['causal left window (Longformer)', SELF, { causal: true, window: { before: 4 } }],
  ['strided sparse', SELF, { sparse: { pattern: 'strided', stride: 4 } }],
  ['fixed sparse', SELF, { sparse: { pattern: 'fixed', stride: 8, summary: 2 } }],
  [
    'global tokens with a causal window',
    SELF,
    { causal: true, window: { before: 2 }, globalTokens: [0, 40, 66] },
  ],
  [
    'global tokens with strided sparse',
    SELF,
    { sparse: { pattern: 'strided', stride: 5 }, globalTokens: [3] },
  ],
  ['key lengths, one head all padding', SELF, { keyLengths: [50, 0] }],
  ['key valid flags', SELF, { keyValid: flags(67, 5, 0.7) }],
  ['custom mask with an empty row', SELF, { mask: customMask }],
  ['temperature 0.3 and scale 2', SELF, { temperature: 0.3, scale: 2 }],
  ['dot score, causal', SELF, { score: 'dot', causal: true }],
  ['cosine score with a zero query row', SELF, { score: 'cosine', window: 3 }, { zeroQuery: true }],
  [
    'additive score, causal',
    SELF,
    { score: 'additive', additive: additiveWeights(2, 5, D, 30), causal: true },
  ],
  [
    'additive score, temperature 2',
    SELF,
    { score: 'additive', additive: additiveWeights(2, 5, D, 33), temperature: 2 },
  ],
  ['one token (N = 1)', { heads: 2, nq: 1, nk: 1 }, {}],
  ['one token, causal, one head', { heads: 1, nq: 1, nk: 1 }, { causal: true }],
  [
    'more queries than keys (67 x 20)',
    { heads: 2, nq: 67, nk: 20 },
    { causal: true, window: { before: 30 } },
  ],
  [
    'fewer queries than keys (5 x 67)',
    { heads: 3, nq: 5, nk: 67 },
    { window: 2, globalTokens: [60] },
  ],
  ['wider heads (D = 20, Dv = 9)', SELF, { causal: true }, { headDim: 20, valueDim: 9 }],
];

function inputsFor(
  { heads, nq, nk },
  { zeroQuery = false, headDim = D, valueDim = DV } = {},
  seed = 11,
) {
  const q = tensor(heads * nq * headDim, seed, 1.5);
  if (zeroQuery) q.fill(0, 4 * headDim, 5 * headDim);
  return {
    q,
    k: tensor(heads * nk * headDim, seed + 1, 1.5),
    v: tensor(heads * nk * valueDim, seed + 2),
    headDim,
    valueDim,
  };
}

let wasm;
before(async () => {
  wasm = await openWasmAttention();
});
after(() => wasm.dispose());

for (const reductions of ['subgroups', 'plain']) {
  describe(`attention on WebGPU (${reductions} reductions) equals wasm`, () => {
    let gpu;
    before(async () => {
      gpu = await openGpuAttention({ subgroups: reductions === 'subgroups' });
    });
    after(() => gpu.dispose());

    for (const [name, shape, options, extra] of CASES) {
      // The plain reductions are the same code for every score and depth: skip the cases that
      // would only compile more kernel variants on SwiftShader (seconds each).
      if (reductions === 'plain' && (extra?.headDim || options.score === 'additive')) continue;
      it(name, async () => {
        const { q, k, v, headDim, valueDim } = inputsFor(shape, extra);
        const common = { heads: shape.heads, headDim, valueDim, ...options };

        const streamed = await gpu.attention(q, k, v, common);
        assert.equal(streamed.stats.backend, 'webgpu', streamed.stats.fallbackReason);
        assert.equal(streamed.stats.strategy, 'streaming');
        assert.equal(streamed.stats.gpu.subgroups, reductions === 'subgroups');
        assertSameResults(streamed, await wasm.attention(q, k, v, common), 'streaming');

        const withMatrices = { ...common, returnWeights: true, returnScores: true };
        const materialized = await gpu.attention(q, k, v, withMatrices);
        assert.equal(materialized.stats.strategy, 'materialized');
        assertSameResults(
          materialized,
          await wasm.attention(q, k, v, withMatrices),
          'materialized',
        );
      });
    }

    it('a head that sees no key gives zero weights and a zero output, never NaN', async () => {
      const { q, k, v } = inputsFor(SELF);
      const r = await gpu.attention(q, k, v, {
        heads: 2,
        headDim: D,
        valueDim: DV,
        keyLengths: [67, 0],
        returnWeights: true,
      });
      const head1 = (array, width) => array.subarray(67 * width, 2 * 67 * width);
      assert.ok(head1(r.output, DV).every((x) => x === 0));
      assert.ok(head1(r.weights, 67).every((x) => x === 0));
      const streamed = await gpu.attention(q, k, v, {
        heads: 2,
        headDim: D,
        valueDim: DV,
        keyLengths: [67, 0],
      });
      assert.ok(head1(streamed.output, DV).every((x) => x === 0));
    });
  });
}

describe('multiHead on WebGPU equals wasm', () => {
  let gpu;
  before(async () => {
    gpu = await openGpuAttention();
  });
  after(() => gpu.dispose());

  const dims = { heads: 2, headDim: D, valueDim: DV, modelDim: 7, keyModelDim: 6, outDim: 4 };
  const weights = {
    wQuery: tensor(7 * 2 * D, 60, 0.5),
    wKey: tensor(6 * 2 * D, 61, 0.5),
    wValue: tensor(6 * 2 * DV, 62, 0.5),
    wOut: tensor(2 * DV * 4, 63, 0.5),
    bQuery: tensor(2 * D, 64, 0.2),
    bKey: tensor(2 * D, 65, 0.2),
    bValue: tensor(2 * DV, 66, 0.2),
    bOut: tensor(4, 67, 0.2),
  };
  const selfWeights = {
    ...weights,
    wKey: tensor(7 * 2 * D, 68, 0.5),
    wValue: tensor(7 * 2 * DV, 69, 0.5),
  };
  const x = tensor(9 * 7, 70);
  const source = tensor(13 * 6, 71);

  const CROSS = { ...dims, source };
  const SELF_ATTENTION = { heads: 2, headDim: D, valueDim: DV, outDim: 4 };
  for (const [name, w, options] of [
    [
      'self-attention with every extra returned',
      selfWeights,
      {
        ...SELF_ATTENTION,
        causal: true,
        returnWeights: true,
        returnScores: true,
        returnProjections: true,
      },
    ],
    ['self-attention, streaming', selfWeights, { ...SELF_ATTENTION, window: 2 }],
    [
      'cross-attention with masks',
      weights,
      { ...CROSS, keyValid: flags(13, 72, 0.7), returnWeights: true, returnProjections: true },
    ],
    [
      'cross-attention, additive score',
      weights,
      { ...CROSS, score: 'additive', additive: additiveWeights(2, 5, D, 73), returnWeights: true },
    ],
    [
      'cross-attention, cosine score, streaming',
      weights,
      { ...CROSS, score: 'cosine', temperature: 0.5 },
    ],
  ]) {
    it(name, async () => {
      const r = await gpu.multiHead(x, w, options);
      assert.equal(r.stats.backend, 'webgpu', r.stats.fallbackReason);
      assertSameResults(r, await wasm.multiHead(x, w, options), name);
    });
  }
});
