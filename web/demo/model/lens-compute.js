// The compute thread's side of the "Which heads matter" and "Logit lens" panels, on the page's
// loaded model (compute.js) and its text cut as the page cuts it: every head's effect on one
// prediction (model.headEffects(), with progress and cancel), the predictions with chosen heads
// switched off, and every layer's top tokens. Loaded the first time a panel asks.
import { tokenLabels } from '../../src/interpret/words.js';
import { fitText, live } from './compute.js';

const TOP_K = 10;
const LENS_TOP_K = 5;

// The predictions at the position headEffects() measures: a GPT's next token, BERT's first
// [MASK] (none without one).
const predictedTop = (model, predictions) =>
  model.info.causal ? predictions : (predictions[0]?.top ?? []);

function fitted(model, text) {
  return fitText(model, text, '').text;
}

/**
 * params: { key, text, target: token id or null (the top prediction) }
 * @returns {{ position, target: { id, token, text }, logProb, effects: Float32Array [layers,
 *   heads], ms }}
 */
export async function measureHeadEffects({ key, text, target }, { signal, progress }) {
  const model = live(key);
  const { layers, heads } = model.info;
  const started = performance.now();
  const result = await model.headEffects(fitted(model, text), {
    ...(target === null || target === undefined ? {} : { target }),
    signal,
    onProgress: progress,
  });
  const effects = new Float32Array(layers * heads);
  for (const { layer, head, delta } of result.heads) effects[layer * heads + head] = delta;
  return {
    position: result.position,
    target: result.target,
    logProb: result.logProb,
    effects,
    ms: performance.now() - started,
  };
}

/**
 * params: { key, text, off: [{ layer, head, mode }] }
 * @returns {{ before, after }} the top predictions with every head on and with `off` off
 */
export async function runAblated({ key, text, off }) {
  const model = live(key);
  const cut = fitted(model, text);
  const before = await model.run(cut, { topK: TOP_K, truncate: true });
  const after = off.length
    ? await model.run(cut, { topK: TOP_K, truncate: true, ablate: off })
    : before;
  return {
    before: predictedTop(model, before.predictions),
    after: predictedTop(model, after.predictions),
  };
}

/**
 * params: { key, text }
 * @returns {{ topK, tokens: string[], top }} the lens of model.run() (top [states][positions]
 *   [{ id, token, text, p }]) and the tokens' labels
 */
export async function runLogitLens({ key, text }) {
  const model = live(key);
  const cut = fitted(model, text);
  const run = await model.run(cut, { lens: { topK: LENS_TOP_K }, truncate: true });
  const tokens = tokenLabels(run.tokens, [cut, '']).map((token) => token.text);
  return { topK: run.lens.topK, tokens, top: run.lens.top };
}
