// Per-call wasm memory: inputs copied in with one TypedArray.set each, outputs allocated, and
// everything freed when the call ends, whatever happens.
//
// Heap views are re-read at every use (heapU8, heapF32, heapF64): any malloc, and any core call,
// may grow wasm memory, which replaces the ArrayBuffer and detaches older views.

import { attnlensError } from './errors.js';
import { bytesOf, lengthOf } from './typed-arrays.js';

// wasm32 memory as linked (-sALLOW_MEMORY_GROWTH, default maximum).
export const MAX_WASM_BYTES = 2 ** 31;

/**
 * malloc, or an 'out_of_memory' RangeError naming `name`. Sizes are checked first: _malloc takes
 * a 32-bit size, and 2^32 bytes would silently become 0.
 */
export function malloc(module, byteLength, name) {
  const ptr = byteLength < MAX_WASM_BYTES ? module._malloc(Math.max(byteLength, 1)) : 0;
  if (ptr === 0) {
    // Say what is in use: a request well under 2 GiB fails when weights already fill the memory.
    const inUse = heapU8(module).byteLength;
    throw attnlensError(
      'out_of_memory',
      name,
      `cannot allocate ${mib(byteLength)} of wasm memory: it is limited to 2 GiB, and ` +
        `${mib(inUse)} of it is already grown (model weights, other buffers)`,
    );
  }
  return ptr;
}

// The glue's views (module.HEAPU8, ...) follow growth made by this thread. In the threads build
// a helper thread (a Web Worker) may grow the shared memory too; the glue's views then still
// show the old, shorter buffer, so a view of the memory's current buffer is made instead
// (loader.js puts the memory on the module as attnlensMemory).
function currentView(module, name, Type) {
  const view = module[name];
  const buffer = module.attnlensMemory?.buffer;
  return buffer !== undefined && view.buffer !== buffer ? new Type(buffer) : view;
}

const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB (${bytes} bytes)`;

/** Views of the whole wasm memory as it is now. */
export const heapU8 = (module) => currentView(module, 'HEAPU8', Uint8Array);
export const heapF32 = (module) => currentView(module, 'HEAPF32', Float32Array);
export const heapF64 = (module) => currentView(module, 'HEAPF64', Float64Array);

export class HeapScope {
  #module;
  #pointers = [];

  constructor(module) {
    this.#module = module;
  }

  /** `byteLength` bytes of wasm memory, freed by free(); an 'out_of_memory' RangeError if none. */
  allocate(byteLength, name) {
    const ptr = malloc(this.#module, byteLength, name);
    this.#pointers.push(ptr);
    return ptr;
  }

  /**
   * A copy of a typed array in wasm memory, as the { ptr, length } the bindings take. Sizes come
   * from the array's internal slots (typed-arrays.js), so the element count the core is told is
   * the one that was copied, whatever the object claims.
   */
  copyIn(array, name) {
    const bytes = bytesOf(array);
    const ptr = this.allocate(bytes.byteLength, name);
    heapU8(this.#module).set(bytes, ptr);
    return { ptr, length: lengthOf(array) };
  }

  /** Room for `length` floats. */
  floats(length, name) {
    return { ptr: this.allocate(length * 4, name), length };
  }

  /** Room for `length` bytes. */
  bytes(length, name) {
    return { ptr: this.allocate(length, name), length };
  }

  free() {
    for (const ptr of this.#pointers) this.#module._free(ptr);
    this.#pointers = [];
  }
}

/** Runs fn(scope) and frees every block the scope allocated, also when fn throws. */
export function withHeap(module, fn) {
  const scope = new HeapScope(module);
  try {
    return fn(scope);
  } finally {
    scope.free();
  }
}

/** A copy (never a view) of `length` floats at `ptr`. */
export function copyFloats(module, { ptr, length }) {
  const start = ptr >>> 2;
  return heapF32(module).slice(start, start + length);
}

/** A copy of `length` bytes at `ptr`. */
export function copyBytes(module, { ptr, length }) {
  return heapU8(module).slice(ptr, ptr + length);
}
