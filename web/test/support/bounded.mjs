// Runs a call in a worker thread that is stopped after `ms` milliseconds, so a test of a hostile
// input fails (instead of hanging the suite) when the input makes the code loop for ever, and
// a memory cap on the worker turns a blow-up into a failure too. Arguments cross as structured
// clones, results as JSON (typed arrays as { byteLength }); a thrown error comes back as
// { name, code, parameter, message }.

import { Worker } from 'node:worker_threads';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  const { url, name, args } = workerData;
  try {
    const result = await (await import(url))[name](...args);
    // Plain data only: functions dropped, typed arrays as their length.
    const value = JSON.parse(JSON.stringify(result ?? null, (key, v) =>
      ArrayBuffer.isView(v) ? { byteLength: v.byteLength } : v));
    parentPort.postMessage({ ok: true, value });
  } catch (error) {
    const { name, code, parameter, message } = error ?? {};
    parentPort.postMessage({ ok: false, error: { name, code, parameter, message } });
  }
})();
`;

/**
 * Calls `name(...args)` from the module at `url` in a worker; resolves { ok, value } or
 * { ok: false, error }, rejects when it runs past `ms` or past `memoryMB` of heap.
 */
export function callBounded(url, name, args, { ms = 10000, memoryMB = 512 } = {}) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { url: String(url), name, args },
      resourceLimits: { maxOldGenerationSizeMb: memoryMB },
    });
    const timer = setTimeout(() => {
      worker.terminate();
      reject(new Error(`${name} did not finish within ${ms} ms`));
    }, ms);
    worker.once('message', (message) => {
      clearTimeout(timer);
      worker.terminate();
      resolve(message);
    });
    worker.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
