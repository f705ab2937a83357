// Streaming (Flash-style) attention: one workgroup per (head, block of `queryBlock` query rows). It
// walks only the key tiles the mask can reach (band() plus tiles holding global keys, as
// src/attention/attention_streaming.cpp does), stages each key and value tile in workgroup memory,
// and keeps an online softmax per row in f32: running max m, running sum l, unnormalised
// accumulator.
//
// Row r of the block is served by `lanes` consecutive invocations, each holding the row's query
// in registers. Lane `lane` scores keys lane, lane + lanes, ... of the tile and owns value vec4
// columns lane, lane + lanes, ...; the tile's probabilities pass between lanes through workgroup
// memory. Masked or missing keys score
// NO_SCORE (common.wgsl.js); a row that sees no key ends with l = 0 and writes zeros.
//
// Bindings: 0 uniforms, 1 q, 2 k, 3 v (f32 or f16 each), 4 out (f32), 5 maskWords,
// 6 visits (tiles computed, for stats), 7 additiveV (additive score only), then logitBias (the
// terms variant only: 8 with the additive score, else 7).

import { defineUniforms } from '../uniforms.js';
import { LOGIT_TERM_FIELDS } from '../logit-terms.js';
import { MASK_FIELDS } from '../mask-data.js';
import { SAFE_TANH, SCORE_SENTINELS, elementType, enables } from './common.wgsl.js';
import { logitTermsWgsl } from './logit-terms.wgsl.js';
import { MASK_WGSL } from './mask.wgsl.js';
import { laneReductions } from './reduce.wgsl.js';

export const STREAMING_UNIFORMS = defineUniforms('StreamingParams', [
  'heads',
  'queryLength',
  'keyLength',
  'depth',
  'valueDim',
  // Element strides: tensor[head * xHead + row * xRow + column].
  'qHead',
  'qRow',
  'kHead',
  'kRow',
  'vHead',
  'vRow',
  'oHead',
  'oRow',
  // Heads of this dispatch are headBase + workgroup_id.y in the mask (key lengths per head).
  'headBase',
  // Grouped-query attention: local head l reads head (l + kShift) / kGroup of k and
  // (l + vShift) / vGroup of v (k differs from v where the additive score projected it per head).
  'kGroup',
  'kShift',
  'vGroup',
  'vShift',
  'factor:f32', // scale / temperature
  ...LOGIT_TERM_FIELDS,
  ...MASK_FIELDS,
]);

// Four consecutive elements of a row of one input tensor, zero beyond \`limit\` (the padding of
// the depth buckets). One function per tensor: WGSL passes no storage pointers to functions
// without the unrestricted_pointer_parameters extension.
function loadFunction(name) {
  return /* wgsl */ `
fn load${name.toUpperCase()}(base: u32, column: u32, limit: u32) -> vec4<f32> {
  var r = vec4<f32>(0.0);
  for (var e = 0u; e < 4u; e++) {
    if (column + e < limit) { r[e] = f32(${name}[base + column + e]); }
  }
  return r;
}
`;
}

/**
 * @param {object} plan from tiling.js planStreaming()
 * @param {{ keys: 'f32' | 'f16', values: 'f32' | 'f16', score: 'dot' | 'additive',
 *   terms: boolean }} variant element types of q and k (keys) and of v (values); 'dot' covers
 *   scaled-dot, dot and cosine (cosine operands are normalised before), 'additive' reads
 *   projected queries and keys; terms: whether the call has logit terms (logit-terms.js)
 */
