// finishLogit(h, i, j, score): the logit of raw score `score` of query i and key j in head h
// (include/attnlens/attention.h's order: scale, soft cap, bias and ALiBi, temperature), NO_SCORE
// where a -Infinity bias hides the key. The kernel's uniforms `p` hold LOGIT_TERM_FIELDS
// (logit-terms.js), MASK_FIELDS and keyLength; `maskWords` holds ALiBi's slopes. Without terms
// it is score * p.factor and declares no binding.

/**
 * @param {{ terms: boolean, binding: number }} variant binding: where the bias buffer is bound
 * @returns {string} WGSL (after SCORE_SENTINELS and MASK_WGSL, which define what it reads)
 */
export function logitTermsWgsl({ terms, binding }) {
  if (!terms) {
    return /* wgsl */ `
fn finishLogit(h: u32, i: u32, j: u32, score: f32) -> f32 {
  return score * p.factor;
}
`;
  }
  return /* wgsl */ `
@group(0) @binding(${binding}) var<storage, read> logitBias: array<f32>;

fn finishLogit(h: u32, i: u32, j: u32, score: f32) -> f32 {
  var s = score * p.termScale;
  // tanh of a finite argument: |x| = 15 already gives +-1 in f32 (see SAFE_TANH).
  if (p.softcap > 0.0) { s = p.softcap * tanh(clamp(s, -15.0, 15.0)); }
  if (p.biased != 0u) {
    let b = logitBias[(h - p.biasHeadBase) * p.biasHead + i * p.keyLength + j];
    if (b <= VISIBLE_FLOOR) { return NO_SCORE; }
    s += b;
  }
  if (p.slopesAt != ABSENT) {
    let distance = abs(i32(i + p.queryOffset) - i32(j));
    s -= bitcast<f32>(maskWords[p.slopesAt + h]) * f32(distance);
  }
  return s * p.inverseTemperature;
}
`;
}
