// The second thread of peak.js's two-thread speed probe, as a Web Worker or a Node worker
// thread. It instantiates the probe module it is sent, then waits on the shared control words
// for each round: run `chains` for the asked iterations, write its own elapsed time, signal done.
// Control words (Int32Array over a SharedArrayBuffer), see peak.js: [round, iterations, done];
// elapsed milliseconds go in a Float64Array over the same buffer, from byte 16.

const nodeParent =
  typeof process !== 'undefined' && process.versions?.node
    ? (await import('node:worker_threads')).parentPort
    : null;

function onMessage(handler) {
  if (nodeParent) nodeParent.on('message', handler);
  else self.onmessage = (event) => handler(event.data);
}
const post = (message) =>
  nodeParent ? nodeParent.postMessage(message) : self.postMessage(message);

onMessage(async ({ bytes, shared }) => {
  const { instance } = await WebAssembly.instantiate(bytes);
  const chains = instance.exports.chains;
  const control = new Int32Array(shared, 0, 3);
  const elapsed = new Float64Array(shared, 16, 1);
  for (let i = 0; i < 20; i++) chains(20000, 0.5, 0.25); // tiers the probe up, as on the main thread
  post('ready');
  let round = 0;
  for (;;) {
    Atomics.wait(control, 0, round);
    round = Atomics.load(control, 0);
    if (round < 0) return; // closed
    const iterations = Atomics.load(control, 1);
    const started = performance.now();
    chains(iterations, 0.5, 0.25);
    elapsed[0] = performance.now() - started;
    Atomics.store(control, 2, round);
  }
});
