// run({ masks }) for every model: one mask in the mask notation (mask-notation.js) for all
// layers, or one per layer, checked here and turned into the engine's mask options for each
// forward pass. Text models take the position patterns; a vision model takes a picture's:
// global, patch:K (the 2-D local window over its patch grid), tokens and pad.
import { describe } from '../errors.js';
import { rangeError, typeError } from '../argument-checks.js';
import { checkMaskMatrix } from '../checks.js';
import { maskForMode, maskOptions, parseMask } from '../mask-notation.js';

// The patterns whose positions are places in a line of text, meaningless on a patch grid.
const TEXT_ONLY = ['local', 'dilated', 'strided', 'fixed', 'align'];

/**
 * `masks`: undefined, one notation string for every layer, or one per layer. `vision`: whether
 * the model reads pictures. @returns {null | { mask, name, text }[]} the parsed masks, each with
 * the parameter its errors name ('masks' or 'masks[i]')
 */
export function checkMasks(masks, layers, { vision = false } = {}) {
  if (masks === undefined) return null;
  const parse = (text, name) => {
    if (typeof text !== 'string')
      throw typeError(name, `must be a mask string, got ${describe(text)}`);
    let mask;
    try {
      mask = parseMask(text);
    } catch (error) {
      throw rangeError(name, error.message.replace(/^mask: /, ''));
    }
    // A model's layers take position masks; top-k and LSH run on attention() and analyze().
    if (mask.topK > 0 || mask.buckets > 0) {
      throw rangeError(name, `"${text}": topk and lsh do not apply to a model's layers`);
    }
    if (vision && (mask.causal || TEXT_ONLY.includes(mask.pattern))) {
      throw rangeError(
        name,
        `"${text}": a picture's tokens are not a line of text: a vision model takes global, ` +
          'patch:K (a K x K window of patches), tokens:i,j and pad:i,j',
      );
    }
    if (!vision && mask.pattern === 'patch') {
      throw rangeError(
        name,
        `"${text}": patch:K is a window over a picture's patches; a text model takes local:W`,
      );
    }
    return { mask, name, text };
  };
  if (typeof masks === 'string') return [parse(masks, 'masks')];
  if (!Array.isArray(masks)) {
    throw typeError('masks', `must be a mask string or one per layer, got ${describe(masks)}`);
  }
  if (masks.length !== layers) {
    throw rangeError('masks', `must list one mask per layer (${layers}), got ${masks.length}`);
  }
  return masks.map((text, i) => parse(text, `masks[${i}]`));
}

/**
 * A parsed mask as the engine's checked mask options for N tokens of self-attention (sizes
 * clamped to the text; an alignment window is a local one here), as attention() takes them.
 * `patches`: a picture's { rows, columns, first }, for patch:K.
 */
export function attentionMask(mask, n, patches = null) {
  return checkMaskMatrix({
    queryLength: n,
    keyLength: n,
    ...maskOptions(maskForMode(mask, 'self'), n, n, patches),
  }).options;
}

/**
 * Checks checkMasks()'s patch windows against the picture's grid: K at most 2 * max(rows,
 * columns) - 1, the window that already reaches every patch from every patch (a wider one is a
 * mistake, e.g. K meant for another model's grid).
 */
export function checkPatchWindows(masks, { rows, columns }) {
  const widest = 2 * Math.max(rows, columns) - 1;
  for (const { mask, name, text } of masks) {
    if (mask.pattern === 'patch' && mask.patchWindow > widest) {
      throw rangeError(
        name,
        `"${text}": a ${mask.patchWindow} x ${mask.patchWindow} window is wider than this ` +
          `picture's ${rows} x ${columns} patch grid needs: at most ${widest} (which already ` +
          'reaches every patch from every patch)',
      );
    }
  }
}
