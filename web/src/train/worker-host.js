// Starting the trainer's worker and talking to it: calls are { id, method, args } answered by
// { id, result } or { id, error }, events arrive as { event, data }. In browsers (and other
// engines with a global Worker) a module Worker; in Node a worker_threads Worker, which is
// ref'd only while a call is pending, so an idle trainer never keeps a process alive.

import { disposedError } from '../errors.js';
import { nodeBuiltin } from '../loader.js';

const CLASSES = { TypeError, RangeError };

function rebuild({ name, message, code, parameter, index }) {
  const ErrorClass = CLASSES[name] ?? Error;
  const error = new ErrorClass(message);
  if (code !== undefined) Object.assign(error, { code, parameter });
  if (index !== undefined) error.index = index;
  return error;
}

async function spawn() {
  if (typeof globalThis.Worker === 'function') {
    // Written out in full so that bundlers (Vite, webpack 5) see and copy the worker.
    const worker = new Worker(new URL('./trainer-worker.js', import.meta.url), { type: 'module' });
    return {
      post: (message, transfer) => worker.postMessage(message, transfer),
      onMessage: (handler) => worker.addEventListener('message', (e) => handler(e.data)),
      onFailure: (handler) =>
        worker.addEventListener('error', (e) => {
          e.preventDefault?.();
          handler(new Error(`attnlens: the trainer's worker failed: ${e.message ?? 'load error'}`));
        }),
      hold: () => {},
      release: () => {},
      terminate: () => worker.terminate(),
    };
  }
  const { Worker: NodeWorker } = await nodeBuiltin('worker_threads');
  const worker = new NodeWorker(new URL('./trainer-worker.js', import.meta.url));
  return {
    post: (message, transfer) => worker.postMessage(message, transfer),
    onMessage: (handler) => worker.on('message', handler),
    onFailure: (handler) => {
      worker.on('error', handler);
      worker.on('exit', (code) =>
        handler(new Error(`attnlens: the trainer's worker exited (${code})`)),
      );
    },
    hold: () => worker.ref(),
    release: () => worker.unref(),
    terminate: () => worker.terminate(),
  };
}

export class WorkerHost {
  #worker;
  #pending = new Map();
  #next = 1;
  #onEvent;
  #failure = null;
  #disposed = false;

  static async start(onEvent) {
    return new WorkerHost(await spawn(), onEvent);
  }

  constructor(worker, onEvent) {
    this.#worker = worker;
    this.#onEvent = onEvent;
    worker.release();
    worker.onMessage((message) => {
      if (message.event) {
        // A step event already queued when the trainer was disposed reaches no one.
        if (!this.#disposed) this.#onEvent(message.event, message.data);
        return;
      }
      const call = this.#pending.get(message.id);
      if (!call) return;
      this.#settle(message.id);
      if (message.error) call.reject(rebuild(message.error));
      else call.resolve(message.result);
    });
    worker.onFailure((error) => {
      if (this.#disposed) return;
      this.#failure = error;
      for (const id of [...this.#pending.keys()]) this.#pending.get(id) && this.#fail(id, error);
    });
  }

  /** Calls `method` in the worker; resolves to its result. */
  call(method, args = [], transfer = []) {
    if (this.#disposed) return Promise.reject(disposedError(method, 'this trainer was disposed'));
    if (this.#failure) return Promise.reject(this.#failure);
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      if (this.#pending.size === 0) this.#worker.hold();
      this.#pending.set(id, { resolve, reject, method });
      this.#worker.post({ id, method, args }, transfer);
    });
  }

  #settle(id) {
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#worker.release();
  }

  #fail(id, error) {
    const call = this.#pending.get(id);
    this.#settle(id);
    call.reject(error);
  }

  /** Ends the worker; calls still pending reject with the 'disposed' error. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const [id, { method }] of [...this.#pending]) {
      this.#fail(id, disposedError(method, 'this trainer was disposed'));
    }
    this.#worker.terminate();
  }
}
