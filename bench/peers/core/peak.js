// The machine's WebAssembly SIMD128 peak, measured the way bench/peak.cpp on the kernel branch
// does it: ten independent `acc = acc * m + c` chains on f32x4 registers that never touch memory.
// Ten chains hide the 4-cycle latency of mul and add on the two FP ports, so the loop runs at the
// engine's throughput for separate f32x4.mul and f32x4.add (80 flops per iteration).
//
// The module is assembled here byte by byte, so the probe needs no compiler and runs the same in
// Node and in a page. Every result of the benchmark is reported as a fraction of this peak.

const CHAINS = 10;
export const FLOPS_PER_ITERATION = CHAINS * 4 * 2;

const V128 = 0x7b;
const F32 = 0x7d;
const I32 = 0x7f;
const op = {
  localGet: (i) => [0x20, i],
  localSet: (i) => [0x21, i],
  localTee: (i) => [0x22, i],
  f32x4Splat: [0xfd, 0x13],
  f32x4Add: [0xfd, 0xe4, 0x01],
  f32x4Mul: [0xfd, 0xe6, 0x01],
  f32x4RelaxedMadd: [0xfd, 0x85, 0x02], // relaxed SIMD's fused multiply-add (opcode 0x105)
  f32x4ExtractLane0: [0xfd, 0x1f, 0x00],
  i32Const1: [0x41, 0x01],
  i32Sub: [0x6b],
  loop: [0x03, 0x40],
  brIf0: [0x0d, 0x00],
  end: [0x0b],
};

// Section: id, byte length (LEB128; every section here is < 128 bytes except code), contents.
function leb128(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}
const section = (id, bytes) => [id, ...leb128(bytes.length), ...bytes];

/**
 * The bytes of a module exporting chains(iterations: i32, m: f32, c: f32) -> f32; `fused`: each
 * chain step one f32x4.relaxed_madd instead of a mul and an add (the same flops, the FMA peak;
 * engines without relaxed SIMD reject the module).
 */
export function peakModuleBytes({ fused = false } = {}) {
  // Locals: 0 iterations, 1 m, 2 c (parameters); 3 splat(m), 4 splat(c), 5..14 the accumulators.
  const vm = 3;
  const vc = 4;
  const acc = (i) => 5 + i;
  const body = [
    ...op.localGet(1),
    ...op.f32x4Splat,
    ...op.localSet(vm),
    ...op.localGet(2),
    ...op.f32x4Splat,
    ...op.localSet(vc),
  ];
  for (let i = 0; i < CHAINS; i++) body.push(...op.localGet(vc), ...op.localSet(acc(i)));
  body.push(...op.loop);
  for (let i = 0; i < CHAINS; i++) {
    body.push(
      ...op.localGet(acc(i)),
      ...op.localGet(vm),
      ...(fused
        ? [...op.localGet(vc), ...op.f32x4RelaxedMadd]
        : [...op.f32x4Mul, ...op.localGet(vc), ...op.f32x4Add]),
      ...op.localSet(acc(i)),
    );
  }
  body.push(
    ...op.localGet(0),
    ...op.i32Const1,
    ...op.i32Sub,
    ...op.localTee(0),
    ...op.brIf0,
    ...op.end,
  );
  body.push(...op.localGet(acc(0)));
  for (let i = 1; i < CHAINS; i++) body.push(...op.localGet(acc(i)), ...op.f32x4Add);
  body.push(...op.f32x4ExtractLane0, ...op.end);
  const locals = [1, 2 + CHAINS, V128]; // one group of 12 v128 locals
  const func = [...locals, ...body];
  const name = [...'chains'].map((c) => c.charCodeAt(0));
  // prettier-ignore
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 3, I32, F32, F32, 1, F32]),
    ...section(3, [1, 0]),
    ...section(7, [1, name.length, ...name, 0x00, 0]),
    ...section(10, [1, ...leb128(func.length), ...func]),
  ]);
}

/**
 * Runs the probe for about `totalMs` and returns GFLOP/s: `best` is the peak figure, `median`
 * shows how much the machine's load moved it.
 * @returns {Promise<{ best: number, median: number, calls: number } | { unavailable: string }>}
 */
export async function measurePeak({ totalMs = 1500 } = {}) {
  const bytes = peakModuleBytes();
  if (!WebAssembly.validate(bytes))
    return { unavailable: 'this engine has no WebAssembly SIMD128' };
  const { instance } = await WebAssembly.instantiate(bytes);
  const chains = instance.exports.chains;
  // m < 1 and c small keep the accumulators finite and normal (no denormal slow paths).
  let iterations = 1 << 16;
  for (;;) {
    // grow the call until it takes >= 20 ms, so timer resolution does not matter
    const started = performance.now();
    chains(iterations, 0.5, 0.25);
    if (performance.now() - started >= 20 || iterations >= 1 << 28) break;
    iterations *= 2;
  }
  const rates = [];
  const start = performance.now();
  while (rates.length < 5 || performance.now() - start < totalMs) {
    const started = performance.now();
    chains(iterations, 0.5, 0.25);
    rates.push((iterations * FLOPS_PER_ITERATION) / ((performance.now() - started) * 1e6));
  }
  rates.sort((a, b) => a - b);
  return { best: rates[rates.length - 1], median: rates[rates.length >> 1], calls: rates.length };
}

