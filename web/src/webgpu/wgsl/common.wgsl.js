// WGSL shared by the kernels: the enable directives and the "no score" sentinel.
//
// WGSL lets implementations assume that no infinity or NaN ever occurs, so masked logits cannot
// be -inf as in the C++ core. They are NO_SCORE instead, a finite value below every real logit:
// the JS side sends a problem to the GPU only when |logit| <= FLT_MAX / 4 (overflow.js), so
// anything above VISIBLE_FLOOR is a real logit, and differences between a real logit and the
// running maximum stay finite.

/** `enable` lines for the features a kernel uses. */
export function enables({ f16 = false, subgroups = false } = {}) {
  return `${f16 ? 'enable f16;\n' : ''}${subgroups ? 'enable subgroups;\n' : ''}`;
}

/** The WGSL element type of input tensors for a storage choice ('f32' or 'f16'). */
export function elementType(storage) {
  return storage === 'f16' ? 'f16' : 'f32';
}

export const SCORE_SENTINELS = /* wgsl */ `
const NO_SCORE: f32 = -1.0e38;
const VISIBLE_FLOOR: f32 = -9.0e37;
`;

// tanh of a finite argument: some implementations compute tanh(x) through exp(2x) and return
// NaN for large |x|; |x| = 15 already gives tanh = +-1 in f32.
export const SAFE_TANH = /* wgsl */ `
fn safeTanh(x: vec4<f32>) -> vec4<f32> {
  return tanh(clamp(x, vec4<f32>(-15.0), vec4<f32>(15.0)));
}
`;
