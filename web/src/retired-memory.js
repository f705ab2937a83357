// The memory of disposed allocate() buffers, kept out of reuse while old views of it can still
// write there.
//
// A view taken from a buffer set's getters (q, k, v, output) is a window onto wasm memory that
// dispose() cannot close: a view's length is fixed and wasm memory cannot be transferred. Freed
// at once, that memory would go to the next allocation, and a late write through the old view
// would land in someone else's tensor. So dispose() fills the blocks with a pattern and retires
// them here instead:
//   - every call into the instance checks that each retired block still holds the pattern, and
//     fails with the 'disposed' error naming the buffer when one does not (then refills it);
//   - a retired block is freed once wasm memory has grown, which detaches every view of the old
//     buffer (shared memory's views never detach: there only the limit frees them);
//   - beyond RETIRED_LIMIT bytes, the oldest blocks are freed, so a loop that allocates and
//     disposes keeps its memory flat, and the check stays short (8 MiB: about a millisecond).

import { disposedError } from './errors.js';
import { heapU8 } from './heap.js';

/** The most bytes of disposed buffers held back from reuse. */
export const RETIRED_LIMIT = 8 * 2 ** 20;

// A NaN that no arithmetic produces (its payload is not the canonical one).
const PATTERN = 0x7fbadbad;

const isShared = (buffer) =>
  typeof SharedArrayBuffer === 'function' && buffer instanceof SharedArrayBuffer;

export class RetiredMemory {
  #module;
  #blocks = []; // { name, ptr, bytes, buffer }, oldest first
  #bytes = 0;

  constructor(module) {
    this.#module = module;
  }

  /** Bytes held back now. */
  get bytes() {
    return this.#bytes;
  }

  /** Takes the blocks of a disposed buffer set ({ name: { ptr, length } } of floats). */
  retire(blocks) {
    const buffer = heapU8(this.#module).buffer;
    for (const [name, { ptr, length }] of Object.entries(blocks)) {
      new Uint32Array(buffer, ptr, length).fill(PATTERN);
      this.#blocks.push({ name, ptr, bytes: length * 4, buffer });
      this.#bytes += length * 4;
    }
  }

  /**
   * Before a call into the module (`what` names it): frees the blocks no view can reach any
   * more and the oldest beyond the limit, and throws the 'disposed' error if a view wrote into
   * one of the others since its dispose() (or since the last call that reported one).
   */
  sweep(what) {
    if (this.#blocks.length === 0) return;
    const buffer = heapU8(this.#module).buffer;
    let written = null;
    const kept = [];
    for (const block of this.#blocks) {
      if (block.buffer !== buffer && !isShared(buffer)) {
        this.#free(block);
        continue;
      }
      kept.push(block);
    }
    while (this.#bytes > RETIRED_LIMIT) this.#free(kept.shift());
    for (const block of kept) {
      const words = new Uint32Array(buffer, block.ptr, block.bytes / 4);
      let intact = true;
      for (let i = 0; i < words.length && intact; i++) intact = words[i] === PATTERN;
      if (!intact) {
        written ??= block.name;
        words.fill(PATTERN);
      }
    }
    this.#blocks = kept;
    if (written !== null) {
      throw disposedError(
        what,
        `a view of the ${written} buffer of an allocate() set was written after its ` +
          "dispose(); take views from a buffer set's getters only while it is live",
      );
    }
  }

  #free(block) {
    this.#module._free(block.ptr);
    this.#bytes -= block.bytes;
  }
}
