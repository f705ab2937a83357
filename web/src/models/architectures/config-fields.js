// Reading config.json fields: every value a model's shape depends on is checked, and a bad one
// is an error naming the file and the field ("config.json: n_embd must be ...").

import { describe } from '../../errors.js';
import { rangeError, typeError } from '../../argument-checks.js';

const FILE = 'config.json';

/** The first of `keys` present in config (HF configs have aliases: n_positions / n_ctx). */
function pick(config, keys) {
  for (const key of keys) {
    if (config[key] !== undefined && config[key] !== null) return [key, config[key]];
  }
  return [keys[0], undefined];
}

/** A whole number >= 1 under the first present of `keys`, else `fallback` (or an error). */
export function positiveInteger(config, keys, fallback) {
  const [key, value] = pick(config, [keys].flat());
  if (value === undefined) {
    if (fallback !== undefined) return fallback;
    throw typeError(FILE, `has no ${[keys].flat().join(' or ')}, which this model type needs`);
  }
  if (typeof value !== 'number') {
    throw typeError(FILE, `${key} must be a whole number, got ${describe(value)}`);
  }
  if (!Number.isInteger(value) || value < 1 || value > 2 ** 31 - 1) {
    throw rangeError(FILE, `${key} must be a whole number >= 1, got ${value}`);
  }
  return value;
}

/**
 * A positive finite number (LayerNorm epsilon, rope_theta) that stays one in float32, the type
 * the core computes in: 1e-50 would become 0 there, 1e39 infinity.
 */
export function positiveNumber(config, key, fallback) {
  const value = config[key] ?? fallback;
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
    throw rangeError(FILE, `${key} must be a positive number, got ${describe(value)}`);
  }
  const single = Math.fround(value);
  if (!(single > 0) || !Number.isFinite(single)) {
    throw rangeError(
      FILE,
      `${key} ${value} is ${single > 0 ? 'too large' : 'too small'} for float32, which the ` +
        'model computes in (between 1.4e-45 and 3.4e38)',
    );
  }
  return value;
}

export function booleanField(config, key, fallback) {
  const value = config[key] ?? fallback;
  if (typeof value !== 'boolean') {
    throw typeError(FILE, `${key} must be true or false, got ${describe(value)}`);
  }
  return value;
}

// The transformers library's activation names (ACT2FN) this package computes, by core form.
const ACTIVATIONS = {
  gelu_new: 'gelu_tanh',
  gelu_pytorch_tanh: 'gelu_tanh',
  gelu_fast: 'gelu_tanh', // the same tanh formula, written differently
  gelu: 'gelu_erf',
};

/**
 * The core's activation for config[key] (e.g. 'gelu_new' -> 'gelu_tanh'), from `supported`
 * (the GELU forms unless the architecture names its own, as llama's gate does).
 */
export function activation(config, key, fallback, supported = ACTIVATIONS) {
  const value = config[key] ?? fallback;
  if (typeof value !== 'string' || !Object.hasOwn(supported, value)) {
    throw rangeError(
      FILE,
      `${key} ${describe(value)} is not supported ` +
        `(supported: ${Object.keys(supported).join(', ')})`,
    );
  }
  return supported[value];
}

/** `hidden` must split evenly into `heads`. */
export function requireHeadsDivide(hidden, heads, hiddenKey, headsKey) {
  if (hidden % heads !== 0) {
    throw rangeError(FILE, `${hiddenKey} (${hidden}) is not a multiple of ${headsKey} (${heads})`);
  }
}
