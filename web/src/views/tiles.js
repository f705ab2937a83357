// Thumbnails of long texts: an N x N attention map pooled into a tile of at most T x T cells, so
// the model view draws 144 heads at 1,024 tokens from 144 small tiles instead of 144 million
// cells. Max-pooling, not the mean: a head that puts a row's whole weight on one key leaves a
// single bright cell, which a 16 x 16 mean would dim 256-fold (and a nearest-neighbour scale-down
// would drop 15 times out of 16); the block's maximum keeps it at full strength, so a sharp head
// still looks sharp and each thumbnail's colour range (its largest weight) is unchanged. Each tile
// cell keeps where its maximum sits, so pointing at a pixel names true token indices.

/**
 * Where each tile cell starts: block i covers source indices [edges[i], edges[i + 1]), blocks of
 * floor(n / t) or that plus one, spread evenly (no short block piles up at the end).
 * @returns {Int32Array} t + 1 edges, edges[0] = 0, edges[t] = n
 */
export function tileEdges(n, t) {
  const edges = new Int32Array(t + 1);
  for (let i = 0; i <= t; i++) edges[i] = Math.floor((i * n) / t);
  return edges;
}

/** The tile cell (0..t-1) holding source index `index` (0..n-1): the inverse of tileEdges. */
export function tileOf(index, n, t) {
  return Math.ceil(((index + 1) * t) / n) - 1;
}

/**
 * Max-pools a rows x cols map (row-major) into at most size x size cells; a map no larger than
 * that is kept cell for cell.
 * @param {ArrayLike<number>} weights
 * @param {ArrayLike<number> | null} mask 1 where a cell is visible (null: all visible)
 * @returns {{ rows, cols, values: Float32Array, visible: Uint8Array, at: Int32Array,
 *   rowEdges: Int32Array, colEdges: Int32Array }} values: each block's largest visible weight
 *   (0 when none is visible); visible: 1 where any of the block is; at: the source index
 *   (row * cols + col) of the block's largest visible weight, -1 when none is
 */
export function poolMatrix(weights, mask, { rows, cols, size }) {
  const tileRows = Math.min(rows, size);
  const tileCols = Math.min(cols, size);
  const rowEdges = tileEdges(rows, tileRows);
  const colEdges = tileEdges(cols, tileCols);
  const values = new Float32Array(tileRows * tileCols);
  const visible = new Uint8Array(tileRows * tileCols);
  const at = new Int32Array(tileRows * tileCols).fill(-1);
  for (let tr = 0; tr < tileRows; tr++) {
    const out = tr * tileCols;
    for (let r = rowEdges[tr]; r < rowEdges[tr + 1]; r++) {
      const row = r * cols;
      for (let tc = 0; tc < tileCols; tc++) {
        let best = values[out + tc];
        let where = at[out + tc];
        for (let i = row + colEdges[tc], end = row + colEdges[tc + 1]; i < end; i++) {
          // `where < 0` takes the first visible cell even when its weight is 0.
          if ((!mask || mask[i]) && (weights[i] > best || where < 0)) {
            best = weights[i];
            where = i;
          }
        }
        values[out + tc] = best;
        at[out + tc] = where;
      }
    }
    for (let tc = 0; tc < tileCols; tc++) visible[out + tc] = at[out + tc] >= 0 ? 1 : 0;
  }
  return { rows: tileRows, cols: tileCols, values, visible, at, rowEdges, colEdges };
}
