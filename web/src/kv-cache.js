// A KV cache for incremental decoding: keys and values that live in wasm memory, appended once
// and attended over in place.
//
// Layout: k is [heads, capacity, headDim] and v [heads, capacity, valueDim], filled up to
// `length` rows per head. append() copies each head's new rows after its old ones (one
// TypedArray.set per head); attend() hands the two blocks to the core as they are, with
// kv_capacity = capacity (include/attnlens/attention.h), so no key or value is copied per call.
// The core never reads rows past `length`, so reset() only sets the length back to 0.
//
// `heads` are the K/V heads; `queryHeads` (a multiple of heads, default heads) the heads of the
// queries attend() takes: query head h reads K/V head floor(h / (queryHeads / heads)), as in
// attention() with kvHeads. The cache always runs on wasm (its memory is wasm memory), also on an
// instance that holds a GPU device.
//
// No view of the blocks is ever handed out, so dispose() frees them at once (unlike allocate()'s
// buffers, whose views can outlive them: retired-memory.js).

import { integer, optionsObject, rangeError, typeError, typedArray } from './argument-checks.js';
import {
  checkCachedAttention,
  inputError,
  MAX_SIZE,
  positiveMultiple,
  requireFinite,
  requireLength,
} from './checks.js';
import { disposedError } from './errors.js';
import { heapF32, malloc } from './heap.js';

const CACHE_OPTIONS = ['heads', 'queryHeads', 'headDim', 'valueDim', 'capacity'];

/**
 * kvCache({ heads, queryHeads, headDim, valueDim, capacity }) -> the cache's shape, every field
 * resolved: heads, headDim and capacity are required; queryHeads defaults to heads, valueDim to
 * headDim.
 */
export function checkKvCacheOptions(rawOptions) {
  if (rawOptions === undefined) throw typeError('options', 'is required');
  const o = optionsObject(rawOptions, 'options', CACHE_OPTIONS);
  for (const key of ['heads', 'headDim', 'capacity']) {
    if (o[key] === undefined) throw typeError(key, 'is required');
  }
  const heads = integer(o.heads, 'heads', 1, MAX_SIZE);
  const headDim = integer(o.headDim, 'headDim', 1, MAX_SIZE);
  const shape = {
    heads,
    queryHeads:
      o.queryHeads === undefined ? heads : integer(o.queryHeads, 'queryHeads', 1, MAX_SIZE),
    headDim,
    valueDim: o.valueDim === undefined ? headDim : integer(o.valueDim, 'valueDim', 1, MAX_SIZE),
    capacity: integer(o.capacity, 'capacity', 1, MAX_SIZE),
  };
  if (shape.queryHeads % heads !== 0) {
    throw rangeError(
      'queryHeads',
      `must be a multiple of heads = ${heads} (each K/V head serves queryHeads / heads query ` +
        `heads), got ${shape.queryHeads}`,
    );
  }
  return shape;
}

export class KvCache {
  #module;
  #backendName;
  #hooks; // { attend(problem, kv), beforeCall(what), onDispose() }: the wasm backend's
  #blocks; // { k, v }: { ptr, length } each, in floats
  #shape; // { heads, queryHeads, headDim, valueDim, capacity }, frozen
  #length = 0;

  /**
   * Use attn.kvCache(); `shape` comes from checkKvCacheOptions().
   * @param {{ attend: Function, beforeCall: Function, onDispose: Function }} hooks
   */
  constructor(module, backendName, shape, hooks) {
    const { heads, headDim, valueDim, capacity } = shape;
    this.#module = module;
    this.#backendName = backendName;
    this.#hooks = hooks;
    const k = { ptr: malloc(module, heads * capacity * headDim * 4, 'capacity') };
    let v;
    try {
      v = { ptr: malloc(module, heads * capacity * valueDim * 4, 'capacity') };
    } catch (error) {
      module._free(k.ptr);
      throw error;
    }
    k.length = heads * capacity * headDim;
    v.length = heads * capacity * valueDim;
    this.#blocks = { k, v };
    this.#shape = Object.freeze({ ...shape });
  }

