// The WebAssembly backend: runs checked problems (checks.js) through the embind module.
//
// Every backend has a `name` and the compute methods attention(problem) and multiHead(problem),
// which return a result or a Promise of one. The wasm backend also serves maskMatrix,
// workingSetBytes and allocate, and is always loaded: it is the fallback of any other backend.

import { WasmBuffers } from './buffers.js';
import { coreError } from './errors.js';
import { copyBytes, copyFloats, rawOptions, withHeap } from './heap.js';
import { loadWasmModule } from './loader.js';

/** @param {'simd' | 'scalar'} flavour */
export async function openWasmBackend(flavour, where) {
  return new WasmBackend(await loadWasmModule(flavour, where), `wasm-${flavour}`);
}

// The bindings return { error } instead of throwing through C++ frames.
function unwrap(result) {
  if (result.error) throw coreError(result.error);
  return result;
}

export class WasmBackend {
  #module;
  #buffers = new Set();

  constructor(module, name) {
    this.#module = module;
    this.name = name;
  }

  /** The raw embind module (its `_names` functions); for tests and diagnostics. */
  get module() {
    return this.#module;
  }

  get version() {
    return this.#module._version();
  }

  /** Bytes allocated on the wasm heap right now. */
  heapBytesInUse() {
    return this.#module._heapBytesInUse();
  }

  attention({ shape, q, k, v, options, returnWeights, returnScores }) {
    const m = this.#module;
    return withHeap(m, (heap) => {
      const matrix = shape.heads * shape.queryLength * shape.keyLength;
      const tensors = {
        q: heap.copyIn(q, 'q'),
        k: heap.copyIn(k, 'k'),
        v: heap.copyIn(v, 'v'),
        output: heap.floats(shape.heads * shape.queryLength * shape.valueDim, 'output'),
      };
      if (returnWeights) tensors.weights = heap.floats(matrix, 'weights');
      if (returnScores) tensors.scores = heap.floats(matrix, 'scores');
      const stats = unwrap(m._attention(shape, tensors, rawOptions(options, heap)));
      const result = { output: copyFloats(m, tensors.output) };
      if (returnWeights) result.weights = copyFloats(m, tensors.weights);
      if (returnScores) result.scores = copyFloats(m, tensors.scores);
      result.stats = stats;
      return result;
    });
  }

  multiHead({ shape, tensors: inputs, options, returnWeights, returnScores, returnProjections }) {
    const m = this.#module;
    const { heads, queryLength: nq, keyLength: nk, headDim, valueDim, outDim } = shape;
    return withHeap(m, (heap) => {
      const tensors = {};
      for (const [key, array] of Object.entries(inputs)) tensors[key] = heap.copyIn(array, key);
      tensors.output = heap.floats(nq * outDim, 'output');
      if (returnWeights) tensors.weights = heap.floats(heads * nq * nk, 'weights');
      if (returnScores) tensors.scores = heap.floats(heads * nq * nk, 'scores');
      if (returnProjections) {
        tensors.q = heap.floats(heads * nq * headDim, 'q');
        tensors.k = heap.floats(heads * nk * headDim, 'k');
        tensors.v = heap.floats(heads * nk * valueDim, 'v');
      }
      const stats = unwrap(m._multiHead(shape, tensors, rawOptions(options, heap)));
      const result = { output: copyFloats(m, tensors.output) };
      for (const key of ['weights', 'scores', 'q', 'k', 'v']) {
        if (tensors[key]) result[key] = copyFloats(m, tensors[key]);
      }
      result.stats = stats;
      return result;
    });
  }

  maskMatrix({ shape, head, options }) {
    const m = this.#module;
    return withHeap(m, (heap) => {
      const out = heap.bytes(shape.queryLength * shape.keyLength, 'out');
      unwrap(m._maskMatrix(shape, head, out, rawOptions(options, heap)));
      return copyBytes(m, out);
    });
  }

  workingSetBytes({ shape, strategy, score, additiveHidden }) {
    return unwrap(this.#module._workingSetBytes(shape, strategy, { score, additiveHidden })).bytes;
  }

  /** Reusable input/output buffers in wasm memory (buffers.js). */
  allocate(shape) {
    const buffers = new WasmBuffers(this.#module, this.name, shape, () => this.#buffers.delete(buffers));
    this.#buffers.add(buffers);
    return buffers;
  }

  /** Frees every live buffer set and lets go of the module. */
  dispose() {
    for (const buffers of [...this.#buffers]) buffers.dispose();
    this.#module = null;
  }
}
