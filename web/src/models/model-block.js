// The blocks of the model bindings (bindings/models/model_block.h): scalar slots, then an
// (address, element count) pair per array, all doubles in wasm memory. The lists below are
// compared, name by name, with the ones the module exports (_modelBlockLayout()), so a .wasm
// from another build is refused with the first name that differs instead of misreading a slot.

import { heapF64 } from '../heap.js';

export const LAYOUT = Object.freeze({
  create: {
    slots: [
      'architecture',
      'layers',
      'heads',
      'hidden',
      'intermediate',
      'vocab',
      'maxPositions',
      'typeVocabSize',
      'layerNormEps',
      'activation',
      'scaleAttnWeights',
      'scaleAttnByInverseLayerIdx',
      'lmHead',
      'matrixDtype',
      'memoryLimit',
      'kvHeads',
      'headDim',
      'qkvBias',
      'outputBias',
      'mlpBias',
      'tieWordEmbeddings',
      'ropeTheta',
      'ropeScaling',
      'ropeFactor',
      'ropeLowFreqFactor',
      'ropeHighFreqFactor',
      'ropeOriginalMaxPositions',
      'resultParameters',
      'resultWeightBytes',
      'resultLoadScratchBytes',
    ],
    arrays: ['localWindows'],
  },
  forward: {
    slots: ['threads', 'projectionsLayer', 'resultScratchBytes', 'resultThreads'],
    arrays: [
      'tokenIds',
      'tokenTypes',
      'logitPositions',
      'masks',
      'attention',
      'logits',
      'hiddenStates',
      'logSumExp',
      'projections',
    ],
  },
  architectures: ['gpt2', 'gpt_neo', 'bert', 'llama'],
  activations: ['gelu_tanh', 'gelu_erf', 'silu'],
  dtypes: ['f32', 'f16'],
  ropeScalings: ['none', 'linear', 'llama3'],
});

function firstDifference(ours, theirs, what) {
  const length = Math.max(ours.length, theirs.length);
  for (let i = 0; i < length; i++) {
    if (ours[i] !== theirs[i]) {
      const named = (list) => `'${list[i] ?? '(none)'}'`;
      return `${what}[${i}] is ${named(theirs)} in the module, ${named(ours)} here`;
    }
  }
  return '';
}

/** Throws unless the module's model blocks have exactly these names, in this order. */
export function checkModelBlockLayout(module) {
  if (typeof module._modelBlockLayout !== 'function') {
    throw new Error(
      'attnlens: this wasm module has no model functions: the .wasm and the package come from ' +
        'different builds',
    );
  }
  const theirs = module._modelBlockLayout();
  const problems = [
    firstDifference(LAYOUT.create.slots, theirs.create.slots, 'create.slots'),
    firstDifference(LAYOUT.create.arrays, theirs.create.arrays, 'create.arrays'),
    firstDifference(LAYOUT.forward.slots, theirs.forward.slots, 'forward.slots'),
    firstDifference(LAYOUT.forward.arrays, theirs.forward.arrays, 'forward.arrays'),
    firstDifference(LAYOUT.architectures, theirs.architectures, 'architectures'),
    firstDifference(LAYOUT.activations, theirs.activations, 'activations'),
    firstDifference(LAYOUT.dtypes, theirs.dtypes, 'dtypes'),
    firstDifference(LAYOUT.ropeScalings, theirs.ropeScalings ?? [], 'ropeScalings'),
  ].filter(Boolean);
  if (problems.length) {
    throw new Error(
      `attnlens: the wasm module's model blocks differ from this JavaScript's (${problems[0]}): ` +
        'the .wasm and the package come from different builds',
    );
  }
}

/** One block of `kind` ('create' or 'forward'), staged in JavaScript, then written at once. */
export class ModelBlock {
  #module;
  #ptr;
  #slots;
  #arrays;

  /** @param {import('../heap.js').HeapScope} heap frees the block with the call's other memory */
  constructor(module, heap, kind) {
    const { slots, arrays } = LAYOUT[kind];
    this.#module = module;
    this.#slots = slots;
    this.#arrays = arrays;
    this.values = new Float64Array(slots.length + 2 * arrays.length);
    this.#ptr = heap.allocate(this.values.byteLength, `${kind} block`);
  }

  set(name, value) {
    this.values[this.#index(this.#slots, name)] = value;
    return this;
  }

  /** An array's { ptr, length } (from heap.js) under its name. */
  array(name, { ptr, length }) {
    const at = this.#slots.length + 2 * this.#index(this.#arrays, name);
    this.values[at] = ptr;
    this.values[at + 1] = length;
    return this;
  }

  /** Copies the staged values into wasm memory; returns the address the bindings take. */
  write() {
    heapF64(this.#module).set(this.values, this.#ptr >>> 3);
    return this.#ptr;
  }

  result(name) {
    return heapF64(this.#module)[(this.#ptr >>> 3) + this.#index(this.#slots, name)];
  }

  #index(list, name) {
    const index = list.indexOf(name);
    if (index < 0) throw new Error(`attnlens: no model block entry '${name}'`);
    return index;
  }
}
