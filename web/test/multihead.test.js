// attn.multiHead() against the reference: projections with and without biases, widths read off
// the weights, cross-attention over a second sequence, masks and scores passed through.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertClose, openFlavours, tensor } from './support/helpers.js';
import { referenceMultiHead } from './support/reference.js';

const flavours = await openFlavours();

function weightsFor(
  { heads, headDim, valueDim = headDim, modelDim, keyModelDim = modelDim, outDim = modelDim },
  seed,
  biases,
) {
  const w = {
    wQuery: tensor(modelDim * heads * headDim, seed, 0.4),
    wKey: tensor(keyModelDim * heads * headDim, seed + 1, 0.4),
    wValue: tensor(keyModelDim * heads * valueDim, seed + 2, 0.4),
    wOut: tensor(heads * valueDim * outDim, seed + 3, 0.4),
  };
  if (biases) {
    w.bQuery = tensor(heads * headDim, seed + 4, 0.2);
    w.bKey = tensor(heads * headDim, seed + 5, 0.2);
    w.bValue = tensor(heads * valueDim, seed + 6, 0.2);
    w.bOut = tensor(outDim, seed + 7, 0.2);
  }
  return w;
}

// [name, dims, options, biases]
const CASES = [
  ['self-attention', { heads: 2, headDim: 4, modelDim: 8, nq: 6 }, {}, false],
  ['with biases', { heads: 2, headDim: 4, modelDim: 8, nq: 6 }, {}, true],
  [
    'value and output widths differ',
    { heads: 3, headDim: 4, valueDim: 2, modelDim: 5, outDim: 7, nq: 5 },
    { causal: true },
    true,
  ],
  [
    'cross-attention',
    { heads: 2, headDim: 4, modelDim: 6, keyModelDim: 10, nq: 4, nk: 9 },
    { source: true },
    true,
  ],
  [
    'cross-attention with masks and cosine',
    { heads: 2, headDim: 4, modelDim: 6, keyModelDim: 6, nq: 7, nk: 5 },
    { source: true, score: 'cosine', window: 1, keyValid: [1, 1, 1, 0, 1], temperature: 0.5 },
    false,
  ],
];

for (const [flavour, { attn }] of Object.entries(flavours)) {
  describe(`multiHead on wasm-${flavour}`, () => {
    for (const [name, dims, caseOptions, biases] of CASES) {
      it(name, async () => {
        const w = weightsFor(dims, 40, biases);
        const x = tensor(dims.nq * dims.modelDim, 41);
        const options = {
          ...caseOptions,
          heads: dims.heads,
          headDim: dims.headDim,
          valueDim: dims.valueDim,
        };
        if (caseOptions.source)
          options.source = tensor(dims.nk * (dims.keyModelDim ?? dims.modelDim), 42);
        const expected = referenceMultiHead(x, w, options);

        const r = await attn.multiHead(x, w, {
          ...options,
          returnWeights: true,
          returnScores: true,
          returnProjections: true,
        });
        for (const key of ['output', 'weights', 'scores', 'q', 'k', 'v'])
          assertClose(r[key], expected[key], key);
        assert.equal(r.stats.backend, `wasm-${flavour}`);

        const plain = await attn.multiHead(x, w, options);
        assertClose(plain.output, expected.output, 'output without extras');
        assert.deepEqual(Object.keys(plain).sort(), ['output', 'stats']);
      });
    }

    it('explicit widths equal the inferred ones', async () => {
      const dims = { heads: 2, headDim: 3, modelDim: 4, outDim: 5 };
      const w = weightsFor(dims, 50, false);
      const x = tensor(6 * 4, 51);
      const inferred = await attn.multiHead(x, w, { heads: 2, headDim: 3 });
      const explicit = await attn.multiHead(x, w, {
        heads: 2,
        headDim: 3,
        modelDim: 4,
        outDim: 5,
        keyModelDim: 4,
      });
      assert.deepEqual(explicit.output, inferred.output);
      assert.equal(inferred.output.length, 6 * 5);
    });

    it('ignores extra properties of the weights (e.g. additive weights riding along)', async () => {
      const dims = { heads: 1, headDim: 2, modelDim: 2 };
      const w = weightsFor(dims, 60, false);
      const x = tensor(3 * 2, 61);
      const a = await attn.multiHead(x, w, { heads: 1, headDim: 2 });
      const b = await attn.multiHead(
        x,
        { ...w, additive: { hidden: 1 } },
        { heads: 1, headDim: 2 },
      );
      assert.deepEqual(a.output, b.output);
    });
  });
}

describe('multiHead: SIMD and scalar agree', () => {
  it('on a layer with biases, masks and cross-attention', async () => {
    const dims = { heads: 4, headDim: 8, modelDim: 32, keyModelDim: 16, outDim: 32 };
    const w = weightsFor(dims, 70, true);
    const x = tensor(33 * 32, 71);
    const source = tensor(47 * 16, 72);
    const options = {
      heads: 4,
      headDim: 8,
      source,
      window: 5,
      globalTokens: [0],
      returnWeights: true,
      returnProjections: true,
    };
    const a = await flavours.simd.attn.multiHead(x, w, options);
    const b = await flavours.scalar.attn.multiHead(x, w, options);
    for (const key of ['output', 'weights', 'q', 'k', 'v']) assertClose(a[key], b[key], key);
  });
});
