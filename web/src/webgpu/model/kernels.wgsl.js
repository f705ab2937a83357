// The WGSL kernels of a model's forward pass on the GPU (gpu-model.js), f32 arithmetic throughout:
// the embeddings, layer norm, a tiled linear layer with its bias, GELU and residual fused in, and
// attention that writes its probabilities where the views read them. Each kernel's uniforms are
// described once (uniforms.js), so WGSL and the JS packing share one field list.

import { defineUniforms } from '../uniforms.js';

/**
 * A read-only weight binding and its accessor `${name}At(i)`, the weight held on the GPU as the
 * model holds it in wasm (`storage`):
 * - 'f32';
 * - 'halves' (dtype 'f16'): two halves per u32, widened by unpack2x16float (core WGSL on every
 *   adapter, no 'shader-f16'), exactly: half the memory and bandwidth;
 * - 'q8' (dtype 'q8'): GGML's Q8_0 rows of the [out, in] matrix, per 32 inputs a little-endian
 *   f16 scale d and 32 int8 q (34 bytes, so read byte by byte), value q * d, exact in f32;
 * - 'q4' (dtype 'q4'): the core's 4-bit rows (src/models/q4.h), per 32 inputs an f32 scale s,
 *   an f32 min m and 16 bytes of nibbles (depth j low, j + 16 high), value s * q - m, one
 *   rounding (s * q is exact), as wasm's.
 * Quantised rows are [out, in]: a kernel reads them at out * in + depth (transposed).
 * The arithmetic stays f32.
 */
export function weightBinding(binding, name, storage = 'f32') {
  const declaration = `@group(0) @binding(${binding}) var<storage, read> ${name}: array<${
    storage === 'f32' ? 'f32' : 'u32'
  }>;`;
  const byteAt = `fn ${name}Byte(o: u32) -> u32 {
  return (${name}[o >> 2u] >> ((o & 3u) * 8u)) & 0xffu;
}`;
  const accessors = {
    f32: `fn ${name}At(i: u32) -> f32 { return ${name}[i]; }`,
    halves: `fn ${name}At(i: u32) -> f32 {
  let pair = unpack2x16float(${name}[i >> 1u]);
  return select(pair.x, pair.y, (i & 1u) == 1u);
}`,
    q8: `${byteAt}
fn ${name}At(i: u32) -> f32 {
  let base = (i / 32u) * 34u;
  let scale = unpack2x16float(${name}Byte(base) | (${name}Byte(base + 1u) << 8u)).x;
  let q = i32(${name}Byte(base + 2u + i % 32u) << 24u) >> 24u;
  return f32(q) * scale;
}`,
    q4: `${byteAt}
fn ${name}At(i: u32) -> f32 {
  let word = (i / 32u) * 6u;
  let within = i % 32u;
  let byte = ${name}Byte((word + 2u) * 4u + within % 16u);
  let q = select(byte & 0xfu, byte >> 4u, within >= 16u);
  return f32(q) * bitcast<f32>(${name}[word]) - bitcast<f32>(${name}[word + 1u]);
}`,
  };
  return `${declaration}\n${accessors[storage]}`;
}

export const EMBED_UNIFORMS = defineUniforms('EmbedParams', ['tokens', 'hidden', 'past']);
export const EMBED_WORKGROUP = 256;

/**
 * x[i, c] = wte[ids[i], c] + wpe[past + i, c]; without `positions` (rotary models) wte's row only.
 * `storage`: [wte's, wpe's] (weightBinding: 'f32' or 'halves').
 * @param {{ positions: boolean, storage?: string[] }} variant
 */
export function embedKernel({ positions, storage = ['f32', 'f32'] }) {
  const position = positions ? ' + wpeAt((p.past + i) * p.hidden + c)' : '';
  return `${EMBED_UNIFORMS.wgsl}
@group(0) @binding(0) var<uniform> p: EmbedParams;
@group(0) @binding(1) var<storage, read> ids: array<u32>;
${weightBinding(2, 'wte', storage[0])}
@group(0) @binding(3) var<storage, read_write> x: array<f32>;
${positions ? weightBinding(4, 'wpe', storage[1]) : ''}

@compute @workgroup_size(${EMBED_WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let index = gid.x;
  if (index >= p.tokens * p.hidden) { return; }
  let i = index / p.hidden;
  let c = index % p.hidden;
  x[index] = wteAt(ids[i] * p.hidden + c)${position};
}
`;
}

