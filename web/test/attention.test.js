// attn.attention() against the double-precision reference: every score function, mask,
// temperature, scale, strategy, cross-attention shapes and both wasm flavours.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  additiveWeights,
  assertClose,
  customMask,
  MASK_CASES,
  openFlavours,
  tensor,
} from './support/helpers.js';
import { referenceAttention } from './support/reference.js';

const flavours = await openFlavours();

// [name, { heads, nq, nk, headDim, valueDim }, options]: the shared cases, then this file's own
const CASES = [
  ...MASK_CASES,
  [
    'additive',
    { heads: 2, nq: 6, nk: 6, headDim: 4 },
    { score: 'additive', additive: additiveWeights(2, 5, 4, 70) },
  ],
  ['scale on cosine', { heads: 1, nq: 5, nk: 5, headDim: 8 }, { score: 'cosine', scale: 4 }],
  [
    'causal left window',
    { heads: 1, nq: 10, nk: 10, headDim: 4 },
    { causal: true, window: { before: 3 } },
  ],
  [
    'global tokens with a window',
    { heads: 1, nq: 11, nk: 11, headDim: 4 },
    { window: 1, globalTokens: [0, 6] },
  ],
  ['key lengths per head', { heads: 3, nq: 6, nk: 6, headDim: 4 }, { keyLengths: [6, 3, 0] }],
  [
    'custom mask as booleans with causal',
    { heads: 1, nq: 5, nk: 5, headDim: 4 },
    { causal: true, mask: Array.from(customMask(5, 5, 9), (x) => x === 1) },
  ],
  [
    'cross-attention Nq > Nk with window and key padding',
    { heads: 2, nq: 9, nk: 4, headDim: 4 },
    { window: { before: 1, after: 2 }, keyValid: new Uint8Array([1, 1, 0, 1]) },
  ],
  [
    'everything at once',
    { heads: 2, nq: 10, nk: 10, headDim: 4 },
    {
      score: 'dot',
      temperature: 2,
      causal: true,
      window: { before: 4, dilation: 2 },
      globalTokens: [1],
      keyLengths: [10, 8],
      mask: customMask(10, 10, 11),
    },
  ],
  [
    'several tiles (Nq 70, Nk 130)',
    { heads: 2, nq: 70, nk: 130, headDim: 8 },
    { causal: true, window: { before: 40, after: 5 } },
  ],
];

for (const [flavour, { attn, backend }] of Object.entries(flavours)) {
  describe(`attention on wasm-${flavour}`, () => {
    for (const [name, s, options] of CASES) {
      it(name, async () => {
        const valueDim = s.valueDim ?? s.headDim;
        const q = tensor(s.heads * s.nq * s.headDim, 1);
        const k = tensor(s.heads * s.nk * s.headDim, 2);
        const v = tensor(s.heads * s.nk * valueDim, 3);
        const shape = { heads: s.heads, headDim: s.headDim, valueDim };
        const expected = referenceAttention(q, k, v, { ...shape, ...options });

        const full = await attn.attention(q, k, v, {
          ...shape,
          ...options,
          returnWeights: true,
          returnScores: true,
        });
        assertClose(full.weights, expected.weights, 'weights');
        assertClose(full.scores, expected.scores, 'scores');
        assertClose(full.output, expected.output, 'output');
        assert.equal(full.stats.strategy, 'materialized');

        const streamed = await attn.attention(q, k, v, {
          ...shape,
          ...options,
          strategy: 'streaming',
        });
        assertClose(streamed.output, expected.output, 'streaming output');
        assert.equal(streamed.stats.strategy, 'streaming');
        assert.equal(streamed.weights, undefined);
        assert.equal(streamed.scores, undefined);
      });
    }

    it('a query that sees no key gets zero weights and a zero output row', async () => {
      const mask = new Uint8Array(4 * 4).fill(1);
      mask.fill(0, 4, 8); // query 1 sees nothing
      const x = tensor(4 * 4, 12);
      const r = await attn.attention(x, x, x, { heads: 1, headDim: 4, mask, returnWeights: true });
      assert.deepEqual([...r.weights.subarray(4, 8)], [0, 0, 0, 0]);
      assert.deepEqual([...r.output.subarray(4, 8)], [0, 0, 0, 0]);
    });

    it('streaming skips the tiles a causal window removes and reports them', async () => {
      const n = 256;
      const x = tensor(n * 16, 13);
      const { stats } = await attn.attention(x, x, x, {
        heads: 1,
        headDim: 16,
        causal: true,
        window: { before: 16 },
      });
      assert.equal(stats.strategy, 'streaming');
      assert.ok(stats.tilesVisited < stats.tilesTotal, JSON.stringify(stats));
      assert.equal(stats.backend, `wasm-${flavour}`);
      assert.ok(stats.ms >= 0 && stats.scratchBytes > 0);
    });

    it('auto picks materialized only when weights or scores are asked for', async () => {
      const x = tensor(2 * 5 * 4, 14);
      assert.equal(
        (await attn.attention(x, x, x, { heads: 2, headDim: 4 })).stats.strategy,
        'streaming',
      );
      assert.equal(
        (await attn.attention(x, x, x, { heads: 2, headDim: 4, returnScores: true })).stats
          .strategy,
        'materialized',
      );
    });

    it('returns copies that later calls do not change', async () => {
      const x = tensor(2 * 5 * 4, 15);
      const first = await attn.attention(x, x, x, { heads: 2, headDim: 4, returnWeights: true });
      const snapshot = Float32Array.from(first.output);
      await attn.attention(tensor(2 * 5 * 4, 16), x, x, {
        heads: 2,
        headDim: 4,
        returnWeights: true,
      });
      assert.deepEqual(first.output, snapshot);
      assert.notEqual(
        first.output.buffer,
        backend.module.HEAPF32.buffer,
        'not a view into wasm memory',
      );
    });
  });
}

