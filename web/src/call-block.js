// The call block: one operation's shape, options and tensors as an array of doubles in wasm
// memory, read by the bindings in one pass (bindings/call_block.h, whose enums these lists mirror
// in the same order). Filling it costs a few microseconds, where the bindings used to read ~40
// option properties one by one through embind (~50-90 microseconds a call).
//
// Values are staged in a JavaScript Float64Array and written with one set() once every tensor has
// been copied in: any allocation may grow wasm memory and detach older heap views.

import { heapF64 } from './heap.js';

const SLOTS = [
  'heads',
  'queryLength',
  'keyLength',
  'headDim',
  'valueDim',
  'modelDim',
  'keyModelDim',
  'outDim',
  'score',
  'scale',
  'temperature',
  'strategy',
  'causal',
  'windowDilation',
  'windowBefore',
  'windowAfter',
  'sparsePattern',
  'sparseStride',
  'sparseSummary',
  'additiveHidden',
  'head',
  'threads',
  'resultStrategy',
  'resultTilesVisited',
  'resultTilesTotal',
  'resultScratchBytes',
  'resultBytes',
  'resultThreads',
];
const ARRAYS = [
  'globalTokens',
  'keyLengths',
  'keyValid',
  'mask',
  'additive.wQuery',
  'additive.wKey',
  'additive.v',
  'q',
  'k',
  'v',
  'x',
  'source',
  'wQuery',
  'wKey',
  'wValue',
  'wOut',
  'bQuery',
  'bKey',
  'bValue',
  'bOut',
  'output',
  'weights',
  'scores',
  'maskOut',
];

/** Slot index by name. */
export const SLOT = Object.freeze(Object.fromEntries(SLOTS.map((name, i) => [name, i])));
/** Index of an array's address slot (its element count follows) by name. */
export const ARRAY_SLOT = Object.freeze(
  Object.fromEntries(ARRAYS.map((name, i) => [name, SLOTS.length + 2 * i])),
);
/** Doubles in a block; the module's _callBlockLength() must agree (checked when it loads). */
export const BLOCK_LENGTH = SLOTS.length + 2 * ARRAYS.length;

const SCORE_CODES = { 'scaled-dot': 0, dot: 1, cosine: 2, additive: 3 };
const STRATEGY_CODES = { auto: 0, materialized: 1, streaming: 2 };
const STRATEGY_NAMES = ['auto', 'materialized', 'streaming'];
const SPARSE_CODES = { strided: 1, fixed: 2 };

/** Throws when the module was built from another call block layout than this file's. */
export function checkBlockLayout(module) {
  const length = module._callBlockLength();
  if (length !== BLOCK_LENGTH) {
    throw new Error(
      `attnlens: the wasm module's call block has ${length} slots, this JavaScript ` +
        `expects ${BLOCK_LENGTH}: the .wasm and the package's JavaScript come from different ` +
        'builds',
    );
  }
}

export class CallBlock {
  #module;
  #ptr;
  /** The staged values; write() copies them into wasm memory. */
  values = new Float64Array(BLOCK_LENGTH);

  /** @param {import('./heap.js').HeapScope} heap frees the block with the call's other memory */
  constructor(module, heap) {
    this.#module = module;
    this.#ptr = heap.allocate(BLOCK_LENGTH * 8, 'call block');
    this.values[SLOT.threads] = 1; // 0 would mean "every hardware thread" to the core
  }

  /** Shape fields present in `shape` (multi-head widths left out stay 0: "same as"). */
  shape(shape) {
    for (const key of [
      'heads',
      'queryLength',
      'keyLength',
      'headDim',
      'valueDim',
      'modelDim',
      'keyModelDim',
      'outDim',
    ]) {
      if (shape[key] !== undefined) this.values[SLOT[key]] = shape[key];
    }
    return this;
  }

  /** Options as checks.js resolved them; typed arrays among them are copied in through `heap`. */
  options(options, heap) {
    const v = this.values;
    if (options.score !== undefined) v[SLOT.score] = SCORE_CODES[options.score];
    v[SLOT.scale] = options.scale ?? NaN;
    v[SLOT.temperature] = options.temperature ?? 1;
    if (options.strategy !== undefined) v[SLOT.strategy] = STRATEGY_CODES[options.strategy];
    v[SLOT.causal] = options.causal ? 1 : 0;
    if (options.window) {
      v[SLOT.windowBefore] = options.window.before;
      v[SLOT.windowAfter] = options.window.after;
      v[SLOT.windowDilation] = options.window.dilation;
    }
    if (options.sparse) {
      v[SLOT.sparsePattern] = SPARSE_CODES[options.sparse.pattern];
      v[SLOT.sparseStride] = options.sparse.stride;
      v[SLOT.sparseSummary] = options.sparse.summary;
    }
    if (options.globalTokens)
      this.array(
        'globalTokens',
        heap.copyIn(Float64Array.from(options.globalTokens), 'globalTokens'),
      );
    if (options.keyLengths)
      this.array('keyLengths', heap.copyIn(Float64Array.from(options.keyLengths), 'keyLengths'));
    if (options.keyValid) this.array('keyValid', heap.copyIn(options.keyValid, 'keyValid'));
    if (options.mask) this.array('mask', heap.copyIn(options.mask, 'mask'));
    if (options.additive) {
      const { hidden, wQuery, wKey, v: vector } = options.additive;
      v[SLOT.additiveHidden] = hidden;
      this.array('additive.wQuery', heap.copyIn(wQuery, 'additive.wQuery'));
      this.array('additive.wKey', heap.copyIn(wKey, 'additive.wKey'));
      this.array('additive.v', heap.copyIn(vector, 'additive.v'));
    }
    return this;
  }

  /** Sets one slot by name. */
  set(name, value) {
    this.values[SLOT[name]] = value;
    return this;
  }

  /** An array's { ptr, length } (from heap.js) under its name. */
  array(name, { ptr, length }) {
    this.values[ARRAY_SLOT[name]] = ptr;
    this.values[ARRAY_SLOT[name] + 1] = length;
    return this;
  }

  /** Copies the staged values into wasm memory; returns the address the bindings take. */
  write() {
    heapF64(this.#module).set(this.values, this.#ptr >>> 3);
    return this.#ptr;
  }

  /** A result slot as the call left it. */
  result(name) {
    return heapF64(this.#module)[(this.#ptr >>> 3) + SLOT[name]];
  }

  /**
   * The stats a compute call wrote: { strategy, tilesVisited, tilesTotal, scratchBytes, threads }.
   */
  stats() {
    return {
      strategy: STRATEGY_NAMES[this.result('resultStrategy')],
      tilesVisited: this.result('resultTilesVisited'),
      tilesTotal: this.result('resultTilesTotal'),
      scratchBytes: this.result('resultScratchBytes'),
      threads: this.result('resultThreads'),
    };
  }
}
