// The engine instance users hold: createAttention() and its methods.
//
// Each method checks its arguments completely (checks.js) before any backend sees them, then hands
// the normalized problem to backend.js, which picks wasm or WebGPU for the call. Compute methods
// return Promises (WebGPU is asynchronous); results are always copies. The instance is an
// EventTarget: 'backendchange' fires when a lost GPU device is re-created or replaced by wasm.

import { BACKEND_NAMES, WEBGPU_MIN_FLOPS, openBackends } from './backend.js';
import {
  checkAttention,
  checkAttentionBackward,
  checkBufferShape,
  checkMaskMatrix,
  checkMultiHead,
  checkWebGpuOptions,
  checkWorkingSet,
} from './checks.js';
import { boolean, oneOf, optionsObject } from './argument-checks.js';
import { attnlensError, describe, disposedError } from './errors.js';
import { checkKvCacheOptions } from './kv-cache.js';
import { checkThreadsOption, THREADS_MIN_FLOPS } from './threads.js';

const CREATE_OPTIONS = ['backend', 'wasmUrl', 'locateFile', 'webgpu', 'threads', 'models'];

/**
 * Loads the engine.
 * @param {{ backend?: string, wasmUrl?: string | URL,
 *           locateFile?: (fileName: string, directory: string) => string | URL,
 *           webgpu?: object, threads?: 'auto' | number, models?: boolean }} [options]
 *   models: load the wasm module that can also hold whole models (attnlens/models' loadModel
 *   runs on such an instance); without it, the smaller attention-only module
 * @returns {Promise<Attention>}
 */
export async function createAttention(rawOptions) {
  const options = optionsObject(rawOptions, 'options', CREATE_OPTIONS);
  const { wasmUrl, locateFile } = options;
  const webgpu = checkWebGpuOptions(options.webgpu);
  const threads = checkThreadsOption(options.threads);
  if (wasmUrl !== undefined && typeof wasmUrl !== 'string' && !(wasmUrl instanceof URL)) {
    throw attnlensError(
      'invalid_argument',
      'wasmUrl',
      `must be a string or URL, got ${describe(wasmUrl)}`,
    );
  }
  if (locateFile !== undefined && typeof locateFile !== 'function') {
    throw attnlensError(
      'invalid_argument',
      'locateFile',
      `must be a function, got ${describe(locateFile)}`,
    );
  }
  const models = boolean(options.models, 'models');
  const backend = oneOf(options.backend, 'backend', BACKEND_NAMES, 'auto');
  return new Attention(
    await openBackends(backend, { wasmUrl, locateFile, models }, webgpu, threads),
  );
}

export { BACKEND_NAMES, THREADS_MIN_FLOPS, WEBGPU_MIN_FLOPS };

/** The 'backendchange' event: `from` and `to` are backend names, `reason` says what happened. */
export class BackendChangeEvent extends Event {
  constructor({ from, to, reason }) {
    super('backendchange');
    this.from = from;
    this.to = to;
    this.reason = reason;
  }
}

// Package-internal (not exported by index.js): an instance's wasm backend, which attnlens/models
// runs its forward pass in; through this rather than a public getter, so the backend stays an
// implementation detail. Throws once the instance is disposed.
const wasmBackends = new WeakMap();

export function wasmBackendOf(instance, what) {
  const get = wasmBackends.get(instance);
  if (!get) throw new TypeError(`${what}: expected an instance from createAttention()`);
  return get(what);
}

export class Attention extends EventTarget {
  #backends;
  #disposedName = '';

