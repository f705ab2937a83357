// Math that gives the same bits in every JavaScript engine.
//
// ECMAScript leaves Math.sin, Math.cos, Math.exp, Math.log and Math.pow "implementation-
// approximated": V8, SpiderMonkey and JavaScriptCore may round them differently. Arithmetic
// (+ - * /), Math.sqrt, Math.round, Math.fround, Math.imul and bit operations are exactly specified
// (IEEE 754 double, round-to-nearest, no fused multiply-add), so anything built only from them is
// reproducible bit for bit. The positional encoding and the weights use only what is here.

// pi/2 split Cody-Waite style (fdlibm's __ieee754_rem_pio2 constants): PIO2_1 and PIO2_2 have 33
// significant bits, so k * PIO2_1 and k * PIO2_2 are exact for |k| < 2^20 and the reduced argument
// keeps full precision for |x| up to about 1.6e6.
const PIO2_1 = 1.57079632673412561417;
const PIO2_2 = 6.0771005063039659766e-11;
const PIO2_3 = 2.0222662487111664558e-21;
const TWO_OVER_PI = 6.36619772367581382433e-1;
const MAX_REDUCIBLE = 1.6e6;

// Minimax polynomials on [-pi/4, pi/4] (fdlibm __kernel_sin / __kernel_cos), error below 1 ulp.
const S1 = -1.66666666666666324348e-1;
const S2 = 8.33333333332248946124e-3;
const S3 = -1.98412698298579493134e-4;
const S4 = 2.75573137070700676789e-6;
const S5 = -2.50507602534068634195e-8;
const S6 = 1.58969099521155010221e-10;
const C1 = 4.16666666666666019037e-2;
const C2 = -1.38888888888741095749e-3;
const C3 = 2.48015872894767294178e-5;
const C4 = -2.75573143513906633035e-7;
const C5 = 2.0875723212981748279e-9;
const C6 = -1.13596475577881948265e-11;

function sinKernel(r) {
  const z = r * r;
  return r + r * z * (S1 + z * (S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)))));
}

function cosKernel(r) {
  const z = r * r;
  return 1 - (0.5 * z - z * z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6))))));
}

/**
 * sin(x) from exact operations only; agrees with the true sine within a few ulp.
 * @param {number} x finite, |x| <= 1.6e6 (positions times frequencies stay far below)
 */
export function exactSin(x) {
  if (!(Math.abs(x) <= MAX_REDUCIBLE)) {
    throw new RangeError(`exactSin: |x| must be at most ${MAX_REDUCIBLE}, got ${x}`);
  }
  const k = Math.round(x * TWO_OVER_PI);
  const r = x - k * PIO2_1 - k * PIO2_2 - k * PIO2_3;
  switch (k & 3) {
    case 0:
      return sinKernel(r);
    case 1:
      return cosKernel(r);
    case 2:
      return -sinKernel(r);
    default:
      return -cosKernel(r);
  }
}

/** cos(x) from exact operations only; same domain as exactSin. */
export function exactCos(x) {
  if (!(Math.abs(x) <= MAX_REDUCIBLE)) {
    throw new RangeError(`exactCos: |x| must be at most ${MAX_REDUCIBLE}, got ${x}`);
  }
  const k = Math.round(x * TWO_OVER_PI);
  const r = x - k * PIO2_1 - k * PIO2_2 - k * PIO2_3;
  switch (k & 3) {
    case 0:
      return cosKernel(r);
    case 1:
      return -sinKernel(r);
    case 2:
      return -cosKernel(r);
    default:
      return sinKernel(r);
  }
}

/** base^n for a non-negative integer n by repeated squaring (exact operations only). */
export function exactIntegerPower(base, n) {
  let result = 1;
  let square = base;
  for (let e = n; e > 0; e = Math.floor(e / 2)) {
    if (e % 2 === 1) result *= square;
    square *= square;
  }
  return result;
}

/**
 * The n-th root of y in (0, 1], found by bisection on r^n = y: the positive r whose n-th power is
 * closest to y from above, to the last bit. Avoids Math.pow, whose rounding varies by engine.
 */
export function exactRootOfUnitInterval(y, n) {
  let lo = 0;
  let hi = 1;
  for (;;) {
    const mid = (lo + hi) / 2;
    if (mid === lo || mid === hi) return hi;
    if (exactIntegerPower(mid, n) < y) lo = mid;
    else hi = mid;
  }
}
