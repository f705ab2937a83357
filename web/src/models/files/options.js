// Argument checks shared by loadModelFiles and the tokenizer: an options object whose keys are
// all known (a misspelt option would otherwise be ignored silently), and typed values. The
// options object is the engine's (argument-checks.js): own properties only, each read once.

import { optionsObject as snapshot } from '../../argument-checks.js';
import { attnlensError, describe } from '../../errors.js';

/** `value` as a snapshot of its own options ({} when undefined), every key among `known`. */
export function optionsObject(value, known, name = 'options') {
  return snapshot(value, name, known);
}

const KINDS = {
  string: ['a string', (v) => typeof v === 'string'],
  boolean: ['true or false', (v) => typeof v === 'boolean'],
  function: ['a function', (v) => typeof v === 'function'],
  signal: ['an AbortSignal', (v) => v instanceof AbortSignal],
};

/**
 * Throws a TypeError naming `name` unless `value` is undefined (the default) or of `kind`; null
 * is not a default (argument-checks.js).
 */
export function optional(value, name, kind) {
  const [expected, test] = KINDS[kind];
  if (value !== undefined && !test(value)) {
    throw attnlensError('invalid_argument', name, `must be ${expected}, got ${describe(value)}`);
  }
}
