// The compute thread's side of the page's Picture mode: one vision model run on the reader's
// picture, and what the views draw from it that costs more than a glance: the class token's
// attention rollout across the layers and each head's mean attention distance. Imported by
// compute.js only when a picture first runs, so text models never load it.
import { meanAttentionDistance } from '../../src/interpret/attention-distance.js';
import { attentionRollout } from '../../src/interpret/rollout.js';

// The labels a classifier's top list shows.
const TOP_LABELS = 5;

/**
 * @param model a loaded VisionModel
 * @param {{ data: Uint8ClampedArray, width: number, height: number }} pixels RGBA
 * @param {string | null} mask a mask surgery for every layer (patch:K), or null
 * @returns {Promise<object>} run()'s result (attention [L,H,N,N], tokens, registers, grid,
 *   input, labels) with patchSize, the mask, the class token's rollout [N] and the heads'
 *   distances
 */
export async function runPicture(model, pixels, mask = null) {
  const { patchSize, layers, heads, predicts } = model.info;
  // A classifier with fewer classes than TOP_LABELS lists them all.
  const topK = Math.min(TOP_LABELS, model.labels?.length ?? TOP_LABELS);
  const options = predicts ? { topK } : {};
  if (mask) options.masks = mask;
  const run = await model.run(pixels, options);
  const shape = { layers, heads, n: run.tokens };
  const rollout = attentionRollout(run.attention, shape, { rows: [0] });
  const distance = meanAttentionDistance(run.attention, shape, {
    ...run.grid,
    patchSize,
    first: 1 + run.registers,
  });
  return { ...run, patchSize, layers, heads, mask, rollout, distance };
}
