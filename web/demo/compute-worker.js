// The demo's compute thread: receives { id, type, params } and answers { id, ok, result | error }.
import {
  benchmark,
  capabilities,
  computeView,
  engine,
  scoreSpread,
  transferables,
} from './compute-core.js';

const handlers = { view: computeView, benchmark, capabilities, spread: scoreSpread };

self.addEventListener('message', async (event) => {
  const { id, type, params } = event.data;
  try {
    const result = await handlers[type](params);
    self.postMessage({ id, ok: true, result }, transferables(result));
  } catch (error) {
    self.postMessage({
      id,
      ok: false,
      error: { name: error?.name ?? 'Error', message: String(error?.message ?? error) },
    });
  }
});
self.postMessage({ ready: true });
// Compile and warm up the engine now, while the page is still setting itself up; a failure here
// reaches the page with its first request (computeView awaits the same promise).
engine().catch(() => {});
