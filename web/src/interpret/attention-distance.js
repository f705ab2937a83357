// Mean attention distance (Dosovitskiy et al. 2021, "An Image is Worth 16x16 Words", figure 7):
// how far across the picture a head gathers information. For each patch query, the distance in
// input pixels from its patch's centre to every other patch's centre, weighted by the query's
// attention, averaged over the query patches. Low layers of trained ViTs hold both local heads
// (tens of pixels) and global ones; higher layers are all global.
// Only patch-to-patch attention counts: the class token and registers have no place in the
// picture. Each query's weights on the patches are renormalised to sum to 1, so a head that parks
// most of a row on the class token is measured by where the rest goes, not pulled towards zero.

import { integer, shapeError, typeError } from '../argument-checks.js';
import { describe } from '../errors.js';
import { badWeight, checkAttentionShape } from './rollout.js';

/**
 * A head is "local" when its mean distance is below this share of the distance uniform attention
 * over the same grid gives (a head that looks everywhere alike); otherwise "global". The ratio
 * keeps the label independent of the picture's size and the patch size.
 */
export const LOCAL_DISTANCE_SHARE = 0.5;

/**
 * @param {Float32Array} attention [layers, heads, N, N], as VisionModel.run() returns it
 * @param {{ layers: number, heads: number, n: number }} shape
 * @param {{ rows: number, columns: number, patchSize: number, first?: number }} grid the patch
 *   grid, the patch's side in input pixels, and the first patch's token (1 + registers)
 * @returns {{ distances: Float32Array, uniform: number, threshold: number,
 *   labels: ('local' | 'global')[] }} distances [layers, heads] in pixels; uniform: what
 *   attention spread evenly over the patches gives; threshold: LOCAL_DISTANCE_SHARE * uniform;
 *   labels per head, [layers * heads]
 */
export function meanAttentionDistance(attention, shape, grid) {
  const { attention: weights, layers, heads, n } = checkAttentionShape(attention, shape);
  if (grid === null || typeof grid !== 'object') {
    throw typeError('grid', `must be { rows, columns, patchSize, first }, got ${describe(grid)}`);
  }
  const rows = integer(grid.rows, 'grid.rows', 1, 4096);
  const columns = integer(grid.columns, 'grid.columns', 1, 4096);
  const patchSize = integer(grid.patchSize, 'grid.patchSize', 1, 4096);
  const first = integer(grid.first ?? 1, 'grid.first', 0, n);
  const patches = rows * columns;
  if (first + patches !== n) {
    throw shapeError('grid', `${first} + ${rows} x ${columns} patches must be the N = ${n} tokens`);
  }
  const distance = patchDistances(rows, columns, patchSize);
  const distances = new Float32Array(layers * heads);
  for (let k = 0; k < layers * heads; k++) {
    let total = 0;
    for (let q = 0; q < patches; q++) {
      const row = (k * n + first + q) * n + first;
      let weighted = 0;
      let mass = 0;
      for (let p = 0; p < patches; p++) {
        const w = weights[row + p];
        if (!(w >= 0 && w <= 1)) {
          throw badWeight(w, Math.floor(k / heads), k % heads, first + q, first + p);
        }
        weighted += w * distance[q * patches + p];
        mass += w;
      }
      // A row with no weight on any patch gathers nothing from the picture: distance 0.
      total += mass > 0 ? weighted / mass : 0;
    }
    distances[k] = total / patches;
  }
  let uniform = 0;
  for (const d of distance) uniform += d;
  uniform /= patches * patches;
  const threshold = LOCAL_DISTANCE_SHARE * uniform;
  const labels = Array.from(distances, (d) => (d < threshold ? 'local' : 'global'));
  return { distances, uniform, threshold, labels };
}

// [patches, patches]: pixel distance between patch centres, row by row.
function patchDistances(rows, columns, patchSize) {
  const patches = rows * columns;
  const distance = new Float64Array(patches * patches);
  for (let q = 0; q < patches; q++) {
    for (let p = 0; p < patches; p++) {
      const dr = Math.floor(q / columns) - Math.floor(p / columns);
      const dc = (q % columns) - (p % columns);
      distance[q * patches + p] = patchSize * Math.hypot(dr, dc);
    }
  }
  return distance;
}
