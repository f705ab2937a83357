// The compute thread's second model, for "Compare two models": loaded beside the page's model
// (compute.js keeps that one), each on its own engine, and run on the same text as it. Both runs
// come back in one answer, so the two columns the page draws always show the same text.
import { infoOf, live, openModel, runOn } from './compute.js';

let second = null; // { key, model }

/** Loads the second model (describeModel's params); the previous second model is freed. */
export async function loadCompareModel(params, options) {
  if (second?.key === params.key) return infoOf(second);
  releaseCompareModel(); // one second model at a time
  const model = await openModel(params, options);
  second = { key: params.key, model };
  return infoOf(second);
}

/**
 * params: { keys: [the page's model, the second], text, pair }. Each model runs with its own
 * tokenizer and masks, over its own tokens (no surgery, no words: the columns compare models).
 * @returns {Array} runModel's answer for each
 */
export async function runCompareModels({ keys, text, pair }) {
  if (!second || second.key !== keys[1]) throw new Error('model: the second model is not loaded');
  const models = [live(keys[0]), second.model];
  const runs = [];
  for (const [i, model] of models.entries()) {
    runs.push(await runOn(model, { key: keys[i], text, pair, surgery: null, words: false }));
  }
  return runs;
}

/**
 * Frees the second model and its engine (the reader removed it, or left real models).
 * @returns {{ freed: boolean }} whether there was one to free
 */
export function releaseCompareModel() {
  const freed = second !== null;
  second?.model.dispose();
  second = null;
  return { freed };
}
