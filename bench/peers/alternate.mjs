#!/usr/bin/env node
// attnlens against its peers in ONE Node process, one thread, calls alternating round after
// round (the order rotating each round), so every runner meets the same load: on a shared machine
// the ratio of calls made back to back holds where separate processes (run.mjs) do not. Each
// runner's first output is checked against the float64 reference (core/reference.js) before
// anything is timed. Prints, per size, each runner's median wall and CPU time per call and the
// median over rounds of attnlens' speed-up over each peer (time of the peer / time of attnlens in
// the same round) with its interquartile range; asserts nothing.
//
//   node --experimental-wasm-relaxed-simd bench/peers/alternate.mjs \
//     [--sizes 512,2048] [--mask none] [--rounds 15] \
//     [--runners attnlens-relaxed,ort-attention,ort-mha,ort-matmul,tfjs-per-head]
//
// The first runner is the one compared with the others. CPU time is the process's (user +
// system): a call's wall time also counts the moments other processes held the core. Each round
// also runs the register-only peak loop (core/peak.js: relaxed_madd chains where the engine has
// relaxed SIMD, else mul + add) for about as long as the first runner's call, so every runner's
// rate prints as a share of the peak measured the same way (CPU time) in the same run.
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { RUNNERS } from './libraries/index.js';
import { FLOPS_PER_ITERATION, peakModuleBytes } from './core/peak.js';
import { checkOutput } from './core/reference.js';
import { median } from './core/timing.js';
import { denseFlops, makeInputs } from './core/workload.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '512,2048' },
    mask: { type: 'string', default: 'none' },
    rounds: { type: 'string', default: '15' },
    runners: {
      type: 'string',
      default: 'attnlens-relaxed,ort-attention,ort-mha,ort-matmul,tfjs-per-head',
    },
  },
});
const MODELS = new URL('./models/build/', import.meta.url);
const platform = {
  name: `Node ${process.versions.node}`,
  sharedMemory: true,
  loadModel: async (name) => new Uint8Array(await readFile(new URL(`${name}.onnx`, MODELS))),
  memory: () => ({ rss: process.memoryUsage().rss }),
};
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const quartiles = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (f) => s[Math.min(s.length - 1, Math.floor(f * (s.length - 1) + 0.5))];
  return [at(0.25), at(0.75)];
};

// The peak loop, tiered up and sized to ~`ms` per call; returns a call's GFLOP/s by CPU time.
async function openPeak() {
  const fused = WebAssembly.validate(peakModuleBytes({ fused: true }));
  const { instance } = await WebAssembly.instantiate(peakModuleBytes({ fused }));
  const { chains } = instance.exports;
  let iterations = 1 << 16;
  const warmUntil = performance.now() + 500;
  while (performance.now() < warmUntil) chains(iterations, 0.5, 0.25);
  return {
    name: fused ? 'relaxed_madd (FMA)' : 'mul+add',
    size(ms) {
      for (;;) {
        const started = performance.now();
        chains(iterations, 0.5, 0.25);
        const took = performance.now() - started;
        if (took >= ms || iterations >= 1 << 28) break;
        iterations *= 2;
      }
    },
    run() {
      const c0 = cpuMs();
      chains(iterations, 0.5, 0.25);
      return (iterations * FLOPS_PER_ITERATION) / ((cpuMs() - c0) * 1e6);
    },
  };
}
const peak = await openPeak();

const names = values.runners.split(',');
const rounds = Number(values.rounds);
console.log(
  `${platform.name}, one thread, mask ${values.mask}, ${rounds} rounds; load average ${load()}`,
);
for (const n of values.sizes.split(',').map(Number)) {
  const inputs = makeInputs(n);
  const runners = [];
  for (const name of names) {
    const entry = RUNNERS[name];
    if (!entry) throw new Error(`unknown runner '${name}'`);
    const adapter = await entry.load();
    const library = await adapter.open({ ...entry.options, threads: 1, platform });
    if (library.unavailable) {
      console.log(`${name}: unavailable (${library.unavailable})`);
      continue;
    }
    const prepared = await library.prepare(inputs, values.mask);
    const check = checkOutput(prepared.headMajor(await prepared.call()), inputs, values.mask);
    if (!check.passed) {
      console.log(`${name}: wrong output, not timed (${JSON.stringify(check)})`);
      continue;
    }
    for (let i = 0; i < 2; i++) await prepared.call(); // warm-up: the optimising tiers
    runners.push({ name, prepared, wall: [], cpu: [] });
  }
  const firstCpu = [];
  for (let i = 0; i < 3; i++) {
    const c0 = cpuMs();
    await runners[0].prepared.call();
    firstCpu.push(cpuMs() - c0);
  }
  peak.size(Math.max(10, median(firstCpu)));
  const peakRates = [];
  for (let round = 0; round < rounds; round++) {
    peakRates.push(peak.run());
    for (let i = 0; i < runners.length; i++) {
      const r = runners[(i + round) % runners.length];
      const [w0, c0] = [performance.now(), cpuMs()];
      await r.prepared.call();
      r.wall.push(performance.now() - w0);
      r.cpu.push(cpuMs() - c0);
    }
  }
  const peakRate = median(peakRates);
  const [peakLo, peakHi] = quartiles(peakRates);
  console.log(`\nN=${n}, H=8, D=64, load average at the end ${load()}`);
  console.log(
    `register-only ${peak.name} peak by CPU time: median ${peakRate.toFixed(1)} GFLOP/s ` +
      `(IQR ${peakLo.toFixed(1)}-${peakHi.toFixed(1)}, best ${Math.max(...peakRates).toFixed(1)})`,
  );
  console.log(
    '| runner | median ms (wall) | GFLOP/s | median ms (CPU) | GFLOP/s by CPU time, % of the ' +
      "peak's median | first runner's speed-up, wall: median (IQR) | by CPU time: median (IQR) |",
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  const [first] = runners;
  for (const r of runners) {
    const wall = median(r.wall);
    const cells = [r.name, wall.toFixed(2), (denseFlops(n) / (wall * 1e6)).toFixed(1)];
    const cpu = median(r.cpu);
    const cpuRate = denseFlops(n) / (cpu * 1e6);
    cells.push(
      cpu.toFixed(2),
      `${cpuRate.toFixed(1)}, ${((100 * cpuRate) / peakRate).toFixed(0)}%`,
    );
    for (const key of ['wall', 'cpu']) {
      const ratios = r[key].map((t, i) => t / first[key][i]);
      const [lo, hi] = quartiles(ratios);
      cells.push(
        r === first ? '' : `${median(ratios).toFixed(2)}x (${lo.toFixed(2)}-${hi.toFixed(2)})`,
      );
    }
    console.log(`| ${cells.join(' | ')} |`);
  }
  for (const r of runners) r.prepared.dispose?.();
}
process.exit(0); // thread pools (onnxruntime's workers) would keep the process alive
