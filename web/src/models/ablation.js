// run({ ablate }): heads whose attention output the core replaces (transformer.h's
// ForwardOptions::ablations): 'zero' removes a head, 'mean' keeps its average over the text's
// positions and removes what it does per token. The modes are the core's own list
// (bindings/models/model_block.h, through model-block-layout.js).

import { describe } from '../errors.js';
import { integer, oneOf, optionsObject, rangeError, typeError } from '../argument-checks.js';
import { LAYOUT } from './model-block.js';

/** The ablation modes, as the core names them. */
export const ABLATION_MODES = LAYOUT.ablationModes;

/**
 * The checked list: undefined gives []; each entry { layer, head, mode = 'zero' } with layer and
 * head inside the model, and no head twice.
 * @returns {{ layer: number, head: number, mode: 'zero' | 'mean' }[]}
 */
export function checkAblations(ablate, { layers, heads }) {
  if (ablate === undefined) return [];
  if (!Array.isArray(ablate)) {
    throw typeError('ablate', `must be an array of { layer, head, mode }, got ${describe(ablate)}`);
  }
  const seen = new Set();
  return ablate.map((entry, i) => {
    const name = `ablate[${i}]`;
    const raw = optionsObject(entry, name, ['layer', 'head', 'mode']);
    const layer = integer(raw.layer, `${name}.layer`, 0, layers - 1);
    const head = integer(raw.head, `${name}.head`, 0, heads - 1);
    const mode = oneOf(raw.mode, `${name}.mode`, ABLATION_MODES, 'zero');
    const key = layer * heads + head;
    if (seen.has(key)) {
      throw rangeError(name, `layer ${layer} head ${head} is listed twice`);
    }
    seen.add(key);
    return { layer, head, mode };
  });
}
