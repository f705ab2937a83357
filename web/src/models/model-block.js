// The blocks of the model bindings (bindings/models/model_block.h), in layout-block.js's form;
// checked name by name against the module's _modelBlockLayout() when a model is created. The
// lists come from the header through model-block-layout.js (web/scripts/block-layouts.mjs).

import { checkLayout, LayoutBlock } from '../layout-block.js';
import { MODEL_BLOCK_LAYOUT } from './model-block-layout.js';

export const LAYOUT = MODEL_BLOCK_LAYOUT;

/** loadModel's dtype values, the core's matrix storages: 'f32', 'f16', 'q8' (Q8_0 blocks). */
export const WEIGHT_DTYPES = LAYOUT.dtypes;

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
    'crossMasks',
  ]);
}

/** One block of `kind` ('create' or 'forward'). */
export class ModelBlock extends LayoutBlock {
  constructor(module, heap, kind) {
    super(module, heap, LAYOUT[kind], kind);
  }
}
