// Grouped-query and multi-query attention (kvHeads) through the package: attention(),
// attentionBackward(), multiHead() and allocate() against the float64 reference; attention equal,
// bit for bit, to plain multi-head attention over K/V heads repeated as ONNX's Attention repeats
// them; and the argument checks.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertClose, assertFails, openFlavours, tensor } from './support/helpers.js';
import {
  referenceAttention,
  referenceAttentionBackward,
  referenceMultiHead,
} from './support/reference.js';

const { simd, scalar } = await openFlavours();

// Each K/V head repeated `group` times along the head axis (np.repeat), as ONNX forms them.
function repeatHeads(x, kvHeads, group) {
  const head = x.length / kvHeads;
  const out = new Float32Array(x.length * group);
  for (let kv = 0; kv < kvHeads; kv++) {
    for (let g = 0; g < group; g++)
      out.set(x.subarray(kv * head, (kv + 1) * head), (kv * group + g) * head);
  }
  return out;
}

// [name, { heads, kvHeads, nq, nk, headDim, valueDim }, options]
const CASES = [
  ['two query heads per K/V head', { heads: 4, kvHeads: 2, nq: 7, nk: 9, headDim: 8 }, {}],
  [
    'multi-query, causal, cosine',
    { heads: 6, kvHeads: 1, nq: 9, nk: 9, headDim: 4 },
    { causal: true, score: 'cosine' },
  ],
  [
    'ONNX test shape, key lengths per query head',
    { heads: 9, kvHeads: 3, nq: 4, nk: 6, headDim: 8, valueDim: 5 },
    { keyLengths: [6, 5, 4, 3, 2, 1, 0, 6, 6] },
  ],
];

for (const [flavour, { attn }] of Object.entries({ simd, scalar })) {
  describe(`kvHeads on wasm-${flavour}`, () => {
    for (const [name, s, options] of CASES) {
      it(name, async () => {
        const valueDim = s.valueDim ?? s.headDim;
        const q = tensor(s.heads * s.nq * s.headDim, 1);
        const k = tensor(s.kvHeads * s.nk * s.headDim, 2);
        const v = tensor(s.kvHeads * s.nk * valueDim, 3);
        const shape = { heads: s.heads, kvHeads: s.kvHeads, headDim: s.headDim, valueDim };
        const expected = referenceAttention(q, k, v, { ...shape, ...options });
        const full = await attn.attention(q, k, v, { ...shape, ...options, returnWeights: true });
        assertClose(full.weights, expected.weights, 'weights');
        assertClose(full.output, expected.output, 'output');
        const streamed = await attn.attention(q, k, v, { ...shape, ...options });
        assertClose(streamed.output, expected.output, 'streaming output');

        // ONNX: the same as multi-head attention over the repeated K/V heads, bit for bit.
        const group = s.heads / s.kvHeads;
        const repeated = await attn.attention(
          q,
          repeatHeads(k, s.kvHeads, group),
          repeatHeads(v, s.kvHeads, group),
          { heads: s.heads, headDim: s.headDim, valueDim, ...options, returnWeights: true },
        );
        assert.deepEqual(full.output, repeated.output);
        assert.deepEqual(full.weights, repeated.weights);

        const dOutput = tensor(s.heads * s.nq * valueDim, 4);
        const grads = await attn.attentionBackward(q, k, v, dOutput, { ...shape, ...options });
        const want = referenceAttentionBackward(q, k, v, dOutput, { ...shape, ...options });
        assert.equal(grads.dk.length, k.length);
        assertClose(grads.dq, want.dq, 'dq', 4e-5);
        assertClose(grads.dk, want.dk, 'dk', 4e-5);
        assertClose(grads.dv, want.dv, 'dv', 4e-5);
      });
    }

    it('multiHead projects kvHeads K/V heads', async () => {
      const [heads, kvHeads, headDim, modelDim, nq] = [4, 2, 4, 8, 6];
      const w = {
        wQuery: tensor(modelDim * heads * headDim, 10, 0.4),
        wKey: tensor(modelDim * kvHeads * headDim, 11, 0.4),
        wValue: tensor(modelDim * kvHeads * headDim, 12, 0.4),
        wOut: tensor(heads * headDim * modelDim, 13, 0.4),
        bKey: tensor(kvHeads * headDim, 14, 0.2),
      };
      const x = tensor(nq * modelDim, 15);
      const options = { heads, kvHeads, headDim, causal: true };
      const r = await attn.multiHead(x, w, { ...options, returnProjections: true });
      const expected = referenceMultiHead(x, w, options);
      assert.equal(r.k.length, kvHeads * nq * headDim);
      assertClose(r.k, expected.k, 'k');
      assertClose(r.output, expected.output, 'output', 5e-5);
    });

    it('allocate() holds kvHeads K/V heads', async () => {
      const shape = { heads: 4, kvHeads: 1, queryLength: 5, keyLength: 7, headDim: 4 };
      const buffers = attn.allocate(shape);
      try {
        assert.equal(buffers.k.length, 7 * 4);
        buffers.q.set(tensor(4 * 5 * 4, 20));
        buffers.k.set(tensor(7 * 4, 21));
        buffers.v.set(tensor(7 * 4, 22));
        await buffers.run({ causal: true });
        const expected = referenceAttention(buffers.q, buffers.k, buffers.v, {
          heads: 4,
          kvHeads: 1,
          headDim: 4,
          causal: true,
        });
        assertClose(buffers.output, expected.output, 'output');
      } finally {
        buffers.dispose();
      }
    });
  });
}

describe('kvHeads: argument checks', () => {
  const { attn } = simd;
  const q = tensor(6 * 3 * 2, 30);
  const k = tensor(2 * 3 * 2, 31);
  it('must divide heads', async () => {
    await assertFails(
      attn.attention(q, k, k, { heads: 6, kvHeads: 4, headDim: 2 }),
      RangeError,
      'out_of_range',
      'kvHeads',
    );
    await assertFails(
      attn.attention(q, k, k, { heads: 6, kvHeads: 7, headDim: 2 }),
      RangeError,
      'out_of_range',
      'kvHeads',
    );
    await assertFails(
      attn.attention(q, k, k, { heads: 6, kvHeads: 1.5, headDim: 2 }),
      RangeError,
      'out_of_range',
      'kvHeads',
    );
    await assertFails(
      attn.attention(q, k, k, { heads: 6, kvHeads: '2', headDim: 2 }),
      TypeError,
      'invalid_argument',
      'kvHeads',
    );
  });
  it('sizes k and v', async () => {
    const error = await assertFails(
      attn.attention(q, tensor(5, 32), k, { heads: 6, kvHeads: 2, headDim: 2 }),
      RangeError,
      'shape_mismatch',
      'k',
    );
    assert.match(error.message, /kvHeads\*headDim = 4/);
    await assertFails(
      attn.attention(q, k, tensor(6 * 3 * 2, 33), { heads: 6, kvHeads: 2, headDim: 2 }),
      RangeError,
      'shape_mismatch',
      'v',
    );
    await assertFails(
      () => attn.allocate({ heads: 3, kvHeads: 2, queryLength: 1, keyLength: 1, headDim: 1 }),
      RangeError,
      'out_of_range',
      'kvHeads',
    );
  });
});
