// The rotary tables of the llama family as the core computes them (src/models/rotary.cpp): the
// inverse frequencies from rope_theta and the scaling type, rounded to float32 where the core
// rounds, then cos and sin per position, so the GPU rotates q and k by the same angles.

const f32 = Math.fround;

/** Inverse frequencies [headDim / 2] of a core rope config ({ theta, scaling, factor, ... }). */
export function inverseFrequencies(rope, headDim) {
  const half = headDim / 2;
  const inv = new Float32Array(half);
  for (let i = 0; i < half; i++) {
    const exponent = f32(f32(2 * i) / f32(headDim));
    let f = f32(1 / f32(rope.theta ** exponent));
    if (rope.scaling === 'linear') {
      f /= rope.factor;
    } else if (rope.scaling === 'llama3') {
      const oldContext = rope.originalMaxPositions;
      const wavelength = (2 * Math.PI) / f;
      if (wavelength > oldContext / rope.lowFreqFactor) {
        f /= rope.factor;
      } else if (!(wavelength < oldContext / rope.highFreqFactor)) {
        const smooth =
          (oldContext / wavelength - rope.lowFreqFactor) /
          (rope.highFreqFactor - rope.lowFreqFactor);
        f = ((1 - smooth) * f) / rope.factor + smooth * f;
      }
    }
    inv[i] = f;
  }
  return inv;
}

/** { cos, sin }: Float32Array [n, half] for positions first .. first + n - 1. */
export function rotaryTables(inv, n, first = 0) {
  const half = inv.length;
  const cos = new Float32Array(n * half);
  const sin = new Float32Array(n * half);
  for (let r = 0; r < n; r++) {
    for (let i = 0; i < half; i++) {
      const angle = f32(f32(first + r) * inv[i]);
      cos[r * half + i] = Math.cos(angle);
      sin[r * half + i] = Math.sin(angle);
    }
  }
  return { cos, sin };
}
