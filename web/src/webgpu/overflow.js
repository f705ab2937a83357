// The core's cheap bound on the logits (src/attention.cpp, logits_may_overflow), in JS. The GPU
// kernels cannot raise the core's NonFiniteError and WGSL may assume no infinities, so a problem
// whose logits could exceed FLT_MAX / 4 is sent to wasm, which computes it or raises that error.

const LIMIT = 3.4028234663852886e38 / 4;

/** The largest magnitude in any of the arrays (0 for none). */
export function maxAbs(...arrays) {
  let m = 0;
  for (const array of arrays) {
    if (!array) continue;
    for (let i = 0; i < array.length; i++) {
      const a = Math.abs(array[i]);
      if (a > m) m = a;
    }
  }
  return m;
}

/**
 * @param {{ maxQ: number, maxK: number, headDim: number, options: object, factor: number }} bound
 *   maxQ, maxK: bounds on |q| and |k| as the score sees them (before any additive projection)
 */
export function logitsMayOverflow({ maxQ, maxK, headDim, options, factor }) {
  const f = Math.abs(factor);
  switch (options.score) {
    case 'cosine':
      return f > LIMIT;
    case 'additive': {
      const a = options.additive;
      const preTanh = maxQ * maxAbs(a.wQuery) * headDim + maxK * maxAbs(a.wKey) * headDim;
      return preTanh > LIMIT || maxAbs(a.v) * a.hidden * f > LIMIT;
    }
    default:
      return maxQ * maxK * headDim * f > LIMIT;
  }
}

/**
 * scale / temperature in float32, with the core's default scale (1/sqrt(headDim) for scaled-dot).
 */
export function logitFactor(options, headDim) {
  const scale = options.scale ?? (options.score === 'scaled-dot' ? 1 / Math.sqrt(headDim) : 1);
  return Math.fround(Math.fround(scale) / Math.fround(options.temperature));
}
