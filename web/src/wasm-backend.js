// The WebAssembly backend: runs checked problems (checks.js) through the embind module.
//
// Every backend has a `name` and the compute methods attention(problem) and multiHead(problem),
// which return a result or a Promise of one. The wasm backend also serves attentionBackward,
// maskMatrix, workingSetBytes and allocate, and is always loaded: it is the fallback of any other
// backend.

import { WasmBuffers } from './buffers.js';
import { CallBlock, checkBlockLayout } from './call-block.js';
import { disposedError, unwrap } from './errors.js';
import { copyBytes, copyFloats, heapU8, withHeap } from './heap.js';
import { KvCache } from './kv-cache.js';
import { loadWasmModule } from './loader.js';
import { RetiredMemory } from './retired-memory.js';
import { THREADS_MIN_FLOPS } from './threads.js';

/**
 * @param {'relaxed' | 'simd' | 'scalar' | 'relaxed-threads' | 'simd-threads'} flavour
 * @param {number} [threads] threaded flavours: the threads a large call uses (threads.js)
 */
export async function openWasmBackend(flavour, where, threads = 1) {
  const module = await loadWasmModule(flavour, where, threads - 1);
  // A threaded module is its flavour with threads: same name, and `threads` says the rest.
  return new WasmBackend(module, `wasm-${flavour.replace(/-threads$/, '')}`, threads);
}

export class WasmBackend {
  #module;
  #buffers = new Set();
  #caches = new Set();
  #retired;

  constructor(module, name, threads = 1) {
    checkBlockLayout(module);
    this.#module = module;
    this.#retired = new RetiredMemory(module);
    this.name = name;
    /** Threads a call of at least threadsMinFlops uses (1: the single-threaded module). */
    this.threads = threads;
    /** THREADS_MIN_FLOPS; bench/threads-break-even.mjs lowers it to measure the break-even. */
    this.threadsMinFlops = THREADS_MIN_FLOPS;
  }

