// Argument checks for the text API. Errors come from ../errors.js like the rest of attnlens:
// TypeError/RangeError with `code` and `parameter`, and a message that starts with the argument's
// name ("dim: must be an integer from 1 to 1024, got 0").

import { attnlensError, describe } from '../errors.js';

export const typeError = (name, detail) => attnlensError('invalid_argument', name, detail);
export const rangeError = (name, detail) => attnlensError('out_of_range', name, detail);

/** An integer in [min, max]; `undefined` gives `fallback`. */
export function integerOption(name, value, { min, max, fallback }) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number')
    throw typeError(name, `must be an integer, got ${describe(value)}`);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw rangeError(name, `must be an integer from ${min} to ${max}, got ${value}`);
  }
  return value;
}

/** A finite number >= min; `undefined` gives `fallback`. */
export function finiteOption(name, value, { min = -Infinity, fallback }) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw typeError(name, `must be a number, got ${describe(value)}`);
  if (!Number.isFinite(value) || value < min) {
    throw rangeError(name, `must be a finite number of at least ${min}, got ${value}`);
  }
  return value;
}

/** A boolean; `undefined` gives `fallback`. */
export function booleanOption(name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean')
    throw typeError(name, `must be a boolean, got ${describe(value)}`);
  return value;
}

/** An options bag: undefined becomes {}, anything but a plain object is a TypeError. */
export function optionsObject(name, value) {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw typeError(name, `must be an object, got ${describe(value)}`);
  }
  return value;
}

/** The most a seed can be: seeds are hashed as uint32. */
export const MAX_SEED = 0xffffffff;
