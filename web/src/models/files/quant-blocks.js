// What the quantisers of q8.js and q4.js share: both write a matrix [out, in] as `out` rows of
// blocks of 32 values, read from a checkpoint's layout, with a scale stored as f16.

import { attnlensError } from '../../errors.js';

/** Values per block of both formats. */
export const QUANT_BLOCK = 32;

/** Refuses a depth (input features) that is not whole blocks; `format` names the blocks. */
export function requireBlockDepth(inFeatures, format, name) {
  if (inFeatures % QUANT_BLOCK !== 0) {
    throw attnlensError(
      'invalid_argument',
      name,
      `has ${inFeatures} input features; ${format} blocks need a multiple of ${QUANT_BLOCK}`,
      { tensor: name },
    );
  }
}

/**
 * Copies block `b` of row `o` of the [out, in] matrix into `block` (Float32Array(32)) from
 * `values`, row-major [out, in] when `transposed` (nn.Linear's layout), else [in, out] (Conv1D's).
 */
export function readBlock(values, { inFeatures, outFeatures, transposed }, o, b, block) {
  for (let i = 0; i < QUANT_BLOCK; i++) {
    const p = b * QUANT_BLOCK + i;
    block[i] = transposed ? values[o * inFeatures + p] : values[p * outFeatures + o];
  }
}

/**
 * Refuses a block of row `row` whose f16 scale `bits` overflowed from finite values up to `amax`
 * (a non-finite value is the finiteness check's to name); `format` names the blocks.
 */
export function requireHalfScale(bits, amax, row, format, name) {
  if ((bits & 0x7c00) === 0x7c00 && Number.isFinite(amax)) {
    throw attnlensError(
      'out_of_range',
      name,
      `values up to ${amax} in row ${row} need a ${format} scale beyond f16's 65504; load the ` +
        "model with dtype 'f32'",
      { tensor: name },
    );
  }
}
