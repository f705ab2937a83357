// Reusable tensors in wasm memory, for loops that want no copies in or out.
//
// Lifetime: the buffers live until dispose() (or the instance's dispose()). The getters return a
// fresh Float32Array view on every read, because wasm memory can grow during any call (this
// instance's or another buffer set's), and growth detaches every view taken before it. Keep a
// view only until the next call into the same instance. A view kept past dispose() cannot be
// detached, so the memory is retired rather than freed (retired-memory.js): a late write through
// it never reaches another allocation, and the next call reports it.

import { CallBlock } from './call-block.js';
import { checkRun, inputError } from './checks.js';
import { coreError, disposedError } from './errors.js';
import { heapF32, malloc, withHeap } from './heap.js';

export class WasmBuffers {
  #module;
  #onDispose; // (blocks) => void: the backend retires them
  #beforeCall; // (what) => void: the backend's check of retired memory
  #blocks; // { q, k, v, output }: { ptr, length } each

  #backendName;
  #threads; // threads each run() uses: the instance's, or 1 below THREADS_MIN_FLOPS

  constructor(module, backendName, shape, threads, { onDispose, beforeCall }) {
    this.#module = module;
    this.#backendName = backendName;
    this.#threads = threads;
    this.#onDispose = onDispose;
    this.#beforeCall = beforeCall;
    this.shape = Object.freeze({ ...shape });
    const { heads, kvHeads = heads, queryLength: nq, keyLength: nk, headDim, valueDim } = shape;
    const lengths = {
      q: heads * nq * headDim,
      k: kvHeads * nk * headDim,
      v: kvHeads * nk * valueDim,
      output: heads * nq * valueDim,
    };
    this.#blocks = {};
    try {
      for (const [name, length] of Object.entries(lengths)) {
        this.#blocks[name] = { ptr: malloc(module, length * 4, name), length };
      }
    } catch (error) {
      this.#freeBlocks();
      throw error;
    }
    // Zeros to start with, not whatever the memory held before (the pattern of retired memory).
    for (const name of Object.keys(lengths)) this.#view(name).fill(0);
  }

  /** Queries [heads, queryLength, headDim]: write inputs here. */
  get q() {
    return this.#view('q');
  }
  /** Keys [kvHeads, keyLength, headDim]. */
  get k() {
    return this.#view('k');
  }
  /** Values [kvHeads, keyLength, valueDim]. */
  get v() {
    return this.#view('v');
  }
  /** Output [heads, queryLength, valueDim], written by run(). */
  get output() {
    return this.#view('output');
  }

  get disposed() {
    return this.#module === null;
  }

  /**
   * Attention over the current contents of q, k and v into output, with the same options as
   * attention() except the shape (fixed at allocate()) and returned matrices.
   * @returns {Promise<{ stats: object }>}
   */
  async run(options) {
    const m = this.#live('run');
    const resolved = checkRun(options, this.shape);
    this.#beforeCall('run');
    const started = performance.now();
    const stats = withHeap(m, (heap) => {
      const call = new CallBlock(m, heap)
        .shape(this.shape)
        .options(resolved, heap)
        .set('threads', this.#threads);
      for (const [name, block] of Object.entries(this.#blocks)) call.array(name, block);
      const error = m._attention(call.write())?.error;
      // The core checks that q, k and v are finite; only its error is rebuilt here, with the
      // index of the first bad element (views re-read: the call may have grown the heap).
      if (error) throw inputError({ finite: this.#inputViews() }, coreError(error));
      return call.stats();
    });
    return { stats: { ...stats, backend: this.#backendName, ms: performance.now() - started } };
  }

  /**
   * Gives the wasm memory back (retired until no old view can reach it); the getters and run()
   * throw afterwards. Safe to call twice.
   */
  dispose() {
    if (this.#module === null) return;
    const blocks = this.#blocks;
    this.#blocks = {};
    this.#module = null;
    this.#onDispose(blocks);
  }

  #freeBlocks() {
    for (const { ptr } of Object.values(this.#blocks)) this.#module._free(ptr);
    this.#blocks = {};
  }

  #live(what) {
    if (this.#module === null) throw disposedError(what, 'these buffers were disposed');
    return this.#module;
  }

  #inputViews() {
    return { q: this.#view('q'), k: this.#view('k'), v: this.#view('v') };
  }

  #view(name) {
    const module = this.#live(name);
    const { ptr, length } = this.#blocks[name];
    return new Float32Array(heapF32(module).buffer, ptr, length);
  }
}
