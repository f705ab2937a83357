// The errors attnlens raises: built-in TypeError / RangeError (so `instanceof` works as users
// expect) carrying `code` and `parameter`, whether the JS checks or the C++ core found the problem.
//
// Codes are the core's ErrorKind names (include/attnlens/errors.h) plus 'out_of_memory',
// 'disposed' (an instance or buffer set used after dispose(), a plain Error), 'busy' (a
// trainer asked to start while a run is in progress, a plain Error) and 'unavailable' (what was
// asked for needs something this host lacks: loadModel's backend 'webgpu' without WebGPU).

import { typedArrayName } from './typed-arrays.js';

/** Maps an error code to the JavaScript class it is raised as. */
const CLASS_OF_CODE = {
  invalid_argument: TypeError,
  shape_mismatch: RangeError,
  out_of_range: RangeError,
  non_finite: RangeError,
  size_overflow: RangeError,
  out_of_memory: RangeError,
  disposed: Error,
  busy: Error,
  unavailable: Error,
};

/**
 * An error whose message starts with the parameter name, as every attnlens message does.
 * @param {string} code one of the keys of CLASS_OF_CODE
 * @param {string} parameter the argument at fault ('q', 'window.before', ...)
 * @param {string} detail the rest of the message
 * @param {object} [extra] more properties (e.g. `index` of a non-finite element)
 */
export function attnlensError(code, parameter, detail, extra) {
  const ErrorClass = CLASS_OF_CODE[code] ?? Error;
  const error = new ErrorClass(`${parameter}: ${detail}`);
  return Object.assign(error, { code, parameter }, extra);
}

/**
 * What a call into a disposed instance (or buffer set) throws, and what calls still pending at
 * its dispose() reject with: an Error with code 'disposed' whose `parameter` is the method.
 */
export function disposedError(what, detail = 'this attnlens instance was disposed') {
  return attnlensError('disposed', what, detail);
}

/** The error the bindings returned as { kind, parameter, message }, as a thrown-ready Error. */
export function coreError({ kind, parameter, message }) {
  const ErrorClass = CLASS_OF_CODE[kind] ?? Error;
  return Object.assign(new ErrorClass(message), { code: kind, parameter });
}

/**
 * What a raw binding returned: the bindings return { error: { kind, parameter, message } }
 * instead of throwing through C++ frames, so this throws that error as coreError() makes it and
 * passes any other result through.
 */
export function unwrap(result) {
  if (result?.error) throw coreError(result.error);
  return result;
}

/**
 * A short description of a value for messages: 'abc', 3, 2n (a BigInt), null, an array,
 * a Float64Array, an object. It reads nothing the value could define itself (no getters), so it
 * cannot throw.
 */
export function describe(value) {
  if (value === null) return 'null';
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'bigint') return `${value}n (a BigInt)`;
  if (Array.isArray(value)) return 'an array';
  const typedArray = typedArrayName(value);
  if (typedArray) return `a ${typedArray}`;
  if (ArrayBuffer.isView(value)) return 'a DataView';
  return typeof value === 'object' ? 'an object' : typeof value;
}
