// The core's cheap bound on the logits (src/attention/attention.cpp, logits_may_overflow), in JS.
// The GPU kernels cannot raise the core's NonFiniteError and WGSL may assume no infinities, so a
// problem whose logits could exceed FLT_MAX / 4 is sent to wasm, which computes it or raises that
// error.

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

// A bound on |score(q, k)| before any scale (Infinity when the additive score's tanh argument
// could already overflow).
function scoreBound({ maxQ, maxK, headDim, options }) {
  switch (options.score) {
    case 'cosine':
      return 1;
    case 'additive': {
      const a = options.additive;
      const preTanh = maxQ * maxAbs(a.wQuery) * headDim + maxK * maxAbs(a.wKey) * headDim;
      return preTanh > LIMIT ? Infinity : maxAbs(a.v) * a.hidden;
    }
    default:
      return maxQ * maxK * headDim;
  }
}

/**
 * @param {{ maxQ: number, maxK: number, headDim: number, options: object, factor: number }} bound
 *   maxQ, maxK: bounds on |q| and |k| as the score sees them (before any additive projection)
 */
export function logitsMayOverflow({ maxQ, maxK, headDim, options, factor }) {
  return scoreBound({ maxQ, maxK, headDim, options }) * Math.abs(factor) > LIMIT;
}

/**
 * The same for a call with logit terms (logit-terms.js), as the core's terms_may_overflow: the
 * scaled score the soft cap reads, then capped score + largest |bias| + largest |slope| *
 * distance, before and after the temperature (the kernels divide last; a finite bias this large
 * would also read as the hidden sentinel).
 * @param {{ maxQ: number, maxK: number, headDim: number, options: object, fields: object,
 *   largestBias: number, largestSlope: number, distance: number }} bound fields: the terms'
 *   uniform values; distance: the longest |p - j|, max(Nq + queryOffset, Nk)
 */
export function termsMayOverflow({ fields, largestBias, largestSlope, distance, ...score }) {
  const scaled = scoreBound(score) * Math.abs(fields.termScale);
  if (!(scaled <= LIMIT)) return true;
  const capped = fields.softcap > 0 ? fields.softcap : scaled;
  const sum = capped + largestBias + largestSlope * distance;
  return sum > LIMIT || sum * fields.inverseTemperature > LIMIT;
}

/** The scale in float32: the given one, or the core's default (1/sqrt(headDim) for scaled-dot). */
export function resolvedScale(options, headDim) {
  return Math.fround(
    options.scale ?? (options.score === 'scaled-dot' ? 1 / Math.sqrt(headDim) : 1),
  );
}

/** scale / temperature in float32. */
export function logitFactor(options, headDim) {
  return Math.fround(resolvedScale(options, headDim) / Math.fround(options.temperature));
}
