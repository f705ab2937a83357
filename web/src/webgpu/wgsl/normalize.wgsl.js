// Unit rows for the cosine score: out[r] = in[r] / |in[r]|, zero rows stay zero (their cosine is 0,
// as in src/attention/prepare.cpp). The norm is taken of the row divided by its largest magnitude,
// so |x|^2 cannot overflow f32 for large finite inputs (the C++ core sums in double instead). One
// invocation per row; workgroups are numbered over x and y (each at most 65535).
//
// Bindings: 0 uniforms, 1 input (element type per storage), 2 output (f32).

import { defineUniforms } from '../uniforms.js';
import { elementType, enables } from './common.wgsl.js';

export const NORMALIZE_UNIFORMS = defineUniforms('NormalizeParams', ['rows', 'depth']);
export const NORMALIZE_WORKGROUP = 64;

/** @param {{ storage: 'f32' | 'f16' }} variant */
export function normalizeKernel({ storage }) {
  return /* wgsl */ `${enables({ f16: storage === 'f16' })}
${NORMALIZE_UNIFORMS.wgsl}
@group(0) @binding(0) var<uniform> p: NormalizeParams;
@group(0) @binding(1) var<storage, read> input: array<${elementType(storage)}>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;

@compute @workgroup_size(${NORMALIZE_WORKGROUP})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let row = (group.y * groups.x + group.x) * ${NORMALIZE_WORKGROUP}u + li;
  if (row >= p.rows) { return; }
  let base = row * p.depth;
  var largest = 0.0;
  for (var d = 0u; d < p.depth; d++) { largest = max(largest, abs(f32(input[base + d]))); }
  if (largest == 0.0) {
    for (var d = 0u; d < p.depth; d++) { output[base + d] = 0.0; }
    return;
  }
  var sum = 0.0;  // in [1, depth]: the largest element contributes exactly 1
  for (var d = 0u; d < p.depth; d++) {
    let x = f32(input[base + d]) / largest;
    sum += x * x;
  }
  let inverseNorm = inverseSqrt(sum);
  for (var d = 0u; d < p.depth; d++) {
    output[base + d] = (f32(input[base + d]) / largest) * inverseNorm;
  }
}
`;
}
