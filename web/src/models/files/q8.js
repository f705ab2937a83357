// Q8_0, GGML's 8-bit block (32 int8 values q and one f16 scale d, value = q * d), as the core
// keeps a linear layer's matrix under dtype 'q8' (src/models/q8_0.h): the matrix [out, in] as
// `out` rows of in / 32 blocks of 34 bytes, a little-endian f16 scale then the 32 int8. A GGUF
// Q8_0 tensor is already that; f32/f16 checkpoints are quantised here as llama.cpp's
// quantize_row_q8_0 does (d = max |x| / 127, q = round(x / d)).

import { halfBits } from '../../webgpu/f16.js';
import { QUANT_BLOCK, readBlock, requireBlockDepth, requireHalfScale } from './quant-blocks.js';

export const Q8_BLOCK = QUANT_BLOCK;
export const Q8_BLOCK_BYTES = 34;

/** Bytes of a Q8_0 matrix of `elements` values (a multiple of 32). */
export const q8Bytes = (elements) => (elements / Q8_BLOCK) * Q8_BLOCK_BYTES;

/**
 * Quantises the matrix in `values` (Float32Array, row-major: [out, in] when `transposed`, as
 * nn.Linear stores it, else [in, out], Conv1D's) into `out` (Uint8Array of q8Bytes(in * out))
 * as Q8_0 rows of the [out, in] matrix. `name` names the tensor in errors.
 */
export function quantizeQ8_0(values, layout, out, name) {
  const { inFeatures, outFeatures } = layout;
  requireBlockDepth(inFeatures, 'Q8_0', name);
  const blocks = inFeatures / Q8_BLOCK;
  const column = new Float32Array(Q8_BLOCK);
  const scale = new Float32Array(1);
  for (let o = 0; o < outFeatures; o++) {
    for (let b = 0; b < blocks; b++) {
      readBlock(values, layout, o, b, column);
      let amax = 0;
      for (let i = 0; i < Q8_BLOCK; i++) amax = Math.max(amax, Math.abs(column[i]));
      scale[0] = amax / 127; // the f32 scale, as GGML computes it, rounded to f16 when stored
      const inverse = scale[0] === 0 ? 0 : Math.fround(1 / scale[0]);
      const at = (o * blocks + b) * Q8_BLOCK_BYTES;
      const bits = halfBits(scale[0]);
      requireHalfScale(bits, amax, o, 'Q8_0', name);
      out[at] = bits & 0xff;
      out[at + 1] = bits >>> 8;
      for (let i = 0; i < Q8_BLOCK; i++) {
        // roundf: half away from zero; |x| / d <= 127 by construction.
        const q = Math.sign(column[i]) * Math.round(Math.fround(Math.abs(column[i]) * inverse));
        out[at + 2 + i] = q & 0xff;
      }
    }
  }
}
