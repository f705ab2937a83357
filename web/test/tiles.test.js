// The model view's thumbnails of long texts (src/views/tiles.js): an N x N map max-pooled into
// at most T x T cells. Checked on awkward sizes (N = 1023 with T = 64, 15.98 tokens a cell) against
// a brute-force reference written from the definition, with a single-token spike that must
// survive at full strength, and mapped back to true token indices.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { poolMatrix, tileEdges, tileOf } from '../src/views/tiles.js';

// A deterministic, irregular map of weights in [0, 1).
function irregular(rows, cols) {
  const weights = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) weights[r * cols + c] = ((r * 7919 + c * 104729) % 1009) / 1009;
  }
  return weights;
}

// The reference: for every tile cell, the largest visible weight over the source cells whose
// block it is, block i being [floor(i * n / t), floor((i + 1) * n / t)).
function reference(weights, mask, rows, cols, t) {
  const tr = Math.min(rows, t);
  const tc = Math.min(cols, t);
  const start = (i, n, k) => Math.floor((i * n) / k);
  const values = [];
  const visible = [];
  for (let i = 0; i < tr; i++) {
    for (let j = 0; j < tc; j++) {
      let best = null;
      for (let r = start(i, rows, tr); r < start(i + 1, rows, tr); r++) {
        for (let c = start(j, cols, tc); c < start(j + 1, cols, tc); c++) {
          if (mask && !mask[r * cols + c]) continue;
          const w = weights[r * cols + c];
          if (best === null || w > best) best = w;
        }
      }
      values.push(best ?? 0);
      visible.push(best === null ? 0 : 1);
    }
  }
  return { values, visible };
}

describe('tileEdges and tileOf', () => {
  it('splits 1023 into 64 blocks of 15 or 16 and maps every index back to its block', () => {
    const edges = tileEdges(1023, 64);
    assert.equal(edges[0], 0);
    assert.equal(edges[1], 15); // floor(1023 / 64)
    assert.equal(edges[2], 31); // floor(2046 / 64)
    assert.equal(edges[64], 1023);
    for (let i = 0; i < 64; i++)
      assert.ok([15, 16].includes(edges[i + 1] - edges[i]), `block ${i}`);
    for (const [n, t] of [
      [1023, 64],
      [1024, 96],
      [2048, 192],
      [7, 3],
      [5, 5],
      [100, 1],
    ]) {
      const e = tileEdges(n, t);
      for (let index = 0; index < n; index++) {
        const cell = tileOf(index, n, t);
        assert.ok(e[cell] <= index && index < e[cell + 1], `n ${n} t ${t} index ${index}`);
      }
    }
  });
});

describe('poolMatrix', () => {
  it('max-pools N = 1023 into 64 x 64 exactly as the reference, with where each maximum is', () => {
    const n = 1023;
    const weights = irregular(n, n);
    const tile = poolMatrix(weights, null, { rows: n, cols: n, size: 64 });
    assert.equal(tile.rows, 64);
    assert.equal(tile.cols, 64);
    const want = reference(weights, null, n, n, 64);
    assert.deepEqual(Array.from(tile.values), Array.from(Float32Array.from(want.values)));
    assert.ok(tile.visible.every((v) => v === 1));
    for (let i = 0; i < tile.values.length; i++) {
      assert.equal(weights[tile.at[i]], tile.values[i], `cell ${i}`);
      const r = Math.floor(tile.at[i] / n);
      const c = tile.at[i] % n;
      assert.equal(tileOf(r, n, 64) * 64 + tileOf(c, n, 64), i, `cell ${i} points into itself`);
    }
    // One cell by hand: block (0, 0) is rows and columns 0..14; the largest of
    // (r * 7919 + c * 104729) % 1009 there.
    let hand = 0;
    for (let r = 0; r < 15; r++) {
      for (let c = 0; c < 15; c++) hand = Math.max(hand, (r * 7919 + c * 104729) % 1009);
    }
    assert.equal(tile.values[0], Math.fround(hand / 1009));
  });

  it('keeps a single-token spike at full strength (a mean would dim it 256-fold)', () => {
    const n = 1023;
    const weights = new Float32Array(n * n).fill(1 / n);
    weights[700 * n + 3] = 1;
    const tile = poolMatrix(weights, null, { rows: n, cols: n, size: 64 });
    const cell = tileOf(700, n, 64) * 64 + tileOf(3, n, 64);
    assert.equal(tile.values[cell], 1);
    assert.equal(tile.at[cell], 700 * n + 3);
    const others = Array.from(tile.values).filter((_, i) => i !== cell);
    assert.ok(others.every((v) => v === Math.fround(1 / n)));
  });

  it('leaves masked cells out: a causal mask, T not dividing N, rows and columns apart', () => {
    const rows = 301;
    const cols = 1023;
    const weights = irregular(rows, cols);
    const mask = new Uint8Array(rows * cols);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c <= Math.min(cols - 1, r * 3); c++) mask[r * cols + c] = 1;
    }
    // A large weight where the mask forbids it must not show.
    weights[0 * cols + 500] = 5;
    const tile = poolMatrix(weights, mask, { rows, cols, size: 96 });
    assert.equal(tile.rows, 96);
    assert.equal(tile.cols, 96);
    const want = reference(weights, mask, rows, cols, 96);
    assert.deepEqual(Array.from(tile.values), Array.from(Float32Array.from(want.values)));
    assert.deepEqual(Array.from(tile.visible), want.visible);
    assert.ok(tile.visible.some((v) => v === 0));
    assert.ok(Math.max(...tile.values) < 5);
    tile.at.forEach((at, i) => assert.equal(at < 0, tile.visible[i] === 0, `cell ${i}`));
  });

  it('keeps a map no larger than the tile cell for cell, and a masked cell stays masked', () => {
    const weights = Float32Array.from([0.5, 0, 0.25, 0.75]);
    const tile = poolMatrix(weights, Uint8Array.from([1, 0, 1, 1]), { rows: 2, cols: 2, size: 64 });
    assert.equal(tile.rows, 2);
    assert.deepEqual(Array.from(tile.values), [0.5, 0, 0.25, 0.75]);
    assert.deepEqual(Array.from(tile.visible), [1, 0, 1, 1]);
    assert.deepEqual(Array.from(tile.at), [0, -1, 2, 3]);
  });
});
