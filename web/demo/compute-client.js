// The page's side of the compute thread. Requests of one kind supersede each other: while one is
// running, only the newest waiting request is kept, so a burst of keystrokes or slider steps
// costs one computation, not one per event. Falls back to the main thread if the module worker
// cannot start (old browser, blocked worker-src).
const WORKER_URL = new URL('./compute-worker.js', import.meta.url);

export class ComputeClient {
  constructor() {
    this.nextId = 1;
    this.pending = new Map();
    this.lanes = new Map();
    this.worker = null;
    this.local = null;
    this.ready = this.#start();
  }

  async #start() {
    try {
      const worker = new Worker(WORKER_URL, { type: 'module' });
      await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('worker did not start')), 8000);
        worker.addEventListener(
          'message',
          (event) => {
            if (event.data?.ready) {
              clearTimeout(timer);
              resolve();
            }
          },
          { once: true },
        );
        worker.addEventListener(
          'error',
          (event) => {
            clearTimeout(timer);
            event.preventDefault?.();
            reject(new Error(event.message || 'worker failed to load'));
          },
          { once: true },
        );
      });
      worker.addEventListener('message', (event) => this.#settle(event.data));
      this.worker = worker;
      this.where = 'worker';
    } catch {
      this.local = await import('./compute-core.js');
      this.where = 'main thread';
    }
  }

  #settle({ id, ok, result, error, progress }) {
    const entry = this.pending.get(id);
    if (!entry) return;
    if (progress) {
      try {
        entry.onProgress?.(progress);
      } finally {
        this.worker.postMessage({ drawn: id }); // the worker may wait for it (context.drawn)
      }
      return;
    }
    this.pending.delete(id);
    if (ok) entry.resolve(result);
    else entry.reject(revive(error));
  }

  async #send(type, params, job) {
    await this.ready;
    const id = this.nextId++;
    job.id = id;
    if (this.worker) {
      return new Promise((resolve, reject) => {
        this.pending.set(id, { resolve, reject, onProgress: job.onProgress });
        this.worker.postMessage({ id, type, params });
      });
    }
    const handlers = {
      view: this.local.computeView,
      benchmark: this.local.benchmark,
      capabilities: this.local.capabilities,
      spread: this.local.scoreSpread,
    };
    if (handlers[type]) return handlers[type](params);
    // Without a worker, real models load on this thread, on demand, all the same.
    const models = await import('./model/compute.js');
    const compare = type.startsWith('compare') ? await import('./model/compare-compute.js') : {};
    const lens = type.startsWith('lens') ? await import('./model/lens-compute.js') : {};
    job.controller = new AbortController();
    const local = {
      modelDescribe: models.describeModel,
      modelLoad: models.loadModel,
      modelRun: models.runModel,
      modelPicture: models.runPictureModel,
      modelExplain: models.explainLayer,
      modelHeadScores: models.scoreHeads,
      modelRelease: models.releaseModel,
      compareLoad: compare.loadCompareModel,
      compareRun: compare.runCompareModels,
      compareRelease: compare.releaseCompareModel,
      modelTranslate: models.translateText,
      lensHeadEffects: lens.measureHeadEffects,
      lensAblate: lens.runAblated,
      lensLogitLens: lens.runLogitLens,
      modelContinue: models.continueText,
    };
    return local[type](params, {
      signal: job.controller.signal,
      progress: (event) => job.onProgress?.(event),
      drawn: async () => {}, // progress was drawn as it was called, on this thread
    });
  }

  // Latest-wins per lane: resolves with the result, or with null when a newer request replaced
  // it. onProgress(event) receives the progress a long request posts (a model download).
  request(lane, type, params, { onProgress } = {}) {
    let state = this.lanes.get(lane);
    if (!state) {
      state = { running: null, waiting: null };
      this.lanes.set(lane, state);
    }
    if (state.waiting) state.waiting.resolve(null);
    return new Promise((resolve, reject) => {
      state.waiting = { type, params, resolve, reject, onProgress };
      this.#drain(state);
    });
  }

  /** Aborts the request running in `lane` (it rejects with an AbortError); drops a waiting one. */
  cancel(lane) {
    const state = this.lanes.get(lane);
    if (!state) return;
    if (state.waiting) {
      state.waiting.resolve(null);
      state.waiting = null;
    }
    const job = state.running;
    if (!job) return;
    if (this.worker && job.id !== undefined) this.worker.postMessage({ cancel: job.id });
    job.controller?.abort();
  }

  async #drain(state) {
    if (state.running || !state.waiting) return;
    const job = state.waiting;
    state.waiting = null;
    state.running = job;
    try {
      job.resolve(await this.#send(job.type, job.params, job));
    } catch (error) {
      job.reject(error);
    } finally {
      state.running = null;
      this.#drain(state);
    }
  }
}

// An error as the worker described it: its class (AbortError included), message, code and
// parameter, and a failed load's reason and HTTP status.
function revive({ name, message, code, parameter, reason, status }) {
  if (name === 'AbortError') return new DOMException(message, 'AbortError');
  const Kind = { RangeError, TypeError }[name] ?? Error;
  const fields = { code, parameter, reason, status };
  const extra = Object.entries(fields).filter(([, v]) => v !== undefined);
  return Object.assign(new Kind(message), Object.fromEntries(extra));
}
