// attn.attentionBackward() against the float64 reference backward and against central
// differences of attn.attention() itself: every differentiable score, every mask kind,
// temperature and scale, cross-attention shapes and both wasm flavours; then its argument checks,
// the core's errors as JavaScript errors, and no wasm memory left behind.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertClose, assertFails, MASK_CASES, openFlavours, tensor } from './support/helpers.js';
import { referenceAttentionBackward } from './support/reference.js';

const flavours = await openFlavours();

// [name, { heads, nq, nk, headDim, valueDim }, options]: the shared cases, then this file's own
const CASES = [
  ...MASK_CASES,
  [
    'global tokens with a causal window',
    { heads: 1, nq: 11, nk: 11, headDim: 4 },
    { causal: true, window: { before: 1 }, globalTokens: [0, 6] },
  ],
  [
    'key lengths, one head all padding',
    { heads: 3, nq: 6, nk: 6, headDim: 4 },
    { keyLengths: [6, 3, 0] },
  ],
  [
    'several tiles (Nq 70, Nk 130), cosine, causal window',
    { heads: 2, nq: 70, nk: 130, headDim: 8, valueDim: 5 },
    { score: 'cosine', causal: true, window: { before: 40, after: 5 }, temperature: 0.5 },
  ],
];

function problem(s, seed) {
  const valueDim = s.valueDim ?? s.headDim;
  return {
    q: tensor(s.heads * s.nq * s.headDim, seed),
    k: tensor(s.heads * s.nk * s.headDim, seed + 1),
    v: tensor(s.heads * s.nk * valueDim, seed + 2),
    dOutput: tensor(s.heads * s.nq * valueDim, seed + 3),
    shape: { heads: s.heads, headDim: s.headDim, valueDim },
  };
}