/**
 * A vision transformer's input: x[0] = cls + pos[0], x[1 + p] = patches[p] + pos[1 + p] (the
 * patches already through the patch embedding's linear layer).
 */
export function visionEmbedKernel() {
  return `${EMBED_UNIFORMS.wgsl}
@group(0) @binding(0) var<uniform> p: EmbedParams;
@group(0) @binding(1) var<storage, read> patches: array<f32>;
@group(0) @binding(2) var<storage, read> cls: array<f32>;
@group(0) @binding(3) var<storage, read_write> x: array<f32>;
@group(0) @binding(4) var<storage, read> positions: array<f32>;

@compute @workgroup_size(${EMBED_WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let index = gid.x;
  if (index >= p.tokens * p.hidden) { return; }
  let r = index / p.hidden;
  let c = index % p.hidden;
  var value = cls[c];
  if (r > 0u) { value = patches[(r - 1u) * p.hidden + c]; }
  x[index] = value + positions[index];
}
`;
}

export const NORM_UNIFORMS = defineUniforms('NormParams', ['columns', 'eps:f32']);
export const NORM_WORKGROUP = 256;

/**
 * One row per workgroup. LayerNorm: y = (x - mean) / sqrt(var + eps) * weight + bias, two
 * passes; RMSNorm (`rms`): y = x / sqrt(mean(x^2) + eps) * weight.
 * @param {{ rms: boolean }} variant
 */
export function normKernel({ rms }) {
  const body = rms
    ? `let inverse = inverseSqrt(rowSum(t, squares(t, base, 0.0)) / f32(p.columns) + p.eps);
  for (var c = t; c < p.columns; c = c + ${NORM_WORKGROUP}u) {
    y[base + c] = x[base + c] * inverse * weight[c];
  }`
    : `var sum = 0.0;
  for (var c = t; c < p.columns; c = c + ${NORM_WORKGROUP}u) { sum = sum + x[base + c]; }
  let mean = rowSum(t, sum) / f32(p.columns);
  let inverse = inverseSqrt(rowSum(t, squares(t, base, mean)) / f32(p.columns) + p.eps);
  for (var c = t; c < p.columns; c = c + ${NORM_WORKGROUP}u) {
    y[base + c] = (x[base + c] - mean) * inverse * weight[c] + bias[c];
  }`;
  return `${NORM_UNIFORMS.wgsl}
@group(0) @binding(0) var<uniform> p: NormParams;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> weight: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
${rms ? '' : '@group(0) @binding(4) var<storage, read> bias: array<f32>;'}

var<workgroup> partial: array<f32, ${NORM_WORKGROUP}>;

fn rowSum(t: u32, value: f32) -> f32 {
  partial[t] = value;
  workgroupBarrier();
  for (var step = ${NORM_WORKGROUP / 2}u; step > 0u; step = step / 2u) {
    if (t < step) { partial[t] = partial[t] + partial[t + step]; }
    workgroupBarrier();
  }
  let total = partial[0];
  workgroupBarrier();
  return total;
}

// This invocation's share of the row's sum of (x - center)^2.
fn squares(t: u32, base: u32, center: f32) -> f32 {
  var total = 0.0;
  for (var c = t; c < p.columns; c = c + ${NORM_WORKGROUP}u) {
    let d = x[base + c] - center;
    total = total + d * d;
  }
  return total;
}

@compute @workgroup_size(${NORM_WORKGROUP})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
  let t = local.x;
  let base = group.x * p.columns;
  ${body}
}
`;
}

// y [m, n] (=, or += with `accumulate`) act(a [m, k] rows from aRow x W + bias): a 64 x 64 tile
// per workgroup, 4 x 4 outputs per invocation, k in steps of 16 through workgroup memory.
export const LINEAR_UNIFORMS = defineUniforms('LinearParams', ['m', 'n', 'k', 'aRow']);
export const LINEAR_TILE = 64;
const DEPTH = 16;

/**
 * @param {{ transposed: boolean, gelu: boolean | 'erf', accumulate: boolean, gated: boolean,
 *   storage: string }}
 *   variant `transposed`: W is [n, k] (nn.Linear, an LM head) rather than [k, n] (GPT-2's
 *   Conv1D); `gelu`: true (the tanh form, gelu_new) or 'erf' (the exact form); `accumulate`: add
 *   to y (a residual connection) instead of writing it; `gated`: multiply by silu(gate[row,
 *   col]) (the llama MLP's up projection); `storage`: how W is held (weightBinding)
 */