/**
 * A short probe to run between timed calls: returns a function that runs the same chains for
 * about `ms` milliseconds and returns the GFLOP/s it reached. On this shared machine the host
 * takes part of the core for seconds at a time (the register-only rate then drops 15-40%, and
 * code that needs the caches slows even more), so timing.js keeps only the calls made while the
 * probes on both sides of them ran at full speed. Null without SIMD128.
 *
 * With `threads: 2` the chains run on the calling thread and on a worker thread at once, and the
 * probe returns the slower thread's rate: whether two cores were really there. The two virtual
 * CPUs of this machine are at times placed on the two hyperthreads of one physical core (or share
 * it with another guest); both loops then run at half speed, and so would a library's two threads.
 * Needs SharedArrayBuffer (a cross-origin isolated page, or Node); `probe.close()` ends the worker.
 * @param {{ threads?: 1 | 2 }} [options]
 * @returns {Promise<(((ms: number) => number) & { close: () => void }) | null>}
 */
export async function openSpeedProbe({ threads = 1 } = {}) {
  if (threads !== 1 && threads !== 2) {
    throw new RangeError(`threads: the speed probe runs on 1 or 2, got ${threads}`);
  }
  const bytes = peakModuleBytes();
  if (!WebAssembly.validate(bytes)) return null;
  const { instance } = await WebAssembly.instantiate(bytes);
  const chains = instance.exports.chains;
  const second = threads > 1 ? await startProbeWorker(bytes) : null;
  let perMs = 0; // iterations per millisecond, from the previous probe
  const probe = (ms) => {
    const iterations = perMs > 0 ? Math.max(1000, Math.round(perMs * ms)) : 20000;
    second?.start(iterations);
    const started = performance.now();
    chains(iterations, 0.5, 0.25);
    const elapsed = Math.max(performance.now() - started, 1e-3);
    perMs = Math.max(perMs, iterations / elapsed);
    const slowest = Math.max(elapsed, second ? second.finish() : 0);
    return (iterations * FLOPS_PER_ITERATION) / (slowest * 1e6);
  };
  probe.close = () => second?.close();
  for (let i = 0; i < 20; i++) probe(2); // lets the engine tier the probe up and calibrates it
  return probe;
}

const isNode = () => typeof process !== 'undefined' && Boolean(process.versions?.node);

// The worker side is probe-worker.js. Rounds are started and awaited through shared memory, so
// the probe stays synchronous: a page's main thread may not Atomics.wait, so it spins on `done`.
async function startProbeWorker(bytes) {
  if (typeof SharedArrayBuffer === 'undefined') {
    throw new Error(
      'the two-thread speed probe needs SharedArrayBuffer (a cross-origin isolated page)',
    );
  }
  const shared = new SharedArrayBuffer(24);
  const control = new Int32Array(shared, 0, 3); // [round, iterations, done round]
  const elapsed = new Float64Array(shared, 16, 1);
  const url = new URL('./probe-worker.js', import.meta.url);
  let worker, ready;
  // Not `typeof Worker`: Emscripten's threaded glue (onnxruntime-web's) sets a global Worker in Node.
  if (!isNode()) {
    worker = new Worker(url, { type: 'module' });
    ready = new Promise((resolve, reject) => {
      worker.onmessage = () => resolve();
      worker.onerror = (event) =>
        reject(new Error(`speed probe worker: ${event.message ?? 'did not start'}`));
    });
  } else {
    const { Worker: NodeWorker } = await import('node:worker_threads');
    worker = new NodeWorker(url);
    worker.unref(); // never keeps the process alive
    ready = new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  }
  worker.postMessage({ bytes, shared });
  await ready;
  return {
    start(iterations) {
      Atomics.store(control, 1, iterations);
      Atomics.add(control, 0, 1);
      Atomics.notify(control, 0);
    },
    /** The worker's elapsed milliseconds for the round started last (waits for it). */
    finish() {
      const round = Atomics.load(control, 0);
      const deadline = performance.now() + 5000;
      while (Atomics.load(control, 2) !== round) {
        // spins about the worker's wake-up time
        if (performance.now() > deadline) throw new Error('speed probe worker stopped answering');
      }
      return Math.max(elapsed[0], 1e-3);
    },
    close() {
      Atomics.store(control, 0, -1);
      Atomics.notify(control, 0);
      worker.terminate();
    },
  };
}
