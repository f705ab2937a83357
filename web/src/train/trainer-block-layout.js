// Generated from bindings/training/trainer_block.h by web/scripts/block-layouts.mjs: do not edit;
// change the header and run `node web/scripts/block-layouts.mjs` (build-wasm.sh does).
// The module's _trainerBlockLayout() answers the same lists; the JavaScript compares them
// name by name when it loads.

/** The trainer seam's lists, in the header's order. */
export const TRAINER_BLOCK_LAYOUT = Object.freeze({
  create: Object.freeze({
    slots: Object.freeze([
      'layers',
      'heads',
      'width',
      'context',
      'vocab',
      'attentionOnly',
      'mlpWidth',
      'seed',
      'finalNorm',
      'tokenEmbeddingStd',
      'resultParameters',
    ]),
    arrays: Object.freeze([]),
  }),
  step: Object.freeze({
    slots: Object.freeze([
      'batch',
      'learningRate',
      'beta1',
      'beta2',
      'epsilon',
      'weightDecay',
      'maxGradNorm',
      'temperature',
      'threads',
      'resultLoss',
      'resultGradNorm',
      'resultClipped',
      'resultStep',
    ]),
    arrays: Object.freeze(['tokens', 'weights']),
  }),
});
