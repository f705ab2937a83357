// The memory of disposed allocate() buffers, kept from reuse while old views of it (which
// dispose() cannot detach) may still write there. dispose() fills the blocks with a pattern;
// every later call checks each block's ends and a moving window of it (a whole check of
// megabytes would cost milliseconds a call) and fails with the 'disposed' error if one was
// written; a block is freed once memory growth has detached the old views (never for shared
// memory, whose views stay) or when more than RETIRED_LIMIT bytes are held, oldest first.

import { disposedError } from './errors.js';
import { heapU8 } from './heap.js';

/** The most bytes of disposed buffers held back from reuse. */
export const RETIRED_LIMIT = 16 * 2 ** 20;

// Words of each retired block a call checks: both ends, and a window that moves on each time.
const EDGE_WORDS = 64;
const WINDOW_WORDS = 4096;

// A NaN that no arithmetic produces (its payload is not the canonical one).
const PATTERN = 0x7fbadbad;

// Whether the words checked this time (see above) still hold the pattern; moves the window on.
function holdsPattern(words, block) {
  const n = words.length;
  const start = block.cursor;
  block.cursor = start + WINDOW_WORDS < n ? start + WINDOW_WORDS : 0;
  for (const [from, to] of [
    [0, Math.min(EDGE_WORDS, n)],
    [Math.max(0, n - EDGE_WORDS), n],
    [start, Math.min(start + WINDOW_WORDS, n)],
  ]) {
    for (let i = from; i < to; i++) if (words[i] !== PATTERN) return false;
  }
  return true;
}

const isShared = (buffer) =>
  typeof SharedArrayBuffer === 'function' && buffer instanceof SharedArrayBuffer;

export class RetiredMemory {
  #module;
  #blocks = []; // { name, ptr, bytes, buffer, cursor }, oldest first
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
      this.#blocks.push({ name, ptr, bytes: length * 4, buffer, cursor: 0 });
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
      if (!holdsPattern(words, block)) {
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
