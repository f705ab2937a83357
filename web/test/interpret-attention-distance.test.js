// Mean attention distance (src/interpret/attention-distance.js): a 2x2 grid of 16-pixel patches
// worked out by hand, then the arguments it refuses.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  LOCAL_DISTANCE_SHARE,
  meanAttentionDistance,
} from '../src/interpret/attention-distance.js';

// Tokens: 0 the class token, 1..4 the patches (0,0) (0,1) (1,0) (1,1). Centre distances in
// pixels: 16 to a side neighbour, 16 sqrt(2) across the diagonal, so from any patch uniform
// attention over the four averages (0 + 16 + 16 + 16 sqrt(2)) / 4 = 4 (2 + sqrt(2)) = 13.657.
const UNIFORM = 4 * (2 + Math.SQRT2);
const N = 5;
const SIDE = [2, 1, 4, 3]; // each patch's neighbour in its row, as tokens

function attentionOf(heads) {
  const attention = new Float32Array(heads.length * N * N);
  heads.forEach((rowOf, h) => {
    for (let q = 0; q < N; q++) attention.set(rowOf(q), (h * N + q) * N);
  });
  return attention;
}

test('2x2 grid by hand: a local head, a uniform one behind the class token, a neighbour', () => {
  const attention = attentionOf([
    // 0.75 on itself, 0.25 on its side neighbour: 0.25 * 16 = 4 px
    (q) => {
      const row = [0, 0, 0, 0, 0];
      if (q === 0) row[0] = 1;
      else {
        row[q] = 0.75;
        row[SIDE[q - 1]] = 0.25;
      }
      return row;
    },
    // half on the class token, 0.125 per patch: renormalised to uniform, 13.657 px
    (q) => (q === 0 ? [1, 0, 0, 0, 0] : [0.5, 0.125, 0.125, 0.125, 0.125]),
    // all on the patch below or above: 16 px
    (q) => {
      const row = [0, 0, 0, 0, 0];
      row[q === 0 ? 0 : ((q + 1) % 4) + 1] = 1;
      return row;
    },
  ]);
  const got = meanAttentionDistance(
    attention,
    { layers: 1, heads: 3, n: N },
    { rows: 2, columns: 2, patchSize: 16, first: 1 },
  );
  assert.ok(Math.abs(got.distances[0] - 4) < 1e-5, `local head ${got.distances[0]}`);
  assert.ok(Math.abs(got.distances[1] - UNIFORM) < 1e-4, `uniform head ${got.distances[1]}`);
  assert.ok(Math.abs(got.distances[2] - 16) < 1e-5, `neighbour head ${got.distances[2]}`);
  assert.ok(Math.abs(got.uniform - UNIFORM) < 1e-9);
  assert.ok(Math.abs(got.threshold - LOCAL_DISTANCE_SHARE * UNIFORM) < 1e-9);
  assert.deepEqual(got.labels, ['local', 'global', 'global']);
});

test('refuses a grid that is not the tokens, a bad weight and a missing grid', () => {
  const attention = new Float32Array(N * N).fill(0.2);
  const shape = { layers: 1, heads: 1, n: N };
  assert.throws(
    () => meanAttentionDistance(attention, shape, { rows: 2, columns: 3, patchSize: 16 }),
    (e) => e.parameter === 'grid',
  );
  assert.throws(() => meanAttentionDistance(attention, shape, null), TypeError);
  const bad = attention.slice();
  bad[N + 2] = Number.NaN;
  assert.throws(
    () => meanAttentionDistance(bad, shape, { rows: 2, columns: 2, patchSize: 16 }),
    RangeError,
  );
});