export function streamingKernel(plan, { keys, values, score, terms }) {
  const { depth4, value4, lanes, queryBlock, keyTile, workgroupSize, keysPerLane, accumulators } =
    plan;
  const additive = score === 'additive';
  const f16 = keys === 'f16' || values === 'f16';
  return /* wgsl */ `${enables({ f16, subgroups: plan.subgroups })}
${STREAMING_UNIFORMS.wgsl}
@group(0) @binding(0) var<uniform> p: StreamingParams;
@group(0) @binding(1) var<storage, read> q: array<${elementType(keys)}>;
@group(0) @binding(2) var<storage, read> k: array<${elementType(keys)}>;
@group(0) @binding(3) var<storage, read> v: array<${elementType(values)}>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read> maskWords: array<u32>;
@group(0) @binding(6) var<storage, read_write> visits: array<atomic<u32>>;
${additive ? '@group(0) @binding(7) var<storage, read> additiveV: array<f32>;' : ''}

const LANES: u32 = ${lanes}u;
const QUERY_BLOCK: u32 = ${queryBlock}u;
const KEY_TILE: u32 = ${keyTile}u;
const WORKGROUP: u32 = ${workgroupSize}u;
const DEPTH4: u32 = ${depth4}u;
const VALUE4: u32 = ${value4}u;
const KEYS_PER_LANE: u32 = ${keysPerLane}u;
const ACCUMULATORS: u32 = ${accumulators}u;

var<workgroup> keyTileData: array<vec4<f32>, ${keyTile * depth4}>;
var<workgroup> valueTileData: array<vec4<f32>, ${keyTile * value4}>;
var<workgroup> probs: array<f32, ${queryBlock * keyTile}>;
${additive ? `var<workgroup> additiveVTile: array<vec4<f32>, ${depth4}>;` : ''}
${SCORE_SENTINELS}
${additive ? SAFE_TANH : ''}
${MASK_WGSL}
${logitTermsWgsl({ terms, binding: additive ? 8 : 7 })}
${laneReductions(plan)}

${['q', 'k', 'v'].map((name) => loadFunction(name)).join('')}
fn score(query: ptr<function, array<vec4<f32>, DEPTH4>>, key: u32) -> f32 {
  var s = 0.0;
  for (var x = 0u; x < DEPTH4; x++) {
${
  additive
    ? '    s += dot(additiveVTile[x], safeTanh((*query)[x] + keyTileData[key * DEPTH4 + x]));'
    : '    s += dot((*query)[x], keyTileData[key * DEPTH4 + x]);'
}
  }
  return s;
}

@compute @workgroup_size(${workgroupSize})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let localHead = group.y;
  let h = p.headBase + localHead;
  let keyHead = (localHead + p.kShift) / p.kGroup;
  let valueHead = (localHead + p.vShift) / p.vGroup;
  let q0 = group.x * QUERY_BLOCK;
  let q1 = min(q0 + QUERY_BLOCK, p.queryLength);
  let r = li / LANES;
  let lane = li % LANES;
  let i = q0 + r;
  let live = i < q1;

  var query: array<vec4<f32>, DEPTH4>;
  if (live) {
    for (var x = 0u; x < DEPTH4; x++) {
      query[x] = loadQ(localHead * p.qHead + i * p.qRow, x * 4u, p.depth);
    }
  }
${
  additive
    ? `  for (var e = li; e < DEPTH4; e += WORKGROUP) {
    var value = vec4<f32>(0.0);
    for (var c = 0u; c < 4u; c++) {
      if (e * 4u + c < p.depth) { value[c] = additiveV[localHead * p.depth + e * 4u + c]; }
    }
    additiveVTile[e] = value;
  }`
    : ''
}

  var m = NO_SCORE;
  var l = 0.0;
  var acc: array<vec4<f32>, ACCUMULATORS>;

  let reach = reachable(h, q1);
  let near = band(h, q0, q1);
  var firstTile = 0u;
  var endTile = 0u;
  if (reach.end > reach.begin) {
    firstTile = reach.begin / KEY_TILE;
    endTile = (reach.end + KEY_TILE - 1u) / KEY_TILE;
  }
  for (var tile = firstTile; tile < endTile; tile++) {
    let k0 = tile * KEY_TILE;
    let k1 = min(k0 + KEY_TILE, p.keyLength);
    // Outside the band only global keys can be visible.
    let inBand = near.end > near.begin && k1 > near.begin && k0 < near.end;
    if (!inBand && globalsIn(max(k0, reach.begin), min(k1, reach.end)) == 0u) { continue; }
    if (li == 0u) { atomicAdd(&visits[0], 1u); }
    let width = k1 - k0;

    workgroupBarrier();  // the previous tile is no longer read
    for (var e = li; e < KEY_TILE * DEPTH4; e += WORKGROUP) {
      let key = k0 + e / DEPTH4;
      var value = vec4<f32>(0.0);
      if (key < k1) {
        value = loadK(keyHead * p.kHead + key * p.kRow, (e % DEPTH4) * 4u, p.depth);
      }
      keyTileData[e] = value;
    }
    for (var e = li; e < KEY_TILE * VALUE4; e += WORKGROUP) {
      let key = k0 + e / VALUE4;
      var value = vec4<f32>(0.0);
      if (key < k1) {
        value = loadV(valueHead * p.vHead + key * p.vRow, (e % VALUE4) * 4u, p.valueDim);
      }
      valueTileData[e] = value;
    }
    workgroupBarrier();

    let masked = !blockFullyVisible(h, q0, q1, k0, k1);
    var s: array<f32, KEYS_PER_LANE>;
    var tileMax = NO_SCORE;
    for (var c = 0u; c < KEYS_PER_LANE; c++) {
      let key = lane + c * LANES;
      var logit = NO_SCORE;
      if (live && key < width && (!masked || visible(h, i, k0 + key))) {
        logit = finishLogit(h, i, k0 + key, score(&query, key));
      }
      s[c] = logit;
      tileMax = max(tileMax, logit);
    }
    let mNew = max(m, laneMax(tileMax, li));
    // Rescale what was accumulated under the old maximum; a row that saw nothing has l = 0.
    let correction = exp(select(0.0, m - mNew, m > VISIBLE_FLOOR));
    var tileSum = 0.0;
    for (var c = 0u; c < KEYS_PER_LANE; c++) {
      let prob = select(0.0, exp(s[c] - mNew), s[c] > VISIBLE_FLOOR);
      probs[r * KEY_TILE + lane + c * LANES] = prob;
      tileSum += prob;
    }
    m = mNew;
    l = l * correction + tileSum;
    for (var a = 0u; a < ACCUMULATORS; a++) { acc[a] *= correction; }
    workgroupBarrier();  // every lane's probabilities are written

    if (live && mNew > VISIBLE_FLOOR) {
      for (var key = 0u; key < width; key++) {
        let prob = probs[r * KEY_TILE + key];
        for (var a = 0u; a < ACCUMULATORS; a++) {
          let column = lane + a * LANES;
          if (column < VALUE4) { acc[a] += prob * valueTileData[key * VALUE4 + column]; }
        }
      }
    }
  }

  let total = laneSum(l, li);
  if (live) {
    let inverse = select(0.0, 1.0 / total, total > 0.0);
    let base = localHead * p.oHead + i * p.oRow;
    for (var a = 0u; a < ACCUMULATORS; a++) {
      let column = (lane + a * LANES) * 4u;
      for (var e = 0u; e < 4u; e++) {
        if (column + e < p.valueDim) { out[base + column + e] = acc[a][e] * inverse; }
      }
    }
  }
}
`;
}
