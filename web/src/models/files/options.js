// Argument checks shared by loadModelFiles and the tokenizer: an options object whose keys are
// all known (a misspelt option would otherwise be ignored silently), and typed values.

import { attnlensError, describe } from '../../errors.js';

/** `value` as an options object ({} when undefined), every key among `known`. */
export function optionsObject(value, known, name = 'options') {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw attnlensError('invalid_argument', name, `must be an object, got ${describe(value)}`);
  }
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      throw attnlensError(
        'invalid_argument',
        name,
        `unknown option '${key}' (known: ${known.join(', ')})`,
      );
    }
  }
  return value;
}

const KINDS = {
  string: ['a string', (v) => typeof v === 'string'],
  boolean: ['true or false', (v) => typeof v === 'boolean'],
  function: ['a function', (v) => typeof v === 'function'],
  signal: ['an AbortSignal', (v) => v instanceof AbortSignal],
};

/** Throws a TypeError naming `name` unless `value` is undefined (or null) or of `kind`. */
export function optional(value, name, kind) {
  const [expected, test] = KINDS[kind];
  if (value !== undefined && value !== null && !test(value)) {
    throw attnlensError('invalid_argument', name, `must be ${expected}, got ${describe(value)}`);
  }
}
