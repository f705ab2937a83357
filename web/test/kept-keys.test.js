// kept-keys.js reads top-k's and LSH's choice back from what analyze() returns: the keys it says
// the softmax saw are exactly those the engine gave weight (the engine's dropped keys get 0, and
// nothing here underflows), for every head, with and without a mask before them, and none of
// them is a key the mask hides.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { analyze, createAttention } from '../src/index.js';
import { keptKeys } from '../src/interpret/kept-keys.js';
import { maskOptions, parseMask } from '../src/mask-notation.js';

const TEXT = 'The animal did not cross the street because it was too tired, said the owl.';
const SHAPE = { heads: 3, headDim: 8, seed: 7, granularity: 'word' };

describe('keys top-k and LSH kept', () => {
  let attention;
  before(async () => {
    attention = await createAttention({ backend: 'wasm' });
  });
  after(() => attention?.dispose());

  for (const notation of [
    'topk:3',
    'causal+topk:2',
    'lsh:4:1:0',
    'lsh:8:2:5',
    'local:2+tokens:0+topk:3',
    'causal+topk:2+lsh:4:2:1',
  ]) {
    it(`matches the engine's weights under ${notation}`, async () => {
      const mask = parseMask(notation);
      const n = (await analyze(TEXT, { ...SHAPE, attention })).heads[0].weights.length ** 0.5;
      const run = await analyze(TEXT, { ...SHAPE, attention, ...maskOptions(mask, n, n) });
      const visible = run.heads[0].mask;
      const selection = keptKeys({
        mask: visible,
        heads: run.heads,
        q: run.q,
        k: run.k,
        rows: n,
        cols: n,
        headDim: SHAPE.headDim,
        selection: mask,
      });
      assert.ok(selection);
      assert.equal(selection.buckets === null, !(mask.buckets > 0));
      let leftOut = 0;
      run.heads.forEach((head, h) => {
        const { kept, leftOut: out } = selection.heads[h];
        for (let i = 0; i < n * n; i++) {
          assert.equal(kept[i], head.weights[i] > 0 ? 1 : 0, `head ${h} cell ${i}`);
          assert.equal(out[i], visible[i] && !kept[i] ? 1 : 0, `head ${h} cell ${i}`);
          assert.ok(visible[i] || !kept[i], `head ${h} keeps hidden cell ${i}`);
          leftOut += out[i];
        }
      });
      assert.ok(leftOut > 0, 'the selection left something out');
      // Top-k alone, checked by its definition: per row min(k, visible) keys, none scoring below
      // a key left out.
      if (mask.buckets > 0) return;
      run.heads.forEach((head, h) => {
        const { kept, leftOut: out } = selection.heads[h];
        for (let r = 0; r < n; r++) {
          const row = (flags) => [...Array(n).keys()].filter((c) => flags[r * n + c]);
          const keptCols = row(kept);
          assert.equal(keptCols.length, Math.min(mask.topK, row(visible).length), `row ${r}`);
          const score = (c) => head.scores[r * n + c];
          const lowest = Math.min(...keptCols.map(score));
          for (const c of row(out)) assert.ok(score(c) <= lowest, `head ${h} row ${r} key ${c}`);
        }
      });
    });
  }

  it('is null without top-k or LSH', () => {
    const mask = parseMask('causal');
    assert.equal(keptKeys({ mask: new Uint8Array(4), heads: [], selection: mask }), null);
  });
});
