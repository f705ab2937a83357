// The engine a model runs on: loadModel's and describeModel's `attention` option, or one they
// open themselves. Only the models module (createAttention({ models: true })) has the models'
// bindings; an attention-only instance is refused before anything downloads.

import { Attention, createAttention, wasmBackendOf } from '../attention.js';
import { typeError } from '../argument-checks.js';
import { describe } from '../errors.js';

/** The checked `attention` option: undefined, or an instance that can hold models. */
export function checkModelEngine(value) {
  if (value === undefined) return undefined;
  if (!(value instanceof Attention)) {
    throw typeError(
      'attention',
      `must be an instance from createAttention(), got ${describe(value)}`,
    );
  }
  if (typeof wasmBackendOf(value, 'attention').module._modelCreate !== 'function') {
    throw typeError(
      'attention',
      'holds the attention-only wasm module: create it with createAttention({ models: true })',
    );
  }
  return value;
}

/** A wasm engine of the models module, for a caller that gave none (and closes it itself). */
export function openModelEngine() {
  return createAttention({ backend: 'wasm', models: true });
}
