// The checks every field of a snapshot passes (read.js, read-panels.js): its type, its size
// against a cap, and an error naming the field ('snapshot.tokens[3].end: ...') when it fails.

import { attnlensError, describe } from '../errors.js';
import { SNAPSHOT_LIMITS } from './format.js';

export const ROW_SUM_TOLERANCE = 1e-3;

export const fail = (code, field, detail) => attnlensError(code, `snapshot.${field}`, detail);
export const typeFail = (field, expected, value) =>
  fail('invalid_argument', field, `must be ${expected}, got ${describe(value)}`);

export function object(value, field) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw typeFail(field, 'an object', value);
  }
  return value;
}

export function array(value, field, max) {
  if (!Array.isArray(value)) throw typeFail(field, 'an array', value);
  if (value.length > max) {
    throw fail('out_of_range', field, `has ${value.length} entries, more than the cap of ${max}`);
  }
  return value;
}

export function string(value, field, max, nullable = false) {
  if (nullable && value === null) return null;
  if (typeof value !== 'string')
    throw typeFail(field, nullable ? 'a string or null' : 'a string', value);
  if (value.length > max) {
    throw fail('out_of_range', field, `is ${value.length} characters, more than the cap of ${max}`);
  }
  return value;
}

export function int(value, field, min, max) {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw typeFail(field, 'a whole number', value);
  }
  if (value < min || value > max) {
    throw fail('out_of_range', field, `must be from ${min} to ${max}, got ${value}`);
  }
  return value;
}

export function bool(value, field) {
  if (typeof value !== 'boolean') throw typeFail(field, 'true or false', value);
  return value;
}

// Ascending distinct indices below `count`.
export function indexList(value, field, count) {
  const list = array(value, field, count);
  if (list.length === 0) throw fail('out_of_range', field, 'must name at least one');
  list.forEach((index, i) => {
    int(index, `${field}[${i}]`, 0, count - 1);
    if (i > 0 && index <= list[i - 1]) {
      throw fail('invalid_argument', field, 'must be ascending, without repeats');
    }
  });
  return list;
}

export function readPrediction(raw, field, vocabMax = 2 ** 31) {
  const entry = object(raw, field);
  const p = entry.p;
  if (typeof p !== 'number' || !(p >= 0 && p <= 1))
    throw typeFail(`${field}.p`, 'a probability', p);
  return {
    id: int(entry.id, `${field}.id`, 0, vocabMax),
    token: string(entry.token, `${field}.token`, SNAPSHOT_LIMITS.tokenText),
    text: string(entry.text, `${field}.text`, SNAPSHOT_LIMITS.tokenText),
    // Snapshots written before predictions said so have no `partial`.
    partial: entry.partial === undefined ? false : bool(entry.partial, `${field}.partial`),
    p,
  };
}
