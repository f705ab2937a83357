// The terms between a score and its softmax (include/attnlens/attention.h) as the GPU kernels
// read them: soft cap, the caller's bias and ALiBi. Scalars go into the kernels' uniforms
// (LOGIT_TERM_FIELDS); ALiBi's slopes, one per head, into the mask words (mask-data.js); the bias
// into a storage buffer of its own, uploaded per head group. The kernels compute
//   logit = (softcap * tanh(score * termScale) + bias[h, i, j] - slope[h] * |p - j|) / temperature
// (termScale = scale / softcap; without a soft cap the first term is score * scale), and
// score * factor when no term is given, so calls without them run the kernels they always ran.

export const LOGIT_TERM_FIELDS = [
  'termScale:f32',
  'softcap:f32', // 0: none
  'inverseTemperature:f32',
  'biased', // 1 when the bias buffer holds the caller's bias
  'biasHead', // elements per head of the bias: Nq * Nk, or 0 for one [Nq, Nk] matrix
  'biasHeadBase', // the problem's head that the bias buffer's first head belongs to
];

// -Infinity hides a key. WGSL may assume no infinity occurs, so the uploaded copy holds this
// instead: the kernels treat any bias at or below VISIBLE_FLOOR (wgsl/common.wgsl.js) as hidden,
// and a call with a finite bias that large goes to wasm (overflow.js termsMayOverflow).
const HIDDEN_BIAS = -1.0e38;

/**
 * ALiBi's slopes for `heads` heads (Press et al.), as src/attention/attention.cpp's alibi_slopes():
 * the geometric sequence 2^(-8 (h + 1) / n) for n = heads a power of two; otherwise those of the
 * largest power of two n below heads, then every other slope of 2n for the rest.
 */
export function alibiSlopes(heads) {
  const powerOfTwoSlopes = (n) => Array.from({ length: n }, (_, h) => 2 ** ((-8 * (h + 1)) / n));
  let n = 1;
  while (n * 2 <= heads) n *= 2;
  const slopes = powerOfTwoSlopes(n);
  const finer = powerOfTwoSlopes(2 * n);
  for (let h = 0; slopes.length < heads; h += 2) slopes.push(finer[h]);
  return Float32Array.from(slopes);
}

/** The slopes of a checked call (alibi: true or alibiSlopes), or null without ALiBi. */
export function slopesOf(options, heads) {
  if (options.alibiSlopes) return options.alibiSlopes;
  return options.alibi ? alibiSlopes(heads) : null;
}

/** Whether a checked call has any logit term, i.e. needs the kernels' terms variant. */
export function hasLogitTerms(options) {
  return (
    options.softcap !== undefined ||
    options.bias !== undefined ||
    options.alibi !== undefined ||
    options.alibiSlopes !== undefined
  );
}

/**
 * The uniform values of a call's terms (biasHeadBase 0: each head group sets its own) and its
 * bias as uploaded, or null.
 * @param {object} options checked options
 * @param {{ heads: number, queryLength: number, keyLength: number }} shape
 * @param {number} scale the resolved scale (overflow.js resolvedScale)
 * @returns {{ active: boolean, fields: object, bias: Float32Array | null, biasHeads: number }}
 *   active: whether there is any term; biasHeads: heads in the bias (heads, or 1 for one matrix
 *   shared by every head)
 */
export function logitTerms(options, { heads, queryLength, keyLength }, scale) {
  const softcap = options.softcap ?? 0;
  const matrix = queryLength * keyLength;
  let bias = null;
  if (options.bias) {
    bias = options.bias;
    if (bias.includes(-Infinity)) bias = bias.map((x) => (x === -Infinity ? HIDDEN_BIAS : x));
  }
  const fields = {
    termScale: softcap > 0 ? Math.fround(scale / softcap) : scale,
    softcap,
    inverseTemperature: Math.fround(1 / options.temperature),
    biased: bias ? 1 : 0,
    biasHead: bias && bias.length !== matrix ? matrix : 0,
    biasHeadBase: 0,
  };
  const biasHeads = bias && bias.length !== matrix ? heads : 1;
  return { active: hasLogitTerms(options), fields, bias, biasHeads };
}

/**
 * The terms of the head group [first, first + count) (attention-gpu.js HeadGroup.terms): its
 * fields, and with any term the buffer bound as its bias (its heads of the caller's bias, or a
 * placeholder never read when there is no bias).
 * @param {ReturnType<typeof logitTerms>} terms
 * @param {import('./gpu-buffers.js').GpuBuffers} buffers
 */
export function groupTerms(terms, buffers, first, count) {
  const fields = { ...terms.fields, biasHeadBase: first };
  if (!terms.active) return { fields };
  if (!terms.bias) return { fields, bias: buffers.storage('unused-bias', 16) };
  const perHead = terms.fields.biasHead;
  const heads =
    perHead === 0 ? terms.bias : terms.bias.subarray(first * perHead, (first + count) * perHead);
  return { fields, bias: buffers.upload('logit-bias', heads) };
}

/** The largest magnitude of a finite bias element (-Infinity hides a key: not counted). */
export function biasMagnitude(bias) {
  let m = 0;
  if (!bias) return m;
  for (let i = 0; i < bias.length; i++) {
    const x = bias[i];
    if (x !== -Infinity && Math.abs(x) > m) m = Math.abs(x);
  }
  return m;
}
