// The demo's compute thread: receives { id, type, params } and answers { id, ok, result | error };
// a long request (a model download) also posts { id, progress } as it goes, and { cancel: id }
// from the page aborts it. Real models (model/compute.js) load only when the page first asks.
import {
  benchmark,
  capabilities,
  computeView,
  engine,
  scoreSpread,
  transferables,
} from './compute-core.js';

const handlers = { view: computeView, benchmark, capabilities, spread: scoreSpread };
const MODEL_HANDLERS = {
  modelDescribe: 'describeModel',
  modelLoad: 'loadModel',
  modelRun: 'runModel',
  modelPicture: 'runPictureModel',
  modelExplain: 'explainLayer',
  modelHeadScores: 'scoreHeads',
  modelRelease: 'releaseModel',
  modelTranslate: 'translateText',
  modelContinue: 'continueText',
};
// The second model of a comparison: its own module, loaded when a comparison first starts.
const COMPARE_HANDLERS = {
  compareLoad: 'loadCompareModel',
  compareRun: 'runCompareModels',
  compareRelease: 'releaseCompareModel',
};
// The "Which heads matter" and "Logit lens" panels: loaded when a panel first asks.
const LENS_HANDLERS = {
  lensHeadEffects: 'measureHeadEffects',
  lensAblate: 'runAblated',
  lensLogitLens: 'runLogitLens',
};
const running = new Map(); // id -> AbortController
const drawing = new Map(); // id -> resolve(): a request waiting until the page drew its progress

async function handlerFor(type) {
  if (handlers[type]) return handlers[type];
  if (COMPARE_HANDLERS[type]) {
    return (await import('./model/compare-compute.js'))[COMPARE_HANDLERS[type]];
  }
  if (LENS_HANDLERS[type]) return (await import('./model/lens-compute.js'))[LENS_HANDLERS[type]];
  if (!MODEL_HANDLERS[type]) throw new Error(`unknown request ${type}`);
  const models = await import('./model/compute.js');
  return models[MODEL_HANDLERS[type]];
}

self.addEventListener('message', async (event) => {
  if (event.data.cancel !== undefined) {
    running.get(event.data.cancel)?.abort();
    return;
  }
  if (event.data.drawn !== undefined) {
    drawing.get(event.data.drawn)?.();
    return;
  }
  const { id, type, params } = event.data;
  const controller = new AbortController();
  running.set(id, controller);
  try {
    const handler = await handlerFor(type);
    const result = await handler(params, {
      signal: controller.signal,
      progress: (progress) => self.postMessage({ id, progress }),
      // Resolves once the page has handled the last progress (or the request was cancelled):
      // a stream that waits for it goes at the pace the page draws, never queueing ahead.
      drawn: () =>
        new Promise((resolve) => {
          drawing.set(id, resolve);
          controller.signal.addEventListener('abort', resolve, { once: true });
        }),
    });
    self.postMessage({ id, ok: true, result }, transferables(result));
  } catch (error) {
    self.postMessage({
      id,
      ok: false,
      error: {
        name: error?.name ?? 'Error',
        message: String(error?.message ?? error),
        code: error?.code,
        parameter: error?.parameter,
        // why a model did not load (src/models/load-failure.js)
        reason: error?.reason,
        status: error?.status,
      },
    });
  } finally {
    running.delete(id);
    drawing.delete(id);
  }
});
self.postMessage({ ready: true });
// Compile and warm up the engine now, while the page is still setting itself up; a failure here
// reaches the page with its first request (computeView awaits the same promise).
engine().catch(() => {});
