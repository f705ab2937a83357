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

  #settle({ id, ok, result, error }) {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    if (ok) entry.resolve(result);
    else {
      const Kind = { RangeError, TypeError }[error.name] ?? Error;
      entry.reject(new Kind(error.message));
    }
  }

  async #send(type, params) {
    await this.ready;
    const id = this.nextId++;
    if (this.worker) {
      return new Promise((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        this.worker.postMessage({ id, type, params });
      });
    }
    const handlers = {
      view: this.local.computeView,
      benchmark: this.local.benchmark,
      capabilities: this.local.capabilities,
      spread: this.local.scoreSpread,
    };
    return handlers[type](params);
  }

  // Latest-wins per lane: resolves with the result, or with null when a newer request replaced it.
  request(lane, type, params) {
    let state = this.lanes.get(lane);
    if (!state) {
      state = { running: false, waiting: null };
      this.lanes.set(lane, state);
    }
    if (state.waiting) state.waiting.resolve(null);
    return new Promise((resolve, reject) => {
      state.waiting = { type, params, resolve, reject };
      this.#drain(state);
    });
  }

  async #drain(state) {
    if (state.running || !state.waiting) return;
    const job = state.waiting;
    state.waiting = null;
    state.running = true;
    try {
      job.resolve(await this.#send(job.type, job.params));
    } catch (error) {
      job.reject(error);
    } finally {
      state.running = false;
      this.#drain(state);
    }
  }
}