export function linearKernel({ transposed, gelu, accumulate, gated = false, storage = 'f32' }) {
  // Quantised rows are [out, in] whatever the checkpoint's layout (weightBinding).
  transposed ||= storage === 'q8' || storage === 'q4';
  const weightAt = transposed ? 'wAt(col * p.k + kk)' : 'wAt(kk * p.n + col)';
  // Consecutive invocations read consecutive addresses of W in either layout.
  const weightTile = transposed
    ? 'let r = index % 16u; let c = index / 16u;'
    : 'let r = index / 64u; let c = index % 64u;';
  // gelu 'tanh' (gelu_new) or 'erf' (the exact form; erf by Abramowitz and Stegun 7.1.26, within
  // 1.5e-7, as WGSL has no erf).
  const activate =
    gelu === 'erf'
      ? `let z = abs(v) * 0.7071067811865476;
        let s = 1.0 / (1.0 + 0.3275911 * z);
        let poly = s * (0.254829592 + s * (-0.284496736 + s * (1.421413741 +
          s * (-1.453152027 + s * 1.061405429))));
        let e = sign(v) * (1.0 - poly * exp(-z * z));
        v = 0.5 * v * (1.0 + e);`
      : gelu
        ? `let inner = clamp(0.7978845608028654 * (v + 0.044715 * v * v * v), -15.0, 15.0);
        v = 0.5 * v * (1.0 + tanh(inner));`
        : '';
  const gate = gated ? 'let g = gate[at];\n        v = v * (g / (1.0 + exp(min(-g, 80.0))));' : '';
  const store = accumulate ? 'y[at] = y[at] + v;' : 'y[at] = v;';
  return `${LINEAR_UNIFORMS.wgsl}
@group(0) @binding(0) var<uniform> p: LinearParams;
@group(0) @binding(1) var<storage, read> a: array<f32>;
${weightBinding(2, 'w', storage)}
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
${gated ? '@group(0) @binding(5) var<storage, read> gate: array<f32>;' : ''}

var<workgroup> tileA: array<f32, ${LINEAR_TILE * DEPTH}>;
var<workgroup> tileW: array<f32, ${DEPTH * LINEAR_TILE}>;

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
  let row0 = group.y * ${LINEAR_TILE}u;
  let col0 = group.x * ${LINEAR_TILE}u;
  let t = local.y * 16u + local.x;
  var acc: array<f32, 16>;
  for (var k0 = 0u; k0 < p.k; k0 = k0 + ${DEPTH}u) {
    for (var e = 0u; e < 4u; e = e + 1u) {
      let index = t + e * 256u;
      let r = index / 16u;
      let c = index % 16u;
      let row = row0 + r;
      let kk = k0 + c;
      var value = 0.0;
      if (row < p.m && kk < p.k) { value = a[(p.aRow + row) * p.k + kk]; }
      tileA[r * 16u + c] = value;
    }
    for (var e = 0u; e < 4u; e = e + 1u) {
      let index = t + e * 256u;
      ${weightTile}
      let kk = k0 + r;
      let col = col0 + c;
      var value = 0.0;
      if (col < p.n && kk < p.k) { value = ${weightAt}; }
      tileW[r * 64u + c] = value;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < ${DEPTH}u; kk = kk + 1u) {
      var av: array<f32, 4>;
      var wv: array<f32, 4>;
      for (var i = 0u; i < 4u; i = i + 1u) { av[i] = tileA[(local.y + 16u * i) * 16u + kk]; }
      for (var j = 0u; j < 4u; j = j + 1u) { wv[j] = tileW[kk * 64u + local.x + 16u * j]; }
      for (var i = 0u; i < 4u; i = i + 1u) {
        for (var j = 0u; j < 4u; j = j + 1u) { acc[i * 4u + j] = acc[i * 4u + j] + av[i] * wv[j]; }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i = i + 1u) {
    let row = row0 + local.y + 16u * i;
    for (var j = 0u; j < 4u; j = j + 1u) {
      let col = col0 + local.x + 16u * j;
      if (row < p.m && col < p.n) {
        var v = acc[i * 4u + j] + bias[col];
        ${activate}
        let at = row * p.n + col;
        ${gate}
        ${store}
      }
    }
  }
}
`;
}

