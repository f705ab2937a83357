// Tile sizes from the device's limits, and how a problem is cut when it exceeds them.
//
// Streaming kernel (wgsl/streaming.wgsl.js): a workgroup owns `queryBlock` query rows of one
// head; each row is served by `lanes` invocations that split the keys of a tile for the scores and
// the value columns for the output (queries live in registers). Per workgroup, workgroup memory
// holds one key tile and one value tile (as vec4), the tile's probabilities, and the reduction
// scratch when subgroups are not used. Depths are rounded up to buckets so nearby shapes share a
// pipeline.

/** Padded depth: 4, 8, 16, 32, 64, then multiples of 32. Tiles are zero-padded to it. */
export function depthBucket(depth) {
  if (depth <= 4) return 4;
  if (depth <= 64) return 2 ** Math.ceil(Math.log2(depth));
  return Math.ceil(depth / 32) * 32;
}

const TARGET_INVOCATIONS = 128;
const LARGEST_KEY_TILE = 64;
const SMALLEST_KEY_TILE = 16;

/**
 * @param {{ depth: number, valueDim: number, additive: boolean }} dims depth is headDim, or the
 *   additive hidden width
 * @param {{ maxComputeWorkgroupStorageSize: number,
 *   maxComputeInvocationsPerWorkgroup: number }} limits
 * @param {{ subgroups: boolean, shuffleLanes: number }} reduction
 * @returns {object | null} the plan, or null when not even the smallest tiles fit
 */
export function planStreaming({ depth, valueDim, additive }, limits, { subgroups, shuffleLanes }) {
  const depth4 = depthBucket(depth) / 4;
  const value4 = depthBucket(valueDim) / 4;
  // About two value vec4s per lane: enough lanes to spread the output, few enough that the
  // reductions stay short.
  let lanes = Math.min(16, Math.max(4, 2 ** Math.ceil(Math.log2(Math.ceil(value4 / 2)))));
  if (subgroups) lanes = Math.min(lanes, shuffleLanes);
  const invocations = Math.min(TARGET_INVOCATIONS, limits.maxComputeInvocationsPerWorkgroup);
  let queryBlock = Math.max(1, Math.floor(invocations / lanes));
  let keyTile = Math.max(LARGEST_KEY_TILE, lanes);
  const bytes = () =>
    16 * (keyTile * depth4 + keyTile * value4 + (additive ? depth4 : 0)) +
    4 * queryBlock * keyTile +
    (subgroups ? 0 : 4 * queryBlock * lanes);
  // Shrink until it fits: key tiles first (down to 16 keys), then query rows (down to 4), then
  // key tiles and lanes together, then the last rows.
  while (bytes() > limits.maxComputeWorkgroupStorageSize) {
    if (keyTile > Math.max(lanes, SMALLEST_KEY_TILE)) keyTile /= 2;
    else if (queryBlock > 4) queryBlock = Math.floor(queryBlock / 2);
    else if (keyTile > lanes) keyTile /= 2;
    else if (lanes > 4) {
      lanes /= 2;
      keyTile = lanes;
    } else if (queryBlock > 1) queryBlock = Math.floor(queryBlock / 2);
    else return null;
  }
  if (queryBlock * lanes > limits.maxComputeInvocationsPerWorkgroup) return null;
  return {
    depth4,
    value4,
    lanes,
    queryBlock,
    keyTile,
    workgroupSize: queryBlock * lanes,
    keysPerLane: keyTile / lanes,
    accumulators: Math.ceil(value4 / lanes),
    workgroupBytes: bytes(),
    subgroups,
  };
}

/**
 * Head groups whose tensors each fit one storage binding and whose heads fit one dispatch
 * dimension: [{ first, count }], or null when a single head is already too large.
 * @param {number} heads
 * @param {number} bytesPerHead the largest per-head tensor of the problem, in bytes
 * @param {number} maxBinding the device's usable binding size
 * @param {number} [maxHeads] at most this many heads per group (maxComputeWorkgroupsPerDimension)
 */
export function headGroups(heads, bytesPerHead, maxBinding, maxHeads = Infinity) {
  const perGroup = Math.min(Math.floor(maxBinding / bytesPerHead), maxHeads);
  if (perGroup < 1) return null;
  const groups = [];
  for (let first = 0; first < heads; first += perGroup) {
    groups.push({ first, count: Math.min(perGroup, heads - first) });
  }
  return groups;
}

/**
 * Chunks of the [heads, queryLength, keyLength] score matrix for the materialized path, each
 * small enough for one binding and one dispatch: [{ head, heads, row, rows }], or null.
 * Whole heads when they fit, otherwise one head at a time in bands of rows.
 */
export function scoreChunks(heads, queryLength, keyLength, maxBinding, maxRowsPerDispatch) {
  const rowBytes = keyLength * 4;
  const headBytes = queryLength * rowBytes;
  const chunks = [];
  if (headBytes <= maxBinding && queryLength <= maxRowsPerDispatch) {
    const perChunk = Math.floor(maxBinding / headBytes);
    for (let head = 0; head < heads; head += perChunk) {
      chunks.push({ head, heads: Math.min(perChunk, heads - head), row: 0, rows: queryLength });
    }
    return chunks;
  }
  const rowsPerChunk = Math.min(Math.floor(maxBinding / rowBytes), maxRowsPerDispatch);
  if (rowsPerChunk < 1) return null;
  for (let head = 0; head < heads; head++) {
    for (let row = 0; row < queryLength; row += rowsPerChunk) {
      chunks.push({ head, heads: 1, row, rows: Math.min(rowsPerChunk, queryLength - row) });
    }
  }
  return chunks;
}
