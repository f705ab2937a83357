// The argument checks every entry point shares: the engine's (checks.js), the text helpers'
// (text/), analyze()'s; and the lenient readers of attribute and URL values (the widget, the
// demo's URL state).
//
// Checks take (value, name, ...) and throw the TypeError / RangeError of errors.js, with `code`
// and `parameter`, whose message starts with the name ("heads: must be an integer between 1 and
// 16, got 0"). Readers take (text, ...) and never throw: what they cannot use becomes a fallback,
// as a hand-edited link or attribute should still show something.
//
// Every check follows docs/JS_API.md's rules: undefined is the default and null a value like
// any other; options are own properties read once (optionsObject's snapshot); typed arrays are
// known by their internal slots (typed-arrays.js); messages show values as given.

import { attnlensError, describe } from './errors.js';
import { genuineView, typedArrayName } from './typed-arrays.js';

export const typeError = (name, detail) => attnlensError('invalid_argument', name, detail);
export const rangeError = (name, detail) => attnlensError('out_of_range', name, detail);
export const shapeError = (name, detail) => attnlensError('shape_mismatch', name, detail);

// ---- checks -----------------------------------------------------------------------------------

/**
 * An options bag, as a snapshot: undefined becomes {}, anything but a plain object is a
 * TypeError, and the result is a new object holding each own enumerable property of `value`,
 * read once. With `allowedKeys`, an unknown key is a TypeError too: a misspelt option ('casual')
 * would otherwise be ignored silently.
 */
export function optionsObject(value, name, allowedKeys) {
  if (value === undefined) return {};
  if (
    value === null ||
    typeof value !== 'object' ||
    Array.isArray(value) ||
    ArrayBuffer.isView(value)
  ) {
    throw typeError(name, `must be an object, got ${describe(value)}`);
  }
  // No prototype: a key named "__proto__" stays a plain (and, with allowedKeys, unknown) key.
  const snapshot = Object.create(null);
  for (const key of Object.keys(value)) {
    if (allowedKeys && !allowedKeys.includes(key)) {
      throw typeError(name, `unknown option '${key}' (known: ${allowedKeys.join(', ')})`);
    }
    snapshot[key] = value[key];
  }
  return snapshot;
}

/**
 * A typed array of class `Type` (e.g. Float32Array), returned as a fresh view of its memory made
 * from its internal slots (typed-arrays.js): later reads of its length cannot be lied to.
 */
export function typedArray(value, name, Type) {
  if (typedArrayName(value) !== Type.name) {
    throw typeError(name, `must be a ${Type.name}, got ${describe(value)}`);
  }
  // What the array says its length is, against its [[ArrayLength]] slot: an own or inherited
  // `length` that lies is refused, never believed (nor silently ignored).
  let claimed;
  try {
    claimed = value.length;
  } catch {
    claimed = undefined;
  }
  const view = genuineView(value, Type);
  if (view === null) {
    throw typeError(name, `must be a ${Type.name} whose ArrayBuffer is not detached (transferred)`);
  }
  if (claimed !== view.length) {
    throw typeError(
      name,
      `is a ${Type.name} of ${view.length} elements whose length property says ` +
        `${describe(claimed)}: its length was redefined`,
    );
  }
  return view;
}

// The engine's checks have always worded a range "between min and max", the text helpers'
// "from min to max"; both wordings are kept, in this one place.
function checkInteger(value, name, min, max, range) {
  if (typeof value !== 'number') {
    throw typeError(name, `must be an integer, got ${describe(value)}`);
  }
  if (!Number.isInteger(value) || value < min || value > max) {
    throw rangeError(name, `must be an integer ${range}, got ${value}`);
  }
  return value;
}

/** An integer in [min, max]. */
export function integer(value, name, min, max) {
  return checkInteger(value, name, min, max, `between ${min} and ${max}`);
}

/** An integer in [min, max]; `undefined` gives `fallback`. */
export function integerOption(value, name, { min, max, fallback }) {
  if (value === undefined) return fallback;
  return checkInteger(value, name, min, max, `from ${min} to ${max}`);
}

/** A finite number >= min; `undefined` gives `fallback`. */
export function finiteOption(value, name, { min = -Infinity, fallback }) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw typeError(name, `must be a number, got ${describe(value)}`);
  if (!Number.isFinite(value) || value < min) {
    throw rangeError(name, `must be a finite number of at least ${min}, got ${value}`);
  }
  return value;
}

/** A boolean; `undefined` gives `fallback`. */
export function boolean(value, name, fallback = false) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') {
    throw typeError(name, `must be a boolean, got ${describe(value)}`);
  }
  return value;
}

/** One of the strings in `allowed`; `undefined` gives `fallback`. */
export function oneOf(value, name, allowed, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') throw typeError(name, `must be a string, got ${describe(value)}`);
  if (!allowed.includes(value)) {
    const names = allowed.map((a) => `'${a}'`).join(', ');
    throw rangeError(name, `must be one of ${names}, got '${value}'`);
  }
  return value;
}

// ---- readers ----------------------------------------------------------------------------------

/** `text` when it is one of `allowed`, else `fallback`. */
export function readChoice(text, allowed, fallback) {
  return allowed.includes(text) ? text : fallback;
}

/** The integer `text` spells when it lies in [min, max]; null for anything else. */
export function readIntegerIn(text, min, max) {
  if (text === null || text === undefined || String(text).trim() === '') return null;
  const n = Number(text);
  return Number.isInteger(n) && n >= min && n <= max ? n : null;
}

/**
 * Number(text) moved into [min, max] when it is an integer, else `fallback`. (A missing
 * attribute is null, which Number() reads as 0: it becomes `min`.)
 */
export function readClampedInteger(text, min, max, fallback) {
  const n = Number(text);
  return Number.isInteger(n) ? Math.min(max, Math.max(min, n)) : fallback;
}
