// The trainer's worker: a module Worker in browsers, a worker_threads Worker in Node, started by
// worker-host.js. It holds one TrainerSession and answers { id, method, args } with
// { id, result } or { id, error }; the session's events go out as { event, data }.

import { nodeBuiltin } from '../loader.js';
import { TrainerSession } from './session.js';

// Errors cross the thread boundary as plain data; worker-host.js rebuilds them as the same
// classes, with the same code and parameter (and index, for non-finite values).
function errorData(error) {
  return {
    name: error?.name ?? 'Error',
    message: String(error?.message ?? error),
    code: error?.code,
    parameter: error?.parameter,
    index: error?.index,
  };
}

async function connect() {
  if (typeof globalThis.WorkerGlobalScope !== 'undefined') {
    return {
      post: (message, transfer = []) => globalThis.postMessage(message, transfer),
      listen: (handler) => globalThis.addEventListener('message', (e) => handler(e.data)),
    };
  }
  const { parentPort } = await nodeBuiltin('worker_threads');
  return {
    post: (message, transfer = []) => parentPort.postMessage(message, transfer),
    listen: (handler) => parentPort.on('message', handler),
  };
}

const port = await connect();
let session = null;
const emit = (event, data, transfer) => port.post({ event, data }, transfer);

// What each method returns, and which of its buffers move to the page instead of being copied.
const METHODS = {
  async create(config) {
    session = await TrainerSession.create(config, emit);
    return [session.info()];
  },
  train: async (corpus, run) => [await session.train(corpus, run)],
  resume: async () => [await session.resume()],
  pause: async () => [(await session.pause(), session.state())],
  step: () => [session.step()],
  state: () => [session.state()],
  attention(input, temperature) {
    const result = session.attention(input, temperature);
    return [result, [result.attention.buffer]];
  },
  encode: (text) => [session.encode(text)],
  parameters() {
    const list = session.parameters();
    return [list, list.map((p) => p.data.buffer)];
  },
  setParameters: (tensors) => [session.setParameters(tensors)],
  save(temperature) {
    const files = session.save(temperature);
    return [files, Object.values(files).map((bytes) => bytes.buffer)];
  },
};

port.listen(async ({ id, method, args }) => {
  try {
    if (method !== 'create' && session === null) throw new Error('attnlens: no trainer yet');
    const [result, transfer] = await METHODS[method](...args);
    port.post({ id, result }, transfer);
  } catch (error) {
    port.post({ id, error: errorData(error) });
  }
});