  // Small calls stay on one thread: waking the helpers would cost more than they save.
  #threadsFor({ heads, queryLength, keyLength, headDim, valueDim }) {
    const flops = 2 * heads * queryLength * keyLength * (headDim + valueDim);
    return flops >= this.threadsMinFlops ? this.threads : 1;
  }

  /** The raw embind module (its `_names` functions); for tests and diagnostics. */
  get module() {
    return this.#module;
  }

  get version() {
    return this.#module._version();
  }

  /** Bytes of wasm memory the module holds (allocated or not): its linear memory's size. */
  get memoryBytes() {
    return heapU8(this.#module).byteLength;
  }

  /** Bytes allocated on the wasm heap right now. */
  heapBytesInUse() {
    return this.#module._heapBytesInUse();
  }

  attention(problem) {
    const m = this.#live('attention');
    return withHeap(m, (heap) =>
      this.#attention(m, heap, problem, {
        k: heap.copyIn(problem.k, 'k'),
        v: heap.copyIn(problem.v, 'v'),
        capacity: 0,
      }),
    );
  }

  // One attention call over k and v blocks in wasm memory: attention()'s copies (capacity 0:
  // keyLength rows per head) or a KV cache's (capacity rows per K/V head, filled to keyLength).
  #attention(m, heap, { shape, q, options, returnWeights, returnScores }, { k, v, capacity }) {
    const call = new CallBlock(m, heap)
      .shape(shape)
      .options(options, heap)
      .set('threads', this.#threadsFor(shape))
      .set('kvCapacity', capacity);
    const matrix = shape.heads * shape.queryLength * shape.keyLength;
    const output = heap.floats(shape.heads * shape.queryLength * shape.valueDim, 'output');
    call.array('q', heap.copyIn(q, 'q')).array('k', k).array('v', v).array('output', output);
    const weights = returnWeights ? heap.floats(matrix, 'weights') : null;
    const scores = returnScores ? heap.floats(matrix, 'scores') : null;
    if (weights) call.array('weights', weights);
    if (scores) call.array('scores', scores);
    unwrap(m._attention(call.write()));
    const result = { output: copyFloats(m, output) };
    if (weights) result.weights = copyFloats(m, weights);
    if (scores) result.scores = copyFloats(m, scores);
    result.stats = call.stats();
    return result;
  }

  /**
   * Gradients of attention() for dOutput (checks.js checkAttentionBackward): the forward runs
   * first into output and rowLogSumExp, scratch that never leaves wasm memory.
   */
  attentionBackward({ shape, q, k, v, dOutput, options }) {
    const m = this.#module;
    const { heads, kvHeads, queryLength: nq, keyLength: nk, headDim, valueDim } = shape;
    return withHeap(m, (heap) => {
      const call = new CallBlock(m, heap)
        .shape(shape)
        .options(options, heap)
        .set('threads', this.#threadsFor(shape));
      const inputs = { q, k, v, dOutput };
      for (const [key, array] of Object.entries(inputs)) call.array(key, heap.copyIn(array, key));
      call
        .array('output', heap.floats(heads * nq * valueDim, 'output'))
        .array('rowLogSumExp', heap.floats(heads * nq, 'rowLogSumExp'));
      const gradients = {
        dq: heap.floats(heads * nq * headDim, 'dq'),
        dk: heap.floats(kvHeads * nk * headDim, 'dk'),
        dv: heap.floats(kvHeads * nk * valueDim, 'dv'),
      };
      for (const [key, tensor] of Object.entries(gradients)) call.array(key, tensor);
      unwrap(m._attentionBackward(call.write()));
      const result = {};
      for (const [key, tensor] of Object.entries(gradients)) result[key] = copyFloats(m, tensor);
      result.stats = call.stats();
      return result;
    });
  }

  multiHead({ shape, tensors: inputs, options, returnWeights, returnScores, returnProjections }) {
    const m = this.#live('multiHead');
    const { heads, kvHeads, queryLength: nq, keyLength: nk, headDim, valueDim, outDim } = shape;
    return withHeap(m, (heap) => {
      const call = new CallBlock(m, heap)
        .shape(shape)
        .options(options, heap)
        .set('threads', this.#threadsFor(shape));
      for (const [key, array] of Object.entries(inputs)) call.array(key, heap.copyIn(array, key));
      const outputs = { output: heap.floats(nq * outDim, 'output') };
      if (returnWeights) outputs.weights = heap.floats(heads * nq * nk, 'weights');
      if (returnScores) outputs.scores = heap.floats(heads * nq * nk, 'scores');
      if (returnProjections) {
        outputs.q = heap.floats(heads * nq * headDim, 'q');
        outputs.k = heap.floats(kvHeads * nk * headDim, 'k');
        outputs.v = heap.floats(kvHeads * nk * valueDim, 'v');
      }
      for (const [key, tensor] of Object.entries(outputs)) call.array(key, tensor);
      unwrap(m._multiHead(call.write()));
      const result = {};
      for (const [key, tensor] of Object.entries(outputs)) result[key] = copyFloats(m, tensor);
      result.stats = call.stats();
      return result;
    });
  }

  maskMatrix({ shape, head, options }) {
    const m = this.#live('maskMatrix');
    return withHeap(m, (heap) => {
      const call = new CallBlock(m, heap).shape(shape).options(options, heap).set('head', head);
      const out = heap.bytes(shape.queryLength * shape.keyLength, 'out');
      unwrap(m._maskMatrix(call.array('maskOut', out).write()));
      return copyBytes(m, out);
    });
  }

  workingSetBytes({ shape, strategy, score, additiveHidden }) {
    const m = this.#live('workingSetBytes');
    return withHeap(m, (heap) => {
      const call = new CallBlock(m, heap).shape(shape).options({ score, strategy }, heap);
      if (additiveHidden !== undefined) call.set('additiveHidden', additiveHidden);
      unwrap(m._workingSetBytes(call.write()));
      return call.result('resultBytes');
    });
  }

  /** Reusable input/output buffers in wasm memory (buffers.js). */
  allocate(shape) {
    // The shape is fixed, so is the thread count its calls use.
    const module = this.#live('allocate');
    const buffers = new WasmBuffers(module, this.name, shape, this.#threadsFor(shape), {
      onDispose: (blocks) => {
        this.#buffers.delete(buffers);
        // After the instance's dispose() the module is dropped, and its memory with it.
        if (this.#module !== null) this.#retired.retire(blocks);
      },
      beforeCall: (what) => this.#retired.sweep(what),
    });
    this.#buffers.add(buffers);
    return buffers;
  }

  /** A KV cache in wasm memory (kv-cache.js), attended over in place. */
  kvCache(shape) {
    const module = this.#live('kvCache');
    const cache = new KvCache(module, this.name, shape, {
      attend: (problem, kv) => {
        const m = this.#live('attend');
        return withHeap(m, (heap) => this.#attention(m, heap, problem, kv));
      },
      beforeCall: (what) => this.#retired.sweep(what),
      onDispose: () => this.#caches.delete(cache),
    });
    this.#caches.add(cache);
    return cache;
  }

  /** Frees every live buffer set and KV cache and lets go of the module. */
  dispose() {
    this.#module = null;
    for (const buffers of [...this.#buffers]) buffers.dispose(); // their memory goes with it
    for (const cache of [...this.#caches]) cache.dispose();
  }

  // The module, or the 'disposed' error for a call that reaches a disposed backend (backend.js
  // turns it into the instance's).
  // Every call checks the memory of disposed buffer sets first (retired-memory.js).
  #live(what) {
    if (this.#module === null) throw disposedError(what);
    this.#retired.sweep(what);
    return this.#module;
  }
}