  // The sizes are read-only: append() bounds its writes by them.
  /** K/V heads. */
  get heads() {
    return this.#shape.heads;
  }
  /** Heads of the queries attend() takes: a multiple of heads. */
  get queryHeads() {
    return this.#shape.queryHeads;
  }
  get headDim() {
    return this.#shape.headDim;
  }
  get valueDim() {
    return this.#shape.valueDim;
  }
  /** Rows each head holds at most. */
  get capacity() {
    return this.#shape.capacity;
  }

  /** Rows (positions) each head holds now. */
  get length() {
    this.#live('length');
    return this.#length;
  }

  get disposed() {
    return this.#module === null;
  }

  /**
   * Appends n rows per head: k [heads, n, headDim] and v [heads, n, valueDim], finite, copied once
   * into the cache. Past capacity, nothing is appended and a RangeError names k.
   * @returns {number} the new length
   */
  append(rawK, rawV) {
    const m = this.#live('append');
    this.#hooks.beforeCall('append');
    const { heads, headDim, valueDim, capacity } = this.#shape;
    const k = typedArray(rawK, 'k', Float32Array);
    const v = typedArray(rawV, 'v', Float32Array);
    const n = positiveMultiple(k, heads * headDim, 'k', 'heads*headDim');
    requireLength(v, heads * n * valueDim, 'v', `heads*n*valueDim = ${heads}*${n}*${valueDim}`);
    if (this.#length + n > capacity) {
      throw rangeError(
        'k',
        `${n} new rows per head do not fit: the cache holds ${this.#length} of its capacity ` +
          `${capacity} (${capacity - this.#length} free)`,
      );
    }
    requireFinite(k, 'k');
    requireFinite(v, 'v');
    const heap = heapF32(m);
    for (const [block, rows, width] of [
      [this.#blocks.k, k, headDim],
      [this.#blocks.v, v, valueDim],
    ]) {
      for (let h = 0; h < heads; h++) {
        const start = (block.ptr >>> 2) + (h * capacity + this.#length) * width;
        heap.set(rows.subarray(h * n * width, (h + 1) * n * width), start);
      }
    }
    this.#length += n;
    return this.#length;
  }

  /**
   * Attention of q [queryHeads, Nq, headDim] over every cached key, with attention()'s options
   * less the shape; queryOffset defaults to length - Nq (bottom-right causal, as in decoding).
   * @returns {Promise<{ output: Float32Array, weights?, scores?, stats: object }>}
   */
  async attend(rawQ, options) {
    this.#live('attend');
    if (this.#length === 0) {
      throw rangeError('length', 'the cache holds no keys yet: append() some before attend()');
    }
    const { heads, queryHeads, headDim, valueDim, capacity } = this.#shape;
    const problem = checkCachedAttention(rawQ, options, {
      heads: queryHeads,
      kvHeads: heads,
      headDim,
      valueDim,
      keyLength: this.#length,
      capacity,
    });
    const started = performance.now();
    let result;
    try {
      result = this.#hooks.attend(problem, { ...this.#blocks, capacity });
    } catch (error) {
      throw inputError(problem, error);
    }
    result.stats = { ...result.stats, backend: this.#backendName, ms: performance.now() - started };
    return result;
  }

  /** Empties the cache (its memory is kept for the next appends). */
  reset() {
    this.#live('reset');
    this.#length = 0;
  }

  /** Frees the cache's wasm memory; every later use throws 'disposed'. Safe to call twice. */
  dispose() {
    if (this.#module === null) return;
    for (const { ptr } of Object.values(this.#blocks)) this.#module._free(ptr);
    this.#blocks = {};
    this.#module = null;
    this.#hooks.onDispose();
  }

  #live(what) {
    if (this.#module === null) throw disposedError(what, 'this KV cache was disposed');
    return this.#module;
  }
}
