// Strided batched matrix product, the GPU's general workhorse:
//
//   C(b, i, j) = bias(b, j) + sum_k  combine(A(b, i, k), B(b, k, j))
//   X(b, r, c) = X[xOffset + ((b + xShift) / xGroup) * xBatch + r * xRow + c * xCol]
//                (A and B; C and bias: X[xOffset + b * xBatch + r * xRow + c], xGroup = 1)
//
// A group > 1 reads one batch of an operand for `group` consecutive batches of C: the K/V head
// that several query heads share under grouped-query attention, never copied per query head.
//
// with combine = a * b (projections, Q K^T scores, weights x V) or, for the additive score,
// v(b, k) * tanh(a + b) (Bahdanau scores over projected queries and keys). Strides express
// transposes, head splits and the token-major concatenation of heads without copies.
//
// A workgroup of 16 x 16 invocations computes a 64 x 64 block of C, 4 x 4 per invocation, from
// 64 x 16 and 16 x 64 tiles of A and B in workgroup memory (8 KiB: under every device's limit).
//
// Bindings: 0 uniforms, 1 a, 2 b (element type per variant), 3 c (f32), 4 bias (f32; bound to a
// dummy when hasBias = 0), 5 additiveV (additive only).

import { defineUniforms } from '../uniforms.js';
import { SAFE_TANH, elementType, enables } from './common.wgsl.js';

export const GEMM_UNIFORMS = defineUniforms('GemmParams', [
  'm',
  'n',
  'k',
  'aOffset',
  'aBatch',
  'aRow',
  'aCol',
  'aGroup',
  'aShift',
  'bOffset',
  'bBatch',
  'bRow',
  'bCol',
  'bGroup',
  'bShift',
  'cOffset',
  'cBatch',
  'cRow',
  'hasBias',
  'biasBatch',
  'vOffset',
  'vBatch', // additive: v(b, k) = additiveV[vOffset + b * vBatch + k]
]);

export const GEMM_TILE = 64;

/**
 * @param {{ a: 'f32' | 'f16', b: 'f32' | 'f16', combine: 'multiply' | 'additive' }} variant
 */
export function gemmKernel({ a, b, combine }) {
  const additive = combine === 'additive';
  return /* wgsl */ `${enables({ f16: a === 'f16' || b === 'f16' })}
${GEMM_UNIFORMS.wgsl}
@group(0) @binding(0) var<uniform> p: GemmParams;
@group(0) @binding(1) var<storage, read> aData: array<${elementType(a)}>;
@group(0) @binding(2) var<storage, read> bData: array<${elementType(b)}>;
@group(0) @binding(3) var<storage, read_write> cData: array<f32>;
@group(0) @binding(4) var<storage, read> bias: array<f32>;
${additive ? '@group(0) @binding(5) var<storage, read> additiveV: array<f32>;' : ''}

const TILE: u32 = ${GEMM_TILE}u;
const DEPTH: u32 = 16u;

var<workgroup> aTile: array<f32, ${GEMM_TILE * 16}>;  // [TILE rows][DEPTH]
var<workgroup> bTile: array<f32, ${GEMM_TILE * 16}>;  // [DEPTH][TILE columns]
${additive ? 'var<workgroup> vTile: array<f32, 16>;' : ''}
${additive ? SAFE_TANH : ''}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let batch = group.z;
  let row0 = group.y * TILE;
  let col0 = group.x * TILE;
  let aBase = p.aOffset + ((batch + p.aShift) / p.aGroup) * p.aBatch;
  let bBase = p.bOffset + ((batch + p.bShift) / p.bGroup) * p.bBatch;
  var acc: array<f32, 16>;

  for (var k0 = 0u; k0 < p.k; k0 += DEPTH) {
    for (var e = li; e < TILE * DEPTH; e += 256u) {
      let row = row0 + e / DEPTH;
      let kk = k0 + e % DEPTH;
      var value = 0.0;
      if (row < p.m && kk < p.k) { value = f32(aData[aBase + row * p.aRow + kk * p.aCol]); }
      aTile[e] = value;
    }
    for (var e = li; e < TILE * DEPTH; e += 256u) {
      let kk = k0 + e / TILE;
      let col = col0 + e % TILE;
      var value = 0.0;
      if (col < p.n && kk < p.k) { value = f32(bData[bBase + kk * p.bRow + col * p.bCol]); }
      bTile[e] = value;
    }
${
  additive
    ? `    if (li < DEPTH) {
      var value = 0.0;  // v = 0 beyond k: padded terms add nothing
      if (k0 + li < p.k) { value = additiveV[p.vOffset + batch * p.vBatch + k0 + li]; }
      vTile[li] = value;
    }`
    : ''
}
    workgroupBarrier();
    for (var kk = 0u; kk < DEPTH; kk++) {
${additive ? '      let weight = vTile[kk];' : ''}
      for (var r = 0u; r < 4u; r++) {
        let a = aTile[(local.y + r * 16u) * DEPTH + kk];
${
  additive
    ? `        let terms = vec4<f32>(a) + vec4<f32>(
          bTile[kk * TILE + local.x], bTile[kk * TILE + local.x + 16u],
          bTile[kk * TILE + local.x + 32u], bTile[kk * TILE + local.x + 48u]);
        let t = weight * safeTanh(terms);`
    : `        let t = a * vec4<f32>(bTile[kk * TILE + local.x], bTile[kk * TILE + local.x + 16u],
                              bTile[kk * TILE + local.x + 32u], bTile[kk * TILE + local.x + 48u]);`
}
        for (var c = 0u; c < 4u; c++) { acc[r * 4u + c] += t[c]; }
      }
    }
    workgroupBarrier();
  }

  for (var r = 0u; r < 4u; r++) {
    let row = row0 + local.y + r * 16u;
    for (var c = 0u; c < 4u; c++) {
      let col = col0 + local.x + c * 16u;
      if (row < p.m && col < p.n) {
        var value = acc[r * 4u + c];
        if (p.hasBias != 0u) { value += bias[batch * p.biasBatch + col]; }
        cData[p.cOffset + batch * p.cBatch + row * p.cRow + col] = value;
      }
    }
  }
}
`;
}
