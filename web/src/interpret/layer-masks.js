// Which keys each layer of a model run let each query see, from the layers' masks in the mask
// notation (model.info.layerMasks, or a mask surgery's), by the engine's own mask evaluation: the
// 0/1 [N, N] matrices the views hatch and the head labels and word groups count with.
import { maskOptions, parseMask } from '../mask-notation.js';

/**
 * @param {import('../attention.js').Attention} attention an engine (its maskMatrix)
 * @param {string[]} masks one notation per layer
 * @param {number} n tokens
 * @returns {Uint8Array[]} per layer; layers with the same mask share one matrix
 */
export function layerVisibility(attention, masks, n) {
  const byMask = new Map();
  return masks.map((mask) => {
    if (!byMask.has(mask)) {
      const options = maskOptions(parseMask(mask), n);
      byMask.set(
        mask,
        attention.maskMatrix({ heads: 1, queryLength: n, keyLength: n, head: 0, ...options }),
      );
    }
    return byMask.get(mask);
  });
}
