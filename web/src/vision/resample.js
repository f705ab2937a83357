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
 * normalize_coeffs_8bpc make them. The last few are kept: a camera's frames ask for the same.
 */
function passCoefficients(inSize, outSize, filter) {
  const key = `${inSize} ${outSize} ${filter.name}`;
  let c = recentCoefficients.get(key);
  if (!c) {
    c = computeCoefficients(inSize, outSize, filter);
    if (recentCoefficients.size >= KEPT_COEFFICIENTS) {
      recentCoefficients.delete(recentCoefficients.keys().next().value);
    }
    recentCoefficients.set(key, c);
  }
  return c;
}
const KEPT_COEFFICIENTS = 8;
const recentCoefficients = new Map();

function computeCoefficients(inSize, outSize, filter) {
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

// Pillow's clip8: the sum (with its rounding half already added) shifted down, clamped. The sums
// are integers below 2^31 here (8-bit pixels times 22-bit weights), so the shift is exact.
function clip8(sum) {
  if (sum <= 0) return 0;
  if (sum >= ONE * 256) return 255;
  return sum >> PRECISION_BITS;
}

/**
 * `input` (RGB, 3 bytes a pixel, rows of `width`) resized to outWidth x outHeight with one of
 * PIL_FILTERS, as a new Uint8Array. Same size in a direction skips that pass, as Pillow does.
 */
export function resizeRgb(input, width, height, outWidth, outHeight, filter) {
  const out = resizeWindow(
    input,
    { width, height, channels: 3 },
    {
      width: outWidth,
      height: outHeight,
      filter,
    },
  );
  return out.buffer === input.buffer ? out.slice() : out;
}

/**
 * A window of `input` resized as Pillow resizes the whole image, computing only what the window
 * needs: the horizontal pass over the window's columns and the input rows its rows read, then
 * the vertical pass over its rows. Each output byte is Pillow's (the passes' sums are per pixel).
 * @param {Uint8Array | Uint8ClampedArray} input rows of `source.width` pixels, `channels` (3
 *   RGB, or 4 RGBA whose alpha is skipped) bytes each
 * @param {{ width, height, channels }} source
 * @param {{ width, height, filter, window?: { top, left, height, width } }} target the resized
 *   size, the filter (PIL_FILTERS) and the window of the resized image wanted (inside it;
 *   the whole image by default)
 * @returns {Uint8Array} the window's RGB bytes (a view of `input` when nothing changes)
 */
export function resizeWindow(input, source, target) {
  const { width, height, channels } = source;
  const { filter } = target;
  const win = target.window ?? { top: 0, left: 0, height: target.height, width: target.width };
  const vertical =
    target.height !== height ? passCoefficients(height, target.height, filter) : null;
  // The input rows the window's output rows read (all of them when only the width changes).
  let rowFirst = win.top;
  let rowEnd = win.top + win.height;
  if (vertical) {
    rowFirst = vertical.first[win.top];
    rowEnd = 0;
    for (let y = win.top; y < win.top + win.height; y++) {
      rowEnd = Math.max(rowEnd, vertical.first[y] + vertical.count[y]);
    }
  }
  const rows = rowEnd - rowFirst;
  const stride = win.width * 3;
  let pixels;
  if (target.width !== width) {
    pixels = horizontalPass(input, width, channels, rowFirst, rows, win, filter, target.width);
  } else if (channels === 3 && win.left === 0 && win.width === width && rowFirst === 0) {
    pixels = input.subarray(0, rows * stride);
  } else {
    pixels = new Uint8Array(rows * stride);
    for (let r = 0; r < rows; r++) {
      for (let x = 0; x < win.width; x++) {
        const from = ((rowFirst + r) * width + win.left + x) * channels;
        const to = r * stride + x * 3;
        pixels[to] = input[from];
        pixels[to + 1] = input[from + 1];
        pixels[to + 2] = input[from + 2];
      }
    }
  }
  if (!vertical) return pixels;
  const out = new Uint8Array(win.height * stride);
  const { first, count, weights, ksize } = vertical;
  for (let y = 0; y < win.height; y++) {
    const oy = win.top + y;
    const base = oy * ksize;
    const start = (first[oy] - rowFirst) * stride;
    const taps = count[oy];
    for (let i = 0; i < stride; i++) {
      let sum = ONE / 2;
      for (let t = 0; t < taps; t++) sum += pixels[start + t * stride + i] * weights[base + t];
      out[y * stride + i] = clip8(sum);
    }
  }
  return out;
}

// Pillow's horizontal pass over input rows [rowFirst, rowFirst + rows) and the window's
// columns of an image resized to `outWidth`, into RGB bytes.
function horizontalPass(input, width, channels, rowFirst, rows, win, filter, outWidth) {
  const { first, count, weights, ksize } = passCoefficients(width, outWidth, filter);
  const out = new Uint8Array(rows * win.width * 3);
  let to = 0;
  for (let r = 0; r < rows; r++) {
    const row = (rowFirst + r) * width * channels;
    for (let x = win.left; x < win.left + win.width; x++) {
      const base = x * ksize;
      let at = row + first[x] * channels;
      let r0 = ONE / 2;
      let g0 = ONE / 2;
      let b0 = ONE / 2;
      for (let t = 0, taps = count[x]; t < taps; t++, at += channels) {
        const w = weights[base + t];
        r0 += input[at] * w;
        g0 += input[at + 1] * w;
        b0 += input[at + 2] * w;
      }
      out[to] = clip8(r0);
      out[to + 1] = clip8(g0);
      out[to + 2] = clip8(b0);
      to += 3;
    }
  }
  return out;
}
