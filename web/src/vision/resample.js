// Image resizing computed as Pillow computes Image.resize() on an 8-bit RGB image, because the
// transformers library's image processors resize through Pillow and a checkpoint's accuracy is
// measured on exactly those pixels.
//
// Pillow's resampling (libImaging/Resample.c) is a separable convolution: a horizontal pass into
// an 8-bit intermediate image, then a vertical pass. Output pixel i of a pass is centred at
// (i + 0.5) * scale in the input (scale = in / out); when downscaling, the filter is stretched by
// the scale (its support grows, so every input pixel contributes: antialiasing). Weights are
// normalised to sum 1, turned into fixed point with 22 fraction bits, and each sum is rounded
// once, to an 8-bit value clamped to [0, 255]. The integers below are exactly Pillow's, so the
// output is the same bytes (tests/vision against Debian's python3-pil).

/** Pillow's filter codes (Image.Resampling), the `resample` of a preprocessor_config.json. */
export const PIL_FILTERS = {
  1: { name: 'lanczos', support: 3, weight: lanczos },
  2: { name: 'bilinear', support: 1, weight: bilinear },
  3: { name: 'bicubic', support: 2, weight: bicubic },
  4: { name: 'box', support: 0.5, weight: box },
  5: { name: 'hamming', support: 1, weight: hamming },
};

const PRECISION_BITS = 32 - 8 - 2;
const ONE = 2 ** PRECISION_BITS;

function box(x) {
  return x > -0.5 && x <= 0.5 ? 1 : 0;
}

function bilinear(x) {
  const a = Math.abs(x);
  return a < 1 ? 1 - a : 0;
}

function hamming(x) {
  const a = Math.abs(x);
  if (a === 0) return 1;
  if (a >= 1) return 0;
  const px = a * Math.PI;
  // Pillow writes these two constants as C floats (0.54f, 0.46f): their float32 values.
  return (Math.sin(px) / px) * (Math.fround(0.54) + Math.fround(0.46) * Math.cos(px));
}

// Keys' cubic with a = -0.5, as Pillow (and most image libraries) use.
function bicubic(x) {
  const a = -0.5;
  const t = Math.abs(x);
  if (t < 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return (((t - 5) * t + 8) * t - 4) * a;
  return 0;
}

function sinc(x) {
  if (x === 0) return 1;
  const px = x * Math.PI;
  return Math.sin(px) / px;
}

function lanczos(x) {
  return x >= -3 && x < 3 ? sinc(x) * sinc(x / 3) : 0;
}

/**
 * One pass's taps: for each output position its first input index, its tap count and its
 * fixed-point weights (`ksize` slots per output), as Pillow's precompute_coeffs and
 * normalize_coeffs_8bpc make them.
 */
function passCoefficients(inSize, outSize, filter) {
  const scale = inSize / outSize;
  const filterScale = Math.max(scale, 1);
  const support = filter.support * filterScale;
  const inverseScale = 1 / filterScale; // Pillow multiplies by the reciprocal: same rounding
  const ksize = Math.ceil(support) * 2 + 1;
  const first = new Int32Array(outSize);
  const count = new Int32Array(outSize);
  const weights = new Int32Array(outSize * ksize);
  const taps = new Float64Array(ksize);
  for (let out = 0; out < outSize; out++) {
    const center = (out + 0.5) * scale;
    // Pillow rounds with a cast after adding 0.5 (truncation; negatives clamp to 0 either way).
    const xmin = Math.max(Math.trunc(center - support + 0.5), 0);
    const xmax = Math.min(Math.trunc(center + support + 0.5), inSize) - xmin;
    let sum = 0;
    for (let x = 0; x < xmax; x++) {
      taps[x] = filter.weight((x + xmin - center + 0.5) * inverseScale);
      sum += taps[x];
    }
    for (let x = 0; x < xmax; x++) {
      const w = sum !== 0 ? taps[x] / sum : taps[x];
      weights[out * ksize + x] = Math.trunc(w < 0 ? w * ONE - 0.5 : w * ONE + 0.5);
    }
    first[out] = xmin;
    count[out] = xmax;
  }
  return { first, count, weights, ksize };
}

// Pillow's clip8: the sum (with its rounding half already added) shifted down, clamped.
function clip8(sum) {
  if (sum <= 0) return 0;
  if (sum >= ONE * 256) return 255;
  return Math.floor(sum / ONE);
}

/**
 * `input` (RGB, 3 bytes a pixel, rows of `width`) resized to outWidth x outHeight with one of
 * PIL_FILTERS, as a new Uint8Array. Same size in a direction skips that pass, as Pillow does.
 */
export function resizeRgb(input, width, height, outWidth, outHeight, filter) {
  let pixels = input;
  if (outWidth !== width) {
    const c = passCoefficients(width, outWidth, filter);
    const out = new Uint8Array(outWidth * height * 3);
    for (let y = 0; y < height; y++) {
      const row = y * width * 3;
      for (let x = 0; x < outWidth; x++) {
        const base = x * c.ksize;
        const start = row + c.first[x] * 3;
        for (let ch = 0; ch < 3; ch++) {
          let sum = ONE / 2;
          for (let t = 0; t < c.count[x]; t++)
            sum += pixels[start + t * 3 + ch] * c.weights[base + t];
          out[(y * outWidth + x) * 3 + ch] = clip8(sum);
        }
      }
    }
    pixels = out;
    width = outWidth;
  }
  if (outHeight !== height) {
    const c = passCoefficients(height, outHeight, filter);
    const out = new Uint8Array(width * outHeight * 3);
    const stride = width * 3;
    for (let y = 0; y < outHeight; y++) {
      const base = y * c.ksize;
      const start = c.first[y] * stride;
      for (let i = 0; i < stride; i++) {
        let sum = ONE / 2;
        for (let t = 0; t < c.count[y]; t++)
          sum += pixels[start + t * stride + i] * c.weights[base + t];
        out[y * stride + i] = clip8(sum);
      }
    }
    pixels = out;
  }
  return pixels === input ? input.slice() : pixels;
}