  /** Use createAttention(); this takes opened backends (backend.js Backends). */
  constructor(backends) {
    super();
    this.#backends = backends;
    wasmBackends.set(this, (what) => this.#live(what).wasm);
  }

  /**
   * What the instance offloads to: 'webgpu' while it holds a GPU device, else 'wasm-relaxed',
   * 'wasm-simd' or 'wasm-scalar'. Which one ran a given call is in its stats.backend.
   */
  get backend() {
    return this.#backends ? this.#backends.name : this.#disposedName;
  }

  /**
   * Threads a wasm call of at least THREADS_MIN_FLOPS runs on: more than 1 only with the
   * threaded module (cross-origin isolated pages; createAttention({ threads })). Which calls
   * were split is in their stats.threads.
   */
  get threads() {
    return this.#live('threads').wasm.threads;
  }

  /**
   * While a GPU device is held: { adapter: { vendor, architecture, description, software },
   * storage, subgroups, notes }; else null. `webgpuUnavailable` says why there is none.
   */
  get webgpu() {
    const gpu = this.#live('webgpu').gpu;
    if (!gpu) return null;
    const { adapter, storage, subgroups, notes } = gpu.info;
    return { adapter, storage, subgroups, notes };
  }

  /** Why 'auto' runs without WebGPU (no navigator.gpu, software adapter, ...), else undefined. */
  get webgpuUnavailable() {
    return this.#live('webgpuUnavailable').webgpuUnavailable;
  }

  /**
   * Bytes of WebAssembly memory the instance's engine holds now: the linear memory of its own
   * wasm module, which grows to fit the largest call so far and never shrinks (a WebGPU call's
   * device memory is not part of it).
   */
  get wasmMemoryBytes() {
    return this.#live('wasmMemoryBytes').wasm.memoryBytes;
  }

  /** The C++ core's version, "major.minor.patch". */
  get version() {
    return this.#live('version').wasm.version;
  }

  /**
   * Attention over head-major tensors: q [H, Nq, D], k [H, Nk, D], v [H, Nk, Dv].
   * @returns {Promise<{ output: Float32Array, weights?: Float32Array, scores?: Float32Array,
   *   stats: object }>}
   */
  async attention(q, k, v, options) {
    const backends = this.#live('attention');
    return backends.run('attention', checkAttention(q, k, v, options), this.#announce);
  }

  /**
   * Gradients of attention(q, k, v, options) for dOutput = dL/dOutput [H, Nq, Dv]: the streaming
   * backward (FlashAttention-2), on wasm whatever the backend (stats.backend says which ran).
   * Options are attention()'s without returnWeights and returnScores; score 'additive' has none.
   * @returns {Promise<{ dq: Float32Array, dk: Float32Array, dv: Float32Array, stats: object }>}
   */
  async attentionBackward(q, k, v, dOutput, options) {
    const backends = this.#live('attentionBackward');
    const problem = checkAttentionBackward(q, k, v, dOutput, options);
    return backends.run('attentionBackward', problem, this.#announce);
  }

  /**
   * Multi-head attention with projections; `options.source` makes it cross-attention.
   * @returns {Promise<{ output: Float32Array, weights?, scores?, q?, k?, v?, stats: object }>}
   */
  async multiHead(x, weights, options) {
    const backends = this.#live('multiHead');
    return backends.run('multiHead', checkMultiHead(x, weights, options), this.#announce);
  }

  /** The [queryLength, keyLength] visibility matrix of one head (1 = may attend). */
  maskMatrix(options) {
    return this.#live('maskMatrix').wasm.maskMatrix(checkMaskMatrix(options));
  }

  /** Bytes of working memory a strategy needs for a shape (no weights requested). */
  workingSetBytes(options) {
    return this.#live('workingSetBytes').wasm.workingSetBytes(checkWorkingSet(options));
  }

  /**
   * Reusable q/k/v/output buffers in wasm memory for copy-free loops (see buffers.js); their
   * run() computes on wasm whatever the backend.
   */
  allocate(shape) {
    return this.#live('allocate').wasm.allocate(checkBufferShape(shape));
  }

  /**
   * A KV cache in wasm memory for incremental decoding (kv-cache.js): append(k, v) copies new
   * rows in once, attend(q, options) reads them in place. It runs on wasm whatever the backend.
   * @param {{ heads: number, queryHeads?: number, headDim: number, valueDim?: number,
   *           capacity: number }} options heads: K/V heads; queryHeads: a multiple of them
   */
  kvCache(options) {
    return this.#live('kvCache').wasm.kvCache(checkKvCacheOptions(options));
  }

  /**
   * Frees the instance, its buffers, its KV caches and its GPU device; every later call throws,
   * and calls still pending reject, with the 'disposed' error. Safe to call twice.
   */
  dispose() {
    if (this.#backends === null) return;
    this.#disposedName = this.#backends.name;
    this.#backends.dispose();
    this.#backends = null;
  }

  #announce = (change) => this.dispatchEvent(new BackendChangeEvent(change));

  #live(what) {
    if (this.#backends === null) throw disposedError(what);
    return this.#backends;
  }
}
