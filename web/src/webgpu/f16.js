// float32 -> IEEE half precision bits, round to nearest even, for uploading 'f16' storage.
// (Float16Array is not in Node 20.)

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** Half bits of `value`, rounded to nearest even; beyond half's range it becomes Infinity. */
export function halfBits(value) {
  f32[0] = value;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exponent = (x >>> 23) & 0xff;
  const mantissa = x & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0); // Inf, NaN
  const e = exponent - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow: Inf
  if (e <= 0) {
    // subnormal half, or zero
    if (e < -10) return sign;
    const m = mantissa | 0x800000;
    const shift = 14 - e;
    let half = m >>> shift;
    const rest = m & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && half & 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  // May carry into the exponent, which is correct.
  if (rest > 0x1000 || (rest === 0x1000 && half & 1)) half++;
  return sign | half;
}

/** The values of `array` as half-precision bits. */
export function toHalf(array) {
  const out = new Uint16Array(array.length);
  for (let i = 0; i < array.length; i++) out[i] = halfBits(array[i]);
  return out;
}

/** Largest finite half: values beyond it cannot be stored as f16. */
export const HALF_MAX = 65504;
