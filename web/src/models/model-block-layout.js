// Generated from bindings/models/model_block.h by web/scripts/block-layouts.mjs: do not edit;
// change the header and run `node web/scripts/block-layouts.mjs` (build-wasm.sh does).
// The module's _modelBlockLayout() answers the same lists; the JavaScript compares them
// name by name when it loads.

/** The model seam's lists, in the header's order. */
export const MODEL_BLOCK_LAYOUT = Object.freeze({
  create: Object.freeze({
    slots: Object.freeze([
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
    ]),
    arrays: Object.freeze(['localWindows']),
  }),
  forward: Object.freeze({
    slots: Object.freeze([
      'threads',
      'projectionsLayer',
      'cache',
      'resultScratchBytes',
      'resultThreads',
      'resultCacheLength',
    ]),
    arrays: Object.freeze([
      'tokenIds',
      'tokenTypes',
      'logitPositions',
      'masks',
      'attention',
      'logits',
      'hiddenStates',
      'logSumExp',
      'projections',
    ]),
  }),
  architectures: Object.freeze(['gpt2', 'gpt_neo', 'bert', 'llama']),
  activations: Object.freeze(['gelu_tanh', 'gelu_erf', 'silu']),
  dtypes: Object.freeze(['f32', 'f16']),
  ropeScalings: Object.freeze(['none', 'linear', 'llama3']),
});
