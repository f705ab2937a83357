// The engine instance users hold: createAttention() and its methods.
//
// Each method checks its arguments completely (checks.js) before any backend sees them, then hands
// the normalized problem to the backend chosen at creation (backend.js). Compute methods return
// Promises so that asynchronous backends (WebGPU) fit the same API; results are always copies.

import { BACKEND_NAMES, openBackends } from './backend.js';
import { checkAttention, checkBufferShape, checkMaskMatrix, checkMultiHead,
  checkWorkingSet } from './checks.js';
import { attnlensError, describe } from './errors.js';

/**
 * Loads the engine.
 * @param {{ backend?: string, wasmUrl?: string | URL,
 *           locateFile?: (fileName: string, directory: string) => string | URL }} [options]
 * @returns {Promise<Attention>}
 */
export async function createAttention(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw attnlensError('invalid_argument', 'options', `must be an object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!['backend', 'wasmUrl', 'locateFile'].includes(key)) {
      throw attnlensError('invalid_argument', 'options',
        `unknown option '${key}' (known: backend, wasmUrl, locateFile)`);
    }
  }
  const { backend = 'auto', wasmUrl, locateFile } = options;
  if (wasmUrl !== undefined && typeof wasmUrl !== 'string' && !(wasmUrl instanceof URL)) {
    throw attnlensError('invalid_argument', 'wasmUrl', `must be a string or URL, got ${describe(wasmUrl)}`);
  }
  if (locateFile !== undefined && typeof locateFile !== 'function') {
    throw attnlensError('invalid_argument', 'locateFile', `must be a function, got ${describe(locateFile)}`);
  }
  return new Attention(await openBackends(backend, { wasmUrl, locateFile }));
}

export { BACKEND_NAMES };

export class Attention {
  #compute;
  #wasm;
  #backendName;

  /** Use createAttention(); this takes already opened backends ({ compute, wasm }). */
  constructor({ compute, wasm }) {
    this.#compute = compute;
    this.#wasm = wasm;
    this.#backendName = compute.name;
  }

  /** What runs the computations: 'wasm-simd' or 'wasm-scalar' (later 'webgpu'). */
  get backend() {
    return this.#backendName;
  }

  /** The C++ core's version, "major.minor.patch". */
  get version() {
    return this.#live('version').version;
  }

  /**
   * Attention over head-major tensors: q [H, Nq, D], k [H, Nk, D], v [H, Nk, Dv].
   * @returns {Promise<{ output: Float32Array, weights?: Float32Array, scores?: Float32Array, stats: object }>}
   */
  async attention(q, k, v, options) {
    const backend = this.#live('attention', this.#compute);
    return this.#timed(backend, () => backend.attention(checkAttention(q, k, v, options)));
  }

  /**
   * Multi-head attention with projections; `options.source` makes it cross-attention.
   * @returns {Promise<{ output: Float32Array, weights?, scores?, q?, k?, v?, stats: object }>}
   */
  async multiHead(x, weights, options) {
    const backend = this.#live('multiHead', this.#compute);
    return this.#timed(backend, () => backend.multiHead(checkMultiHead(x, weights, options)));
  }

  /** The [queryLength, keyLength] visibility matrix of one head (1 = may attend). */
  maskMatrix(options) {
    return this.#live('maskMatrix').maskMatrix(checkMaskMatrix(options));
  }

  /** Bytes of working memory a strategy needs for a shape (no weights requested). */
  workingSetBytes(options) {
    return this.#live('workingSetBytes').workingSetBytes(checkWorkingSet(options));
  }

  /** Reusable q/k/v/output buffers in wasm memory for copy-free loops (see buffers.js). */
  allocate(shape) {
    return this.#live('allocate').allocate(checkBufferShape(shape));
  }

  /** Frees the instance and its buffers; every later call throws. Safe to call twice. */
  dispose() {
    if (this.#wasm === null) return;
    if (this.#compute !== this.#wasm) this.#compute.dispose();
    this.#wasm.dispose();
    this.#compute = null;
    this.#wasm = null;
  }

  async #timed(backend, run) {
    const started = performance.now();
    const result = await run();
    result.stats = { ...result.stats, backend: backend.name, ms: performance.now() - started };
    return result;
  }

  #live(what, backend = this.#wasm) {
    if (this.#wasm === null) throw new Error(`${what}: this attnlens instance was disposed`);
    return backend;
  }
}
