// What each Picture view shows, as one weight per patch (row by row over the model's grid): a
// head's class-token row, a patch's own row (where that patch looks), a layer's mean over its
// heads, and the class token's rollout. The class token and registers have no place in the
// picture, so each map keeps the patch keys only; the drawing scales each map to its own maximum.

/** The first patch's token: after the class token and the registers. */
export function firstPatch(run) {
  return 1 + run.registers;
}

/**
 * Row `query` of head (layer, head) over the patch keys (query 0: the class token).
 * @returns {Float32Array} [rows * columns]
 */
export function headMap(run, layer, head, query = 0) {
  // A snapshot holds the class token's rows over the patches only (src/snapshot/picture.js).
  if (run.classAttention) {
    const patches = run.grid.rows * run.grid.columns;
    const at = (layer * run.heads + head) * patches;
    return run.classAttention.slice(at, at + patches);
  }
  const n = run.tokens;
  const start = ((layer * run.heads + head) * n + query) * n + firstPatch(run);
  return run.attention.slice(start, start + run.grid.rows * run.grid.columns);
}

/** Row `query` of a layer averaged over its heads, over the patch keys. */
export function layerMeanMap(run, layer, query = 0) {
  const map = new Float32Array(run.grid.rows * run.grid.columns);
  for (let h = 0; h < run.heads; h++) {
    const row = headMap(run, layer, h, query);
    for (let p = 0; p < map.length; p++) map[p] += row[p] / run.heads;
  }
  return map;
}

/** The class token's rollout over the patches (compute thread: attentionRollout row 0). */
export function rolloutMap(run) {
  return run.classAttention ? run.rollout.slice() : run.rollout.slice(firstPatch(run));
}

/** The patch under (x, y) in input pixels, or -1 outside the grid. */
export function patchAt(run, x, y) {
  const row = Math.floor(y / run.patchSize);
  const column = Math.floor(x / run.patchSize);
  if (row < 0 || column < 0 || row >= run.grid.rows || column >= run.grid.columns) return -1;
  return row * run.grid.columns + column;
}
