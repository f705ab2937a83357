// The call block: one operation's shape, options and tensors as an array of doubles in wasm
// memory, read by the bindings in one pass (bindings/call_block.h, whose lists these mirror in the
// same order). Filling it costs a few microseconds, where the bindings used to read ~40 option
// properties one by one through embind (~50-90 microseconds a call).
//
// The module exports its lists by name (_callBlockLayout()); checkBlockLayout() compares them
// name by name with these when a module loads, so a .wasm built from another layout (two slots
// swapped, a code renumbered) is refused before any call could read one option as another.
//
// Values are staged in a JavaScript Float64Array and written with one set() once every tensor has
// been copied in: any allocation may grow wasm memory and detach older heap views.

import { heapF64 } from './heap.js';
import { SCORES, SPARSE_PATTERNS, STRATEGIES } from './vocabulary.js';

const SLOTS = [
  'heads',
  'queryLength',
  'keyLength',
  'headDim',
  'valueDim',
  'modelDim',
  'keyModelDim',
  'outDim',
  'kvHeads',
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
  'queryOffset',
  'softcap',
  'alibi',
  'topK',
  'lsh.buckets',
  'lsh.rounds',
  'lsh.seed',
  'kvCapacity',
  'resultStrategy',
  'resultTilesVisited',
  'resultTilesTotal',
  'resultScratchBytes',
  'resultBytes',
  'resultThreads',
  'resultPairsScored',
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
  'dOutput',
  'rowLogSumExp',
  'dq',
  'dk',
  'dv',
  'bias',
  'alibiSlopes',
];

// The codes of the score, strategy and sparsePattern slots, in code order: the vocabulary's
// lists (the bindings' codes follow the same order; checkBlockLayout compares them by name).
const SPARSE_CODES_IN_ORDER = ['none', ...SPARSE_PATTERNS];

/** Every list of the layout, under the names _callBlockLayout() gives them. */
const LAYOUT = {
  slots: SLOTS,
  arrays: ARRAYS,
  scores: SCORES,
  strategies: STRATEGIES,
  sparsePatterns: SPARSE_CODES_IN_ORDER,
};

const indexByName = (names) => Object.freeze(Object.fromEntries(names.map((name, i) => [name, i])));

/** Slot index by name. */
export const SLOT = indexByName(SLOTS);
/** Index of an array's address slot (its element count follows) by name. */
export const ARRAY_SLOT = Object.freeze(
  Object.fromEntries(ARRAYS.map((name, i) => [name, SLOTS.length + 2 * i])),
);
/** Doubles in a block. */
export const BLOCK_LENGTH = SLOTS.length + 2 * ARRAYS.length;

const SCORE_CODES = indexByName(SCORES);
const STRATEGY_CODES = indexByName(STRATEGIES);
const SPARSE_CODES = indexByName(SPARSE_CODES_IN_ORDER);

/**
 * The first difference between a module's layout (its _callBlockLayout()) and this file's, as a
 * sentence; '' when they agree name for name.
 */
export function layoutDifference(layout) {
  for (const [list, expected] of Object.entries(LAYOUT)) {
    const actual = layout?.[list];
    if (!Array.isArray(actual)) return `it has no '${list}' list`;
    for (let i = 0; i < Math.max(actual.length, expected.length); i++) {
      if (actual[i] !== expected[i]) {
        const name = (value) => (value === undefined ? 'nothing' : `'${value}'`);
        const inModule = `${list}[${i}] is ${name(actual[i])} in the module`;
        return `${inModule}, ${name(expected[i])} in this JavaScript`;
      }
    }
  }
  return '';
}

/** Throws when the module was built from another call block layout than this file's. */
export function checkBlockLayout(module) {
  const difference =
    typeof module._callBlockLayout === 'function'
      ? layoutDifference(module._callBlockLayout())
      : 'it exports no _callBlockLayout()';
  if (difference) {
    throw new Error(
      `attnlens: the wasm module's call block layout differs from this JavaScript's ` +
        `(${difference}): the .wasm and the package's JavaScript come from different builds`,
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
      'kvHeads',
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
    v[SLOT.queryOffset] = options.queryOffset ?? 0;
    v[SLOT.softcap] = options.softcap ?? 0;
    v[SLOT.topK] = options.topK ?? 0;
    v[SLOT.alibi] = options.alibi ? 1 : 0;
    if (options.bias) this.array('bias', heap.copyIn(options.bias, 'bias'));
    if (options.alibiSlopes) {
      this.array('alibiSlopes', heap.copyIn(options.alibiSlopes, 'alibiSlopes'));
    }
    if (options.lsh) {
      v[SLOT['lsh.buckets']] = options.lsh.buckets;
      v[SLOT['lsh.rounds']] = options.lsh.rounds;
      v[SLOT['lsh.seed']] = options.lsh.seed;
    }
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
   * The stats a compute call wrote: { strategy, tilesVisited, tilesTotal, pairsScored,
   * scratchBytes, threads }.
   */
  stats() {
    return {
      strategy: STRATEGIES[this.result('resultStrategy')],
      tilesVisited: this.result('resultTilesVisited'),
      tilesTotal: this.result('resultTilesTotal'),
      pairsScored: this.result('resultPairsScored'),
      scratchBytes: this.result('resultScratchBytes'),
      threads: this.result('resultThreads'),
    };
  }
}
