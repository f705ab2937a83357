// Shared by the engine tests: seeded inputs, both wasm flavours, and element-wise comparison
// that names the first failing index.

import assert from 'node:assert/strict';
import { Attention } from '../../src/attention.js';
import { Backends } from '../../src/backend.js';
import { openWasmBackend } from '../../src/wasm-backend.js';
import { random, tensor } from '../../scripts/random.js';

// Seeded inputs: random(seed) streams uniform numbers in [-1, 1), tensor(length, seed, amplitude)
// fills a Float32Array; the benchmarks draw theirs from the same module.
export { random, tensor };

/** Additive-score weights for `heads` heads: wQuery, wKey [H, hidden, headDim], v [H, hidden]. */
export function additiveWeights(heads, hidden, headDim, seed, amplitude = 0.5) {
  return {
    hidden,
    wQuery: tensor(heads * hidden * headDim, seed, amplitude),
    wKey: tensor(heads * hidden * headDim, seed + 1, amplitude),
    v: tensor(heads * hidden, seed + 2),
  };
}

/**
 * Both flavours, each with its backend object (for heap statistics and the raw bindings), as
 * instances of the class createAttention() returns.
 */
export async function openFlavours() {
  const flavours = {};
  for (const flavour of ['simd', 'scalar']) {
    const backend = await openWasmBackend(flavour);
    flavours[flavour] = {
      attn: new Attention(new Backends(`wasm-${flavour}`, backend, null, {})),
      backend,
    };
  }
  return flavours;
}

/**
 * |actual - expected| <= tolerance * (1 + |expected|) everywhere, or a failure naming the index.
 */
export function assertClose(actual, expected, what, tolerance = 1e-5) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    const error = Math.abs(actual[i] - expected[i]);
    if (!(error <= tolerance * (1 + Math.abs(expected[i])))) {
      assert.fail(`${what}[${i}] = ${actual[i]}, expected ${expected[i]} (error ${error})`);
    }
  }
}

/**
 * Asserts that `promiseOrFn` fails with `ErrorClass`, `code` and `parameter`; returns the error.
 */
export async function assertFails(promiseOrFn, ErrorClass, code, parameter) {
  let error;
  try {
    await (typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn);
  } catch (e) {
    error = e;
  }
  assert.ok(error, `expected a ${ErrorClass.name} (${code}, ${parameter}), nothing was thrown`);
  assert.ok(
    error instanceof ErrorClass,
    `expected ${ErrorClass.name}, got ${error.constructor.name}: ${error.message}`,
  );
  assert.equal(error.code, code, error.message);
  assert.equal(error.parameter, parameter, error.message);
  assert.ok(
    error.message.startsWith(`${parameter}:`),
    `message starts with the parameter: ${error.message}`,
  );
  return error;
}

/** A seeded caller mask [nq, nk] of 0/1, about 70% visible. */
export function customMask(nq, nk, seed) {
  return Uint8Array.from(tensor(nq * nk, seed), (x) => (x > -0.4 ? 1 : 0));
}

// The score, scale, temperature, mask and cross-attention cases the forward and the backward
// tests both run: [name, { heads, nq, nk, headDim, valueDim }, options].
export const MASK_CASES = [
  ['scaled-dot, defaults', { heads: 2, nq: 7, nk: 7, headDim: 8 }, {}],
  ['dot', { heads: 2, nq: 6, nk: 6, headDim: 4 }, { score: 'dot' }],
  ['cosine', { heads: 3, nq: 5, nk: 5, headDim: 8 }, { score: 'cosine' }],
  ['explicit scale', { heads: 1, nq: 5, nk: 5, headDim: 8 }, { scale: 0.7 }],
  ['temperature 0.25 (sharper)', { heads: 2, nq: 6, nk: 6, headDim: 8 }, { temperature: 0.25 }],
  ['temperature 4 (flatter)', { heads: 2, nq: 6, nk: 6, headDim: 8 }, { temperature: 4 }],
  ['causal', { heads: 2, nq: 9, nk: 9, headDim: 4 }, { causal: true }],
  ['window 2', { heads: 1, nq: 10, nk: 10, headDim: 4 }, { window: 2 }],
  [
    'dilated window',
    { heads: 1, nq: 12, nk: 12, headDim: 4 },
    { window: { before: 2, after: 2, dilation: 3 } },
  ],
  [
    'strided sparse',
    { heads: 2, nq: 12, nk: 12, headDim: 4 },
    { sparse: { pattern: 'strided', stride: 3 } },
  ],
  [
    'fixed sparse',
    { heads: 1, nq: 12, nk: 12, headDim: 4 },
    { sparse: { pattern: 'fixed', stride: 4, summary: 2 } },
  ],
  [
    'key valid flags',
    { heads: 2, nq: 5, nk: 7, headDim: 4 },
    { keyValid: [true, false, true, true, false, true, true] },
  ],
  ['custom mask', { heads: 2, nq: 6, nk: 8, headDim: 4 }, { mask: customMask(6, 8, 5) }],
  ['cross-attention Nq < Nk, Dv != D', { heads: 2, nq: 4, nk: 9, headDim: 6, valueDim: 3 }, {}],
];
