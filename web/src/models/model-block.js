// The blocks of the model bindings (bindings/models/model_block.h), in layout-block.js's form;
// checked name by name against the module's _modelBlockLayout() when a model is created.

import { checkLayout, LayoutBlock } from '../layout-block.js';

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
      'finalNorm',
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

/** Throws unless the module's model blocks have exactly these names, in this order. */
export function checkModelBlockLayout(module) {
  if (typeof module._modelBlockLayout !== 'function') {
    throw new Error(
      'attnlens: this wasm module has no model functions: the .wasm and the package come from ' +
        'different builds',
    );
  }
  checkLayout(LAYOUT, module._modelBlockLayout(), 'model', [
    'architectures',
    'activations',
    'dtypes',
    'ropeScalings',
  ]);
}

/** One block of `kind` ('create' or 'forward'). */
export class ModelBlock extends LayoutBlock {
  constructor(module, heap, kind) {
    super(module, heap, LAYOUT[kind], kind);
  }
}
