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
