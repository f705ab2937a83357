// The benchmark's workload, identical for every library: H heads of depth D, sequence lengths N,
// three masks, and inputs generated from a seed (so every process builds the same bytes).
//
// Shared by Node (one process per case) and the Chromium page: plain ES module, no Node APIs.

import { tensor } from '../../../web/scripts/random.js';

export const HEADS = 8;
export const DEPTH = 64;
export const SIZES = [128, 512, 2048, 8192];
export const MASKS = ['none', 'causal', 'window128'];
export const SEED = 2024;

// 'window128' lets query i see keys i-64 .. i+64, the same window bench/bench_main.cpp times
// (attnlens `window: 64`: 64 before and 64 after).
export const WINDOW_HALF_WIDTH = 64;

// What an additive mask adds where a key is hidden. -1e9 rather than -Infinity: some kernels
// compute (x - max) before exp, and -Infinity - -Infinity would be NaN in a fully hidden row
// (none exists here, but libraries need not know that); exp(-1e9) is exactly 0 in float32.
export const MASKED_LOGIT = -1e9;

/** Floating-point operations of one attention call as counted everywhere: 4 * H * N^2 * D. */
export function denseFlops(n) {
  return 4 * HEADS * n * n * DEPTH;
}

/** Keys visible to query `i`: the half-open range [start, end). */
export function visibleKeys(mask, i, n) {
  switch (mask) {
    case 'none':
      return [0, n];
    case 'causal':
      return [0, i + 1];
    case 'window128':
      return [Math.max(0, i - WINDOW_HALF_WIDTH), Math.min(n, i + WINDOW_HALF_WIDTH + 1)];
    default:
      throw new RangeError(`unknown mask '${mask}' (known: ${MASKS.join(', ')})`);
  }
}

/** Fraction of the N x N score matrix a mask leaves visible (how much work a library can skip). */
export function visibleFraction(mask, n) {
  let visible = 0;
  for (let i = 0; i < n; i++) {
    const [start, end] = visibleKeys(mask, i, n);
    visible += end - start;
  }
  return visible / (n * n);
}

/** The [N, N] additive mask: 0 where visible, MASKED_LOGIT elsewhere; null for 'none'. */
export function additiveMask(mask, n) {
  if (mask === 'none') return null;
  const out = new Float32Array(n * n).fill(MASKED_LOGIT);
  for (let i = 0; i < n; i++) {
    const [start, end] = visibleKeys(mask, i, n);
    out.fill(0, i * n + start, i * n + end);
  }
  return out;
}

/**
 * Head-major q, k, v [H, N, D]. Queries and keys are scaled by 2 so the logits (std ~1.3) give
 * softmax rows that are neither flat nor one-hot, which makes the correctness check meaningful.
 */
export function makeInputs(n, seed = SEED) {
  const size = HEADS * n * DEPTH;
  const q = tensor(size, seed);
  const k = tensor(size, seed + 1);
  for (let i = 0; i < size; i++) {
    q[i] *= 2;
    k[i] *= 2;
  }
  return { n, q, k, v: tensor(size, seed + 2) };
}

/** [H, N, D] -> [N, H * D] (token-major, heads side by side), the layout fused ops take. */
export function toTokenMajor(headMajor, n) {
  const out = new Float32Array(headMajor.length);
  for (let h = 0; h < HEADS; h++) {
    for (let t = 0; t < n; t++) {
      out.set(
        headMajor.subarray((h * n + t) * DEPTH, (h * n + t + 1) * DEPTH),
        (t * HEADS + h) * DEPTH,
      );
    }
  }
  return out;
}

/** [N, H * D] -> [H, N, D]. */
export function toHeadMajor(tokenMajor, n) {
  const out = new Float32Array(tokenMajor.length);
  for (let h = 0; h < HEADS; h++) {
    for (let t = 0; t < n; t++) {
      out.set(
        tokenMajor.subarray((t * HEADS + h) * DEPTH, (t * HEADS + h + 1) * DEPTH),
        (h * n + t) * DEPTH,
      );
    }
  }
  return out;
}