for (const [flavour, { attn, backend }] of Object.entries(flavours)) {
  describe(`attentionBackward on wasm-${flavour}`, () => {
    for (const [name, s, options] of CASES) {
      it(name, async () => {
        const { q, k, v, dOutput, shape } = problem(s, 1);
        const opts = { ...shape, ...options };
        const expected = referenceAttentionBackward(q, k, v, dOutput, opts);
        const r = await attn.attentionBackward(q, k, v, dOutput, opts);
        for (const key of ['dq', 'dk', 'dv']) assertClose(r[key], expected[key], key, 2e-4);
        assert.equal(r.stats.backend, `wasm-${flavour}`);
        assert.equal(r.stats.strategy, 'streaming');
        assert.ok(r.stats.tilesVisited <= r.stats.tilesTotal && r.stats.scratchBytes > 0);
      });
    }

    it('matches central differences of attn.attention()', async () => {
      // L = sum(dOutput * attention(q, k, v)); dL/dx ~ (L(x + h) - L(x - h)) / 2h in float32,
      // whose rounding (~1e-6 of L) over 2h and the O(h^2) term bound the agreement.
      const s = { heads: 2, nq: 5, nk: 6, headDim: 3, valueDim: 2 };
      const { q, k, v, dOutput, shape } = problem(s, 40);
      const opts = { ...shape, causal: true, window: { before: 3 }, temperature: 0.8 };
      const loss = async () => {
        const { output } = await attn.attention(q, k, v, opts);
        let l = 0;
        for (let i = 0; i < output.length; i++) l += dOutput[i] * output[i];
        return l;
      };
      const r = await attn.attentionBackward(q, k, v, dOutput, opts);
      const h = 1e-2;
      for (const [name, x, grad] of [
        ['q', q, r.dq],
        ['k', k, r.dk],
        ['v', v, r.dv],
      ]) {
        const differences = new Float64Array(x.length);
        for (let i = 0; i < x.length; i++) {
          const x0 = x[i];
          x[i] = x0 + h;
          const up = await loss();
          const above = x[i]; // the float32 the step really reached
          x[i] = x0 - h;
          const down = await loss();
          const below = x[i];
          x[i] = x0;
          differences[i] = (up - down) / (above - below);
        }
        assertClose(grad, differences, `d${name} against differences`, 3e-3);
      }
    });

    it('a row that sees no key, and keys no query sees, get zero gradients', async () => {
      const mask = new Uint8Array(4 * 5).fill(1);
      mask.fill(0, 5, 10); // query 1 sees nothing
      for (let i = 0; i < 4; i++) mask[i * 5 + 4] = 0; // key 4 is seen by no query
      const q = tensor(4 * 3, 50);
      const kv = tensor(5 * 3, 51);
      const r = await attn.attentionBackward(q, kv, kv, tensor(4 * 3, 52), {
        heads: 1,
        headDim: 3,
        mask,
      });
      assert.deepEqual([...r.dq.subarray(3, 6)], [0, 0, 0]);
      assert.deepEqual([...r.dk.subarray(12, 15)], [0, 0, 0]);
      assert.deepEqual([...r.dv.subarray(12, 15)], [0, 0, 0]);
    });

    it('checks its arguments as attention() does, and frees what it allocated', async () => {
      const x = tensor(2 * 4 * 3, 60);
      const opts = { heads: 2, headDim: 3 };
      const heapBefore = backend.heapBytesInUse();
      await assertFails(
        attn.attentionBackward(x, x, x, x, { ...opts, returnWeights: true }),
        TypeError,
        'invalid_argument',
        'options',
      );
      await assertFails(
        attn.attentionBackward(x, x, x, [1, 2], opts),
        TypeError,
        'invalid_argument',
        'dOutput',
      );
      await assertFails(
        attn.attentionBackward(x, x, x, x.subarray(1), opts),
        RangeError,
        'shape_mismatch',
        'dOutput',
      );
      await assertFails(
        attn.attentionBackward(x, x, x, x, { headDim: 3 }),
        TypeError,
        'invalid_argument',
        'heads',
      );
      await assertFails(
        attn.attentionBackward(x, x, x, x, { ...opts, temperature: 0 }),
        RangeError,
        'out_of_range',
        'temperature',
      );
      await assertFails(
        attn.attentionBackward(x, x, x, x, { ...opts, score: 'additive' }),
        RangeError,
        'out_of_range',
        'score',
      );
      const badOutput = Float32Array.from(x);
      badOutput[5] = NaN;
      const dOutputError = await assertFails(
        attn.attentionBackward(x, x, x, badOutput, opts),
        RangeError,
        'non_finite',
        'dOutput',
      );
      assert.equal(dOutputError.index, 5);
      // q, k and v are checked by the core, on its copies; the error comes back with the index.
      const badQ = Float32Array.from(x);
      badQ[7] = Infinity;
      const qError = await assertFails(
        attn.attentionBackward(badQ, x, x, x, opts),
        RangeError,
        'non_finite',
        'q',
      );
      assert.equal(qError.index, 7);
      // Finite inputs whose logits overflow float32.
      const huge = new Float32Array(x.length).fill(1e30);
      await assertFails(
        attn.attentionBackward(huge, huge, x, x, opts),
        RangeError,
        'non_finite',
        'scores',
      );
      assert.equal(backend.heapBytesInUse(), heapBefore, 'nothing allocated or leaked');
      const ok = await attn.attentionBackward(x, x, x, x, opts);
      assertClose(ok.dq, referenceAttentionBackward(x, x, x, x, opts).dq, 'dq after errors', 2e-4);
    });
  });
}

describe('the SIMD and scalar builds agree on the backward', () => {
  const { simd, scalar } = flavours;
  for (const [name, s, options] of CASES) {
    it(name, async () => {
      const { q, k, v, dOutput, shape } = problem(s, 70);
      const opts = { ...shape, ...options };
      const a = await simd.attn.attentionBackward(q, k, v, dOutput, opts);
      const b = await scalar.attn.attentionBackward(q, k, v, dOutput, opts);
      for (const key of ['dq', 'dk', 'dv']) assertClose(a[key], b[key], key, 1e-4);
    });
  }
});
