// From the core's weight names (src/models/weights.cpp: "token_embedding",
// "layers.3.attention.query.weight", "head.norm.bias", ...) to a checkpoint's key names. Each
// architecture gives a table; the checkpoint's own prefix ("transformer.", "bert.") is found
// from the tensors present.

import { attnlensError } from '../../errors.js';

const LAYER_NAME = /^layers\.(\d+)\.(.+)\.(weight|bias)$/;
const PARAMETER_NAME = /^(.+)\.(weight|bias)$/;

/**
 * The checkpoint's prefix: the first of `prefixes` under which `probe` exists. Throws naming
 * every key it looked for when none does.
 */
export function findPrefix(tensors, prefixes, probe, modelType) {
  const found = prefixes.find((prefix) => tensors.has(prefix + probe));
  if (found === undefined) {
    const tried = prefixes.map((prefix) => `'${prefix}${probe}'`).join(' or ');
    throw attnlensError(
      'not_found',
      prefixes[0] + probe,
      `this is not a ${modelType} checkpoint: it has no ${tried}`,
    );
  }
  return found;
}

/**
 * keyFor(coreName) -> the checkpoint key, from
 *   prefix       the checkpoint's prefix ('' or 'transformer.', ...)
 *   modelWide    { coreName: checkpoint name or [alternatives] } (without the prefix, unless
 *                `unprefixed` lists it)
 *   layer        (index) => the prefix of layer `index` ('h.3.')
 *   perLayer     { core module: checkpoint module } ('attention.qkv': 'attn.c_attn')
 *   norms        core modules that are LayerNorms: old checkpoints call their parameters
 *                gamma / beta
 *   unprefixed   checkpoint names that never carry the prefix (BERT's cls.* head)
 */
export function keyMapper(tensors, { prefix, modelWide, layer, perLayer, norms, unprefixed = [] }) {
  const withPrefix = (name) => (unprefixed.some((p) => name.startsWith(p)) ? name : prefix + name);
  const parameterNames = (module, parameter, isNorm) =>
    isNorm ? [parameter, parameter === 'weight' ? 'gamma' : 'beta'] : [parameter];

  function candidates(coreName) {
    if (coreName in modelWide) return [modelWide[coreName]].flat().map(withPrefix);
    const inLayer = LAYER_NAME.exec(coreName);
    if (inLayer) {
      const [, index, module, parameter] = inLayer;
      const base = withPrefix(layer(Number(index)) + perLayer[module]);
      return parameterNames(module, parameter, norms.includes(module)).map((p) => `${base}.${p}`);
    }
    const parameterOf = PARAMETER_NAME.exec(coreName);
    if (parameterOf && parameterOf[1] in modelWide) {
      const [, module, parameter] = parameterOf;
      const base = withPrefix(modelWide[module]);
      return parameterNames(module, parameter, norms.includes(module)).map((p) => `${base}.${p}`);
    }
    throw new Error(`attnlens: no checkpoint name for the core's weight '${coreName}'`);
  }

  return function keyFor(coreName) {
    const names = candidates(coreName);
    const found = names.find((name) => tensors.has(name));
    if (found === undefined) {
      throw attnlensError('not_found', names[0], 'is missing from the checkpoint');
    }
    return found;
  };
}
