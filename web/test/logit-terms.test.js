// The options between the score and the softmax through the package: softcap, bias (per head and
// broadcast), alibi / alibiSlopes, queryOffset (past keys), topK and lsh, alone and together,
// against the float64 reference (test/support/reference.js, written from attention.h's formula)
// on both wasm flavours and both strategies; multiHead() and allocate() pass them on; every
// argument check names its option.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertClose, assertFails, openFlavours, tensor } from './support/helpers.js';
import { paperSlopes, referenceAttention } from './support/reference.js';

const { simd, scalar } = await openFlavours();

const SHAPE = { heads: 4, kvHeads: 2, headDim: 8, valueDim: 5 };
const NQ = 9;
const NK = 21;
const bias = (heads, seed) => tensor(heads * NQ * NK, seed, 2);

// [name, options]
const CASES = [
  ['softcap', { softcap: 1.5 }],
  ['bias per head, with hidden keys', { bias: withHidden(bias(4, 11)) }],
  ['bias broadcast over heads, causal', { bias: bias(1, 12), causal: true }],
  ['alibi: the paper slopes', { alibi: true, causal: true }],
  ['alibiSlopes, cosine', { alibiSlopes: new Float32Array([0.5, 0.25, 1, 0]), score: 'cosine' }],
  [
    'queryOffset: the last queries of a causal window',
    { queryOffset: NK - NQ, causal: true, window: 3 },
  ],
  ['topK', { topK: 4, keyLengths: [21, 3, 0, 10] }],
  ['lsh', { lsh: { buckets: 4, rounds: 2, seed: 9 } }],
  [
    'everything at once',
    {
      softcap: 4,
      bias: bias(1, 13),
      alibi: true,
      queryOffset: 5,
      causal: true,
      topK: 3,
      lsh: { buckets: 2, seed: 1 },
      temperature: 0.7,
    },
  ],
];

function withHidden(b) {
  for (let i = 0; i < b.length; i += 7) b[i] = -Infinity;
  return b;
}

for (const [flavour, { attn }] of Object.entries({ simd, scalar })) {
  describe(`logit terms on wasm-${flavour}`, () => {
    const q = tensor(SHAPE.heads * NQ * SHAPE.headDim, 1);
    const k = tensor(SHAPE.kvHeads * NK * SHAPE.headDim, 2);
    const v = tensor(SHAPE.kvHeads * NK * SHAPE.valueDim, 3);
    for (const [name, options] of CASES) {
      it(name, async () => {
        const expected = referenceAttention(q, k, v, { ...SHAPE, ...options });
        const full = await attn.attention(q, k, v, { ...SHAPE, ...options, returnWeights: true });
        assertClose(full.weights, expected.weights, 'weights');
        assertClose(full.output, expected.output, 'output');
        const streamed = await attn.attention(q, k, v, { ...SHAPE, ...options });
        assert.equal(streamed.stats.strategy, 'streaming');
        assertClose(streamed.output, expected.output, 'streaming output');
        assert.ok(streamed.stats.pairsScored > 0);
      });
    }

    it('alibi: true is alibiSlopes of the paper', async () => {
      const slopes = new Float32Array(paperSlopes(4));
      const a = await attn.attention(q, k, v, { ...SHAPE, alibi: true });
      const b = await attn.attention(q, k, v, { ...SHAPE, alibiSlopes: slopes });
      assert.deepEqual(a.output, b.output);
    });

    it('queryOffset moves the mask matrix too', async () => {
      const m = await attn.maskMatrix({
        queryLength: 2,
        keyLength: 4,
        causal: true,
        queryOffset: 2,
      });
      assert.deepEqual([...m], [1, 1, 1, 0, 1, 1, 1, 1]);
    });

    it('multiHead() and allocate() take them', async () => {
      const buffers = attn.allocate({ ...SHAPE, queryLength: NQ, keyLength: NK });
      buffers.q.set(q);
      buffers.k.set(k);
      buffers.v.set(v);
      const options = { topK: 2, softcap: 3, queryOffset: 12, causal: true };
      await buffers.run(options);
      const expected = referenceAttention(q, k, v, { ...SHAPE, ...options });
      assertClose(buffers.output, expected.output, 'allocate() output');
      buffers.dispose();
      const x = tensor(NQ * 6, 4);
      const weights = {
        wQuery: tensor(6 * 8, 5),
        wKey: tensor(6 * 8, 6),
        wValue: tensor(6 * 8, 7),
        wOut: tensor(8 * 3, 8),
      };
      const plain = await attn.multiHead(x, weights, { heads: 2, headDim: 4, causal: true });
      const capped = await attn.multiHead(x, weights, {
        heads: 2,
        headDim: 4,
        causal: true,
        topK: 1,
      });
      assert.notDeepEqual(plain.output, capped.output);
    });

    it('argument checks name the option', async () => {
      const run = (options) => attn.attention(q, k, v, { ...SHAPE, ...options });
      await assertFails(run({ softcap: 0 }), RangeError, 'out_of_range', 'softcap');
      await assertFails(run({ softcap: '2' }), TypeError, 'invalid_argument', 'softcap');
      await assertFails(run({ bias: new Float32Array(5) }), RangeError, 'shape_mismatch', 'bias');
      await assertFails(run({ bias: [0] }), TypeError, 'invalid_argument', 'bias');
      const nan = bias(1, 14);
      nan[17] = NaN;
      const error = await assertFails(run({ bias: nan }), RangeError, 'non_finite', 'bias');
      assert.equal(error.index, 17);
      await assertFails(run({ alibi: 1 }), TypeError, 'invalid_argument', 'alibi');
      const slopes = new Float32Array(4);
      await assertFails(
        run({ alibi: true, alibiSlopes: slopes }),
        TypeError,
        'invalid_argument',
        'alibiSlopes',
      );
      await assertFails(
        run({ alibiSlopes: new Float32Array(3) }),
        RangeError,
        'shape_mismatch',
        'alibiSlopes',
      );
      await assertFails(run({ topK: 0 }), RangeError, 'out_of_range', 'topK');
      await assertFails(run({ topK: NK + 1 }), RangeError, 'out_of_range', 'topK');
      await assertFails(run({ lsh: {} }), TypeError, 'invalid_argument', 'lsh.buckets');
      await assertFails(run({ lsh: { buckets: 3 } }), RangeError, 'out_of_range', 'lsh.buckets');
      await assertFails(
        run({ lsh: { buckets: 4, rounds: 17 } }),
        RangeError,
        'out_of_range',
        'lsh.rounds',
      );
      await assertFails(
        run({ lsh: { buckets: 4, seed: -1 } }),
        RangeError,
        'out_of_range',
        'lsh.seed',
      );
      await assertFails(
        run({ lsh: { buckets: 4, salt: 1 } }),
        TypeError,
        'invalid_argument',
        'lsh',
      );
      await assertFails(run({ queryOffset: -1 }), RangeError, 'out_of_range', 'queryOffset');
      await assertFails(
        run({ queryOffset: 2, window: NK + 1 }),
        RangeError,
        'out_of_range',
        'window',
      );
      const dOutput = tensor(SHAPE.heads * NQ * SHAPE.valueDim, 9);
      await assertFails(
        attn.attentionBackward(q, k, v, dOutput, { ...SHAPE, topK: 2 }),
        TypeError,
        'invalid_argument',
        'topK',
      );
      // The instance stays usable.
      const again = await run({ softcap: 2 });
      assert.equal(again.output.length, SHAPE.heads * NQ * SHAPE.valueDim);
    });
  });
}
