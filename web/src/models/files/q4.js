// 4-bit weights as the core keeps a linear layer's matrix under dtype 'q4' (src/models/q4.h):
// the matrix [out, in] as `out` rows of in / 32 sub-blocks of 24 bytes, each an f32 scale s and
// an f32 min m (little-endian) and 16 bytes of nibbles q (low nibbles the sub-block's first 16
// values, high nibbles the last 16), value = s * q - m. Both of GGUF's 4-bit types become that
// without rounding anything: Q4_0 (s = d, m = 8 d) and Q4_K (s = d * sc, m = dmin * mn, the
// float32 products ggml's dequantize_row_q4_K computes), so s * q - m is, bit for bit, the value
// gguf-types.js's dequantisation gives. f32/f16 checkpoints (and a GGUF's other types) are
// quantised to Q4_0 as llama.cpp's quantize_row_q4_0_ref does.

import { halfBits } from '../../webgpu/f16.js';
import { halfToFloat, scaleMinK4 } from './gguf-types.js';
import { QUANT_BLOCK, readBlock, requireBlockDepth, requireHalfScale } from './quant-blocks.js';

export const Q4_BLOCK = QUANT_BLOCK;
export const Q4_BLOCK_BYTES = 24;

/** Bytes of a 4-bit matrix of `elements` values (a multiple of 32). */
export const q4Bytes = (elements) => (elements / Q4_BLOCK) * Q4_BLOCK_BYTES;

/** The GGUF types whose blocks become 4-bit sub-blocks as they are. */
export const Q4_GGUF_TYPES = Object.freeze(['Q4_0', 'Q4_K']);

const f = Math.fround;

// Writes one sub-block at `at`: s, m, then the 32 nibbles `q` (q[i] | q[i + 16] << 4).
function writeBlock(view, out, at, s, m, q) {
  view.setFloat32(at, s, true);
  view.setFloat32(at + 4, m, true);
  for (let i = 0; i < 16; i++) out[at + 8 + i] = q[i] | (q[i + 16] << 4);
}

/**
 * Quantises the matrix in `values` (Float32Array, row-major: [out, in] when `transposed`, as
 * nn.Linear stores it, else [in, out], Conv1D's) into `out` (Uint8Array of q4Bytes(in * out))
 * as Q4_0 (d = the value of largest magnitude / -8, stored as f16; q = min(15, trunc(x / d +
 * 8.5))), written as 4-bit rows of the [out, in] matrix. `name` names the tensor in errors.
 */
export function quantizeQ4_0(values, layout, out, name) {
  const { inFeatures, outFeatures } = layout;
  requireBlockDepth(inFeatures, '4-bit', name);
  const blocks = inFeatures / Q4_BLOCK;
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const column = new Float32Array(Q4_BLOCK);
  const q = new Uint8Array(Q4_BLOCK);
  for (let o = 0; o < outFeatures; o++) {
    for (let b = 0; b < blocks; b++) {
      readBlock(values, layout, o, b, column);
      let amax = 0;
      let max = 0;
      for (const x of column) {
        if (amax < Math.abs(x)) {
          amax = Math.abs(x);
          max = x;
        }
      }
      const d = f(max / -8);
      const inverse = d === 0 ? 0 : f(1 / d);
      const bits = halfBits(d);
      requireHalfScale(bits, amax, o, 'Q4_0', name);
      for (let i = 0; i < Q4_BLOCK; i++) {
        // (int8_t)(x * id + 8.5f): a truncation toward zero, then at most 15.
        q[i] = Math.min(15, Math.trunc(f(f(column[i] * inverse) + 8.5)));
      }
      const scale = halfToFloat(bits);
      writeBlock(view, out, (o * blocks + b) * Q4_BLOCK_BYTES, scale, f(8 * scale), q);
    }
  }
}

/**
 * A GGUF Q4_0 or Q4_K tensor's blocks (`raw`, exactly the tensor's bytes: rows of [out, in], in
 * values each) as 4-bit rows into `out` (Uint8Array of q4Bytes(rows * in)).
 */
export function q4FromGguf(raw, type, out) {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const q = new Uint8Array(Q4_BLOCK);
  const half = (at) => halfToFloat(raw[at] | (raw[at + 1] << 8));
  if (type === 'Q4_0') {
    for (let b = 0, at = 0; at < raw.length; b++, at += 18) {
      const d = half(at);
      for (let i = 0; i < 16; i++) {
        q[i] = raw[at + 2 + i] & 0x0f;
        q[i + 16] = raw[at + 2 + i] >> 4;
      }
      writeBlock(view, out, b * Q4_BLOCK_BYTES, d, f(8 * d), q);
    }
    return out;
  }
  // Q4_K: 144 bytes per 256 values: d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of
  // nibbles (sub-blocks 2j and 2j + 1 are the low and high nibbles of 32 bytes).
  for (let block = 0, at = 0; at < raw.length; block++, at += 144) {
    const d = half(at);
    const dmin = half(at + 2);
    for (let sub = 0; sub < 8; sub++) {
      const [sc, mn] = scaleMinK4(raw, at + 4, sub);
      const qs = at + 16 + (sub >> 1) * 32;
      for (let l = 0; l < 32; l++) q[l] = sub & 1 ? raw[qs + l] >> 4 : raw[qs + l] & 0x0f;
      writeBlock(view, out, (block * 8 + sub) * Q4_BLOCK_BYTES, f(d * sc), f(dmin * mn), q);
    }
  }
  return out;
}

/** The float32 values of 4-bit rows (s * q - m, each rounded as the core's kernels do). */
export function dequantizeQ4(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const blocks = bytes.byteLength / Q4_BLOCK_BYTES;
  const values = new Float32Array(blocks * Q4_BLOCK);
  for (let b = 0; b < blocks; b++) {
    const at = b * Q4_BLOCK_BYTES;
    const s = view.getFloat32(at, true);
    const m = view.getFloat32(at + 4, true);
    for (let i = 0; i < 16; i++) {
      const byte = bytes[at + 8 + i];
      values[b * Q4_BLOCK + i] = f(f(s * (byte & 0x0f)) - m);
      values[b * Q4_BLOCK + i + 16] = f(f(s * (byte >> 4)) - m);
    }
  }
  return values;
}
