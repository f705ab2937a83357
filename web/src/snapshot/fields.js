// The checks every part of a snapshot's reading (read.js, picture.js) shares: a field's type,
// caps on its size, index lists, and float32 weight rows decoded from base64. Each problem is a
// TypeError / RangeError naming the field ('snapshot.tokens[3].end: ...').

import { attnlensError, describe } from '../errors.js';
import { fromBase64 } from './format.js';

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

// The view a snapshot opens on: the exported one when the snapshot holds it, else its first head.
export function readSelected(value, model, layers, heads) {
  const selected = object(value, 'selected');
  const layer = int(selected.layer, 'selected.layer', 0, model.layers - 1);
  const head = int(selected.head, 'selected.head', 0, model.heads - 1);
  return {
    layer: layers.includes(layer) ? layer : layers[0],
    head: heads.includes(head) ? head : heads[0],
  };
}

// Little-endian float32 weights [blocks, rows, cols] from a base64 field: every one a weight
// in [0, 1] and every row summing to 1 (nothing is masked in these), or with `part` to at most 1
// (rows cut to some of their keys: a class token's row over the patches alone).
export function readRows(value, field, { blocks, rows, cols, part = false }) {
  const block = object(value, field);
  if (block.dtype !== 'float32' || block.encoding !== 'base64') {
    throw fail('invalid_argument', field, "must be { dtype: 'float32', encoding: 'base64' }");
  }
  const bytes = fromBase64(block.data, blocks * rows * cols * 4);
  if (!bytes) {
    throw fail(
      'shape_mismatch',
      `${field}.data`,
      `must be base64 of ${blocks} x ${rows} x ${cols} float32 values`,
    );
  }
  const view = new DataView(bytes.buffer);
  const weights = new Float32Array(blocks * rows * cols);
  for (let r = 0; r < blocks * rows; r++) {
    let sum = 0;
    for (let j = 0; j < cols; j++) {
      const w = view.getFloat32((r * cols + j) * 4, true);
      if (!(w >= 0 && w <= 1)) {
        throw fail('out_of_range', `${field}[${r}][${j}]`, `is ${w}, not a weight in [0, 1]`);
      }
      weights[r * cols + j] = w;
      sum += w;
    }
    if (part ? sum > 1 + ROW_SUM_TOLERANCE : Math.abs(sum - 1) > ROW_SUM_TOLERANCE) {
      const expected = part ? 'at most 1' : '1';
      throw fail('out_of_range', `${field}[${r}]`, `sums to ${sum}, not ${expected}`);
    }
  }
  return weights;
}