// One workgroup per (query, head): the scores of the query's row into `probabilities` [heads,
// N, N], its softmax in place (zeros where the mask hides a key), then the weighted sum of the
// values. q, k and v are read through strides and offsets (GPT-2's c_attn packs them in one
// [N, 3 * hidden] matrix, bound three times); query head h reads K/V head h / group (grouped
// query attention).
export const ATTENTION_UNIFORMS = defineUniforms('AttentionParams', [
  'tokens',
  'headDim',
  'qStride',
  'kvStride',
  'kOffset',
  'vOffset',
  'group',
  'outStride',
  'scale:f32',
]);
export const ATTENTION_WORKGROUP = 64;

/** @param {{ causal: boolean }} variant */
export function attentionKernel({ causal }) {
  const W = ATTENTION_WORKGROUP;
  return `${ATTENTION_UNIFORMS.wgsl}
@group(0) @binding(0) var<uniform> p: AttentionParams;
@group(0) @binding(1) var<storage, read> qs: array<f32>;
@group(0) @binding(2) var<storage, read> ks: array<f32>;
@group(0) @binding(3) var<storage, read> vs: array<f32>;
@group(0) @binding(4) var<storage, read_write> probabilities: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;

var<workgroup> partial: array<f32, ${W}>;

fn reduce(t: u32, value: f32, isMax: bool) -> f32 {
  partial[t] = value;
  workgroupBarrier();
  for (var step = ${W / 2}u; step > 0u; step = step / 2u) {
    if (t < step) {
      if (isMax) { partial[t] = max(partial[t], partial[t + step]); }
      else { partial[t] = partial[t] + partial[t + step]; }
    }
    workgroupBarrier();
  }
  let result = partial[0];
  workgroupBarrier();
  return result;
}

@compute @workgroup_size(${W})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
  let t = local.x;
  let i = group.x;
  let head = group.y;
  let n = p.tokens;
  let q = i * p.qStride + head * p.headDim;
  let kvColumn = (head / p.group) * p.headDim;
  let row = (head * n + i) * n;
  let visible = ${causal ? 'i + 1u' : 'n'};
  var best = -3.0e38;
  for (var j = t; j < visible; j = j + ${W}u) {
    let k = j * p.kvStride + p.kOffset + kvColumn;
    var dot = 0.0;
    for (var d = 0u; d < p.headDim; d = d + 1u) { dot = dot + qs[q + d] * ks[k + d]; }
    let score = dot * p.scale;
    probabilities[row + j] = score;
    best = max(best, score);
  }
  best = reduce(t, best, true);
  var sum = 0.0;
  for (var j = t; j < visible; j = j + ${W}u) {
    let e = exp(probabilities[row + j] - best);
    probabilities[row + j] = e;
    sum = sum + e;
  }
  let inverse = 1.0 / reduce(t, sum, false);
  for (var j = t; j < n; j = j + ${W}u) {
    var value = 0.0;
    if (j < visible) { value = probabilities[row + j] * inverse; }
    probabilities[row + j] = value;
  }
  storageBarrier();
  for (var d = t; d < p.headDim; d = d + ${W}u) {
    var acc = 0.0;
    let v = p.vOffset + kvColumn + d;
    for (var j = 0u; j < visible; j = j + 1u) {
      acc = acc + probabilities[row + j] * vs[j * p.kvStride + v];
    }
    out[i * p.outStride + head * p.headDim + d] = acc;
  }
}
`;
}

export const ROTARY_UNIFORMS = defineUniforms('RotaryParams', [
  'tokens',
  'heads',
  'headDim',
  'stride',
]);
export const ROTARY_WORKGROUP = 256;

/**
 * Rotary position embedding in place, rotate_half form (first half of each head against its
 * second half), with the cos and sin tables [N, headDim / 2] the core computes.
 */
export function rotaryKernel() {
  return `${ROTARY_UNIFORMS.wgsl}
@group(0) @binding(0) var<uniform> p: RotaryParams;
@group(0) @binding(1) var<storage, read> cosines: array<f32>;
@group(0) @binding(2) var<storage, read> sines: array<f32>;
@group(0) @binding(3) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(${ROTARY_WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let half = p.headDim / 2u;
  let index = gid.x;
  if (index >= p.tokens * p.heads * half) { return; }
  let i = index % half;
  let head = (index / half) % p.heads;
  let r = index / (half * p.heads);
  let at = r * p.stride + head * p.headDim + i;
  let a = x[at];
  let b = x[at + half];
  let c = cosines[r * half + i];
  let s = sines[r * half + i];
  x[at] = a * c - b * s;
  x[at + half] = b * c + a * s;
}
`;
}