describe('the SIMD and scalar builds agree', () => {
  const { simd, scalar } = flavours;
  for (const [name, s, options] of CASES) {
    it(name, async () => {
      const valueDim = s.valueDim ?? s.headDim;
      const q = tensor(s.heads * s.nq * s.headDim, 21, 2);
      const k = tensor(s.heads * s.nk * s.headDim, 22, 2);
      const v = tensor(s.heads * s.nk * valueDim, 23);
      const opts = {
        heads: s.heads,
        headDim: s.headDim,
        valueDim,
        ...options,
        returnWeights: true,
        returnScores: true,
      };
      const a = await simd.attn.attention(q, k, v, opts);
      const b = await scalar.attn.attention(q, k, v, opts);
      assertClose(a.output, b.output, 'output');
      assertClose(a.weights, b.weights, 'weights');
      assertClose(a.scores, b.scores, 'scores');
    });
  }
  it('the flavours really differ in their kernels', () => {
    assert.equal(simd.backend.module._simdEnabled(), true);
    assert.equal(simd.backend.module._kernelSet(), 'simd128');
    assert.equal(scalar.backend.module._simdEnabled(), false);
    assert.equal(scalar.backend.module._kernelSet(), 'scalar');
  });
});

describe('values whose weighted sums pass FLT_MAX', () => {
  // The output is a weighted mean of values: finite whenever they are, though the unnormalised
  // sum of Nk weights times |v| is not (the core scales such values by a power of two).
  for (const [name, value, nk] of [
    ['v = 1e38 over 4 keys', 1e38, 4],
    ['v = 1e35 over 8192 keys', 1e35, 8192],
    ['v = FLT_MAX', 3.4028234663852886e38, 3],
  ]) {
    it(`${name}: finite and right, in both flavours and both strategies`, async () => {
      const q = new Float32Array(2 * 4); // every logit 0: all weights equal
      const k = tensor(nk * 4, 8);
      const v = Float32Array.from({ length: nk * 2 }, (_, i) => (i % 2 ? value : -value / 2));
      for (const { attn } of Object.values(flavours)) {
        for (const strategy of ['materialized', 'streaming']) {
          const { output } = await attn.attention(q, k, v, {
            heads: 1,
            headDim: 4,
            valueDim: 2,
            strategy,
          });
          for (let i = 0; i < output.length; i++) {
            const want = i % 2 ? value : -value / 2; // the mean of equal values
            assert.ok(Number.isFinite(output[i]), `${strategy} output[${i}] = ${output[i]}`);
            // 8192 float32 terms round to about 1e-5 of the sum.
            assert.ok(Math.abs(output[i] - want) <= 1e-4 * value, `${output[i]} vs ${want}`);
          }
        }
      }
    });
  }
});
