// Element types of checkpoint tensors (safetensors' names) and the conversions the TensorSet
// offers: any float type to float32, and any float type to IEEE half bits, rounded to nearest
// even. Values that do not fit the target type are an error, never a silent Infinity.

import { attnlensError } from '../../errors.js';
import { halfBits } from '../../webgpu/f16.js';

/** Bytes per element of every dtype safetensors defines. */
export const DTYPE_BYTES = Object.freeze({
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  F8_E4M3: 1,
  F8_E5M2: 1,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U64: 8,
  U32: 4,
  U16: 2,
  U8: 1,
  BOOL: 1,
});

/** The dtypes readFloat32 / readFloat16 convert. */
export const FLOAT_DTYPES = new Set(['F64', 'F32', 'F16', 'BF16']);

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const F32_MAX = 3.4028234663852886e38;

// Scratch for reading BF16 bits as a float32.
const castF32 = new Float32Array(1);
const castU32 = new Uint32Array(castF32.buffer);

let halfTable = null;
/** float32 value of every half bit pattern (256 KiB, built on first use). */
function halfToFloatTable() {
  if (halfTable) return halfTable;
  halfTable = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >>> 10) & 0x1f;
    const mantissa = h & 0x3ff;
    if (exponent === 0) halfTable[h] = sign * mantissa * 2 ** -24;
    else if (exponent === 31) halfTable[h] = mantissa ? NaN : sign * Infinity;
    else halfTable[h] = sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
  }
  return halfTable;
}

/**
 * Little-endian elements of `dtype` in `bytes`, as the typed array that reads them, copied to
 * an aligned buffer when `bytes` is not aligned for that type (or the host is big-endian).
 */
function typedView(bytes, dtype) {
  const size = DTYPE_BYTES[dtype];
  const count = bytes.byteLength / size;
  const Type = { 8: Float64Array, 4: dtype === 'F32' ? Float32Array : Uint32Array, 2: Uint16Array }[
    size
  ];
  if (!LITTLE_ENDIAN) return bigEndianView(bytes, dtype, Type, count);
  if (bytes.byteOffset % size === 0) return new Type(bytes.buffer, bytes.byteOffset, count);
  const copy = new Type(count);
  new Uint8Array(copy.buffer).set(bytes);
  return copy;
}

function bigEndianView(bytes, dtype, Type, count) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Type(count);
  const size = DTYPE_BYTES[dtype];
  for (let i = 0; i < count; i++) {
    if (size === 8) out[i] = view.getFloat64(i * 8, true);
    else if (Type === Float32Array) out[i] = view.getFloat32(i * 4, true);
    else out[i] = view.getUint16(i * 2, true);
  }
  return out;
}

// A finite value the target type cannot hold: for float16 the model can be loaded in float32;
// beyond float32 (an F64 weight of 1e300) no model can use the tensor.
function overflow(name, index, value, target) {
  const advice =
    target === 'float16'
      ? "(at most 65504); load the model with dtype 'f32'"
      : '(at most 3.4e38), the widest type the model computes in: the weight is out of range, ' +
        'the checkpoint is broken';
  return attnlensError(
    'out_of_range',
    name,
    `element ${index} (${value}) does not fit in ${target} ${advice}`,
    { tensor: name, index },
  );
}

/**
 * Converts `count` contiguous elements of `dtype` in `bytes` into `out[at..at+count)` as float32.
 * `name` names the tensor in errors.
 */
export function convertToFloat32(bytes, dtype, out, at, name) {
  const source = typedView(bytes, dtype);
  const count = source.length;
  if (dtype === 'F32') {
    out.set(source, at);
  } else if (dtype === 'F16') {
    const table = halfToFloatTable();
    for (let i = 0; i < count; i++) out[at + i] = table[source[i]];
  } else if (dtype === 'BF16') {
    const bits = new Uint32Array(out.buffer, out.byteOffset + at * 4, count);
    for (let i = 0; i < count; i++) bits[i] = source[i] << 16;
  } else {
    for (let i = 0; i < count; i++) {
      const value = source[i];
      if (Math.abs(value) > F32_MAX && Number.isFinite(value)) {
        throw overflow(name, at + i, value, 'float32');
      }
      out[at + i] = value;
    }
  }
}

/**
 * Converts `count` contiguous elements of `dtype` in `bytes` into `out[at..at+count)` as half
 * bits. F32, BF16 and F64 round to nearest even (F64 through float32: 24 bits >= 2 * 11 + 2, so
 * the double rounding is still correct); a finite value beyond half's range is a RangeError.
 */
export function convertToFloat16(bytes, dtype, out, at, name) {
  const source = typedView(bytes, dtype);
  const count = source.length;
  if (dtype === 'F16') {
    out.set(source, at);
    return;
  }
  for (let i = 0; i < count; i++) {
    let value = source[i];
    if (dtype === 'BF16') {
      // BF16 is the top half of a float32.
      castU32[0] = value << 16;
      value = castF32[0];
    }
    const half = halfBits(value);
    if ((half & 0x7c00) === 0x7c00 && Number.isFinite(value)) {
      throw overflow(name, at + i, value, 'float16');
    }
    out[at + i] = half;
  }
}
