// Blocks of named slots that a raw binding reads: scalar slots, then an (address, element count)
// pair per array, all doubles in wasm memory (bindings/call_block.h's form). The call block
// (call-block.js), the model blocks and the trainer blocks are all LayoutBlocks; their lists are
// generated from the bindings' headers (web/scripts/block-layouts.mjs). Each binding exports its
// blocks' names (_callBlockLayout(), _modelBlockLayout(), _trainerBlockLayout()); the JavaScript
// compares them with its own, name by name, so a .wasm from another build is refused with the
// first name that differs instead of misreading a slot.

import { heapF64 } from './heap.js';

/** '' when the lists are equal, else where they first differ ("create.slots[3] is ..."). */
export function layoutDifference(ours, theirs, what) {
  const length = Math.max(ours.length, theirs.length);
  for (let i = 0; i < length; i++) {
    if (ours[i] !== theirs[i]) {
      const named = (list) => `'${list[i] ?? '(none)'}'`;
      return `${what}[${i}] is ${named(theirs)} in the module, ${named(ours)} here`;
    }
  }
  return '';
}

/**
 * Throws unless `theirs` (what the module exports) has exactly the lists of `ours`, for each
 * `{ kind: { slots, arrays } }` and each name in `codeLists` (lists of codes).
 */
export function checkLayout(ours, theirs, what, codeLists = []) {
  const problems = [];
  for (const [kind, { slots, arrays }] of Object.entries(ours)) {
    if (slots === undefined) continue;
    problems.push(layoutDifference(slots, theirs[kind].slots, `${kind}.slots`));
    problems.push(layoutDifference(arrays, theirs[kind].arrays, `${kind}.arrays`));
  }
  for (const list of codeLists) {
    problems.push(layoutDifference(ours[list], theirs[list] ?? [], list));
  }
  const first = problems.find(Boolean);
  if (first) {
    throw new Error(
      `attnlens: the wasm module's ${what} blocks differ from this JavaScript's (${first}): ` +
        'the .wasm and the package come from different builds',
    );
  }
}

// Each list's names as a Map to their index, built once per list: a call block is filled on
// every attention call, so a name must not cost a search.
const INDEXES = new WeakMap();
function indexOf(list) {
  let index = INDEXES.get(list);
  if (index === undefined) {
    index = new Map(list.map((name, i) => [name, i]));
    INDEXES.set(list, index);
  }
  return index;
}

/** One block of a layout `{ slots, arrays }`, staged in JavaScript, then written at once. */
export class LayoutBlock {
  #module;
  #ptr;
  #slots;
  #arrays;
  #slotCount;

  /** @param {import('./heap.js').HeapScope} heap frees the block with the call's other memory */
  constructor(module, heap, { slots, arrays }, name) {
    this.#module = module;
    this.#slots = indexOf(slots);
    this.#arrays = indexOf(arrays);
    this.#slotCount = slots.length;
    /** The staged values; write() copies them into wasm memory. */
    this.values = new Float64Array(slots.length + 2 * arrays.length);
    this.#ptr = heap.allocate(this.values.byteLength, `${name} block`);
  }

  /** Sets one slot by name. */
  set(name, value) {
    this.values[this.#index(this.#slots, name)] = value;
    return this;
  }

  /** An array's { ptr, length } (from heap.js) under its name. */
  array(name, { ptr, length }) {
    const at = this.#slotCount + 2 * this.#index(this.#arrays, name);
    this.values[at] = ptr;
    this.values[at + 1] = length;
    return this;
  }

  /** Copies the staged values into wasm memory; returns the address the bindings take. */
  write() {
    heapF64(this.#module).set(this.values, this.#ptr >>> 3);
    return this.#ptr;
  }

  /** A result slot as the call left it. */
  result(name) {
    return heapF64(this.#module)[(this.#ptr >>> 3) + this.#index(this.#slots, name)];
  }

  #index(index, name) {
    const i = index.get(name);
    if (i === undefined) throw new Error(`attnlens: no block entry '${name}'`);
    return i;
  }
}
