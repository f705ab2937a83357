// The call block: one operation's shape, options and tensors as an array of doubles in wasm
// memory, read by the bindings in one pass (bindings/call_block.h; its lists reach this file
// through call-block-layout.js, generated from the header). A LayoutBlock with the options'
// writer and the stats' reader on top. Filling it costs a few microseconds, where the bindings
// used to read ~40 option properties one by one through embind (~50-90 microseconds a call).
//
// The module exports its lists by name (_callBlockLayout()); checkBlockLayout() compares them
// name by name with these when a module loads, so a .wasm built from another layout (two slots
// swapped, a code renumbered) is refused before any call could read one option as another.
//
// Values are staged in a JavaScript Float64Array and written with one set() once every tensor has
// been copied in: any allocation may grow wasm memory and detach older heap views.

import {
  CALL_BLOCK_LAYOUT as LAYOUT,
  CALL_BLOCK_SECTIONS as SECTIONS,
} from './call-block-layout.js';
import { LayoutBlock } from './layout-block.js';

const indexByName = (names) => Object.freeze(Object.fromEntries(names.map((name, i) => [name, i])));

/** Slot index by name. */
export const SLOT = indexByName(LAYOUT.slots);
/** Index of an array's address slot (its element count follows) by name. */
export const ARRAY_SLOT = Object.freeze(
  Object.fromEntries(LAYOUT.arrays.map((name, i) => [name, LAYOUT.slots.length + 2 * i])),
);
/** Doubles in a block. */
export const BLOCK_LENGTH = LAYOUT.slots.length + 2 * LAYOUT.arrays.length;

// The codes of the score, strategy and sparsePattern slots (vocabulary.js's lists are these).
const SCORE_CODES = indexByName(LAYOUT.scores);
const STRATEGY_CODES = indexByName(LAYOUT.strategies);
const SPARSE_CODES = indexByName(LAYOUT.sparsePatterns);

// The slots under the header's `Shape.` section comment.
const SHAPE_SLOTS = SECTIONS.slots.shape;

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

export class CallBlock extends LayoutBlock {
  /** @param {import('./heap.js').HeapScope} heap frees the block with the call's other memory */
  constructor(module, heap) {
    super(module, heap, LAYOUT, 'call');
    this.values[SLOT.threads] = 1; // 0 would mean "every hardware thread" to the core
  }

  /** Shape fields present in `shape` (multi-head widths left out stay 0: "same as"). */
  shape(shape) {
    for (const key of SHAPE_SLOTS) {
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

  /**
   * The stats a compute call wrote: { strategy, tilesVisited, tilesTotal, pairsScored,
   * scratchBytes, threads }.
   */
  stats() {
    return {
      strategy: LAYOUT.strategies[this.result('resultStrategy')],
      tilesVisited: this.result('resultTilesVisited'),
      tilesTotal: this.result('resultTilesTotal'),
      pairsScored: this.result('resultPairsScored'),
      scratchBytes: this.result('resultScratchBytes'),
      threads: this.result('resultThreads'),
    };
  }
}
