#!/usr/bin/env node
// The peers benchmark: attnlens against onnxruntime-web, TensorFlow.js (wasm) and plain
// JavaScript on identical seeded inputs, in Node (one process per case) and in headless
// Chromium (one fresh page per case). Every library's output is checked against a float64
// reference before it is timed. Numbers are printed and saved, never asserted.
//
//   node bench/peers/run.mjs [--where node,chromium] [--sizes 128,512,2048,8192]
//     [--masks none,causal,window128] [--threads 1,2] [--runners attnlens-simd,ort-mha,...]
//     [--rounds N] [--max-case-seconds S] [--quick] [--out DIR]
//
// Run it through scripts/bench.sh, which installs the peers and builds the ONNX graphs first.
// Results go to DIR/<where>.json (default bench/peers/results/); report/write-docs.mjs turns
// them into docs/benchmarks.md.

import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describeMachine } from './core/machine.mjs';
import { measurePeak } from './core/peak.js';
import { median } from './core/timing.js';
import { RUNNERS } from './libraries/index.js';
import { MASKS, SIZES, denseFlops } from './core/workload.js';

const { values } = parseArgs({
  options: {
    where: { type: 'string', default: 'node,chromium' },
    sizes: { type: 'string', default: SIZES.join(',') },
    masks: { type: 'string', default: MASKS.join(',') },
    threads: { type: 'string', default: '1,2' },
    runners: { type: 'string', default: Object.keys(RUNNERS).join(',') },
    rounds: { type: 'string', default: '1' },
    'max-case-seconds': { type: 'string', default: '150' },
    quick: { type: 'boolean', default: false },
    out: { type: 'string', default: fileURLToPath(new URL('./results/', import.meta.url)) },
  },
});

const list = (text) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
const options = {
  where: list(values.where),
  sizes: list(values.sizes).map(Number),
  masks: list(values.masks),
  threads: list(values.threads).map(Number),
  runners: list(values.runners),
  rounds: Number(values.rounds),
  maxCaseSeconds: Number(values['max-case-seconds']),
  quick: values.quick,
};
for (const runner of options.runners) {
  if (!RUNNERS[runner])
    throw new Error(`--runners: unknown '${runner}' (known: ${Object.keys(RUNNERS).join(', ')})`);
}
for (const mask of options.masks)
  if (!MASKS.includes(mask)) throw new Error(`--masks: unknown '${mask}'`);

/**
 * Cases in the order they run: sizes ascending (so a larger size can be skipped from the time a
 * smaller one took), and within one size and mask every runner in turn, so a burst of load from
 * other processes lands on several libraries instead of all the runs of one.
 */
function plan() {
  const cases = [];
  for (const n of [...options.sizes].sort((a, b) => a - b)) {
    for (const mask of options.masks) {
      for (const threads of options.threads) {
        for (const runner of options.runners) {
          if (RUNNERS[runner].masks.includes(mask))
            cases.push({ runner, n, mask, threads, quick: options.quick });
        }
      }
    }
  }
  return cases;
}

const key = ({ runner, mask, threads }) => `${runner}|${mask}|${threads}`;
const seconds = (ms) => (ms / 1000).toFixed(1);

/**
 * Why a case is not worth starting, from what smaller sizes of the same runner, mask and threads
 * did: unavailable there, failed there, or one call there scaled by N^2 would exceed the budget
 * (a correctness call plus at least three timed calls).
 */
function reasonToSkip(spec, earlier) {
  const previous = earlier.get(key(spec));
  if (!previous) return null;
  if (previous.status === 'unavailable') return { status: 'unavailable', reason: previous.reason };
  if (previous.status === 'failed' || previous.status === 'skipped') {
    return {
      status: 'skipped',
      reason: `not run: N=${previous.n} already ${previous.status} (${previous.error ?? previous.reason})`,
    };
  }
  if (previous.status === 'wrong')
    return { status: 'skipped', reason: `not run: wrong output at N=${previous.n}` };
  const estimatedMs = previous.ms * (denseFlops(spec.n) / denseFlops(previous.n));
  if (4 * estimatedMs > options.maxCaseSeconds * 1000) {
    return {
      status: 'skipped',
      reason:
        `not run: one call would take about ${seconds(estimatedMs)} s (from ${previous.ms.toFixed(0)} ms at N=${previous.n}), ` +
        `over the ${options.maxCaseSeconds} s budget of a case`,
    };
  }
  return null;
}

function runInNode(spec) {
  return new Promise((resolve) => {
    const nodeFlags = RUNNERS[spec.runner].nodeFlags ?? [];
    const child = spawn(
      process.execPath,
      [
        ...nodeFlags,
        fileURLToPath(new URL('./node-case.mjs', import.meta.url)),
        JSON.stringify(spec),
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 4 * options.maxCaseSeconds * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const last = stdout.trim().split('\n').pop();
      try {
        resolve(JSON.parse(last));
      } catch {
        const why = signal ? `killed by ${signal}` : `exit code ${code}`;
        resolve({
          ...spec,
          status: 'failed',
          error: `process ${why}: ${stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 400)}`,
        });
      }
    });
  });
}

function summary(r) {
  const head = `${r.runner.padEnd(24)} N=${String(r.n).padEnd(5)} ${r.mask.padEnd(9)} ${r.threads}t`;
  if (r.status !== 'ok')
    return `${head}  ${r.status}: ${r.reason ?? r.error ?? r.check?.worst ?? ''}`;
  return (
    `${head}  ${r.ms.toFixed(2).padStart(10)} ms ${r.gflops.toFixed(2).padStart(7)} GFLOP/s` +
    `  err ${r.check.maxAbsError.toExponential(1)}${r.cpuPerWall ? `  cpu/wall ${r.cpuPerWall.toFixed(2)}` : ''}` +
    `  full-speed calls ${r.counted ?? '?'}/${(r.allRuns ?? r.runs).length} (all: ${(r.allMedianMs ?? r.ms).toFixed(2)} ms)`
  );
}

/** Round results of one case merged: the median of every counted call (timing.js) of every round. */
function merge(rounds) {
  const ok = rounds.filter((r) => r.status === 'ok');
  if (ok.length === 0) return rounds[0];
  const runs = ok.flatMap((r) => r.runs).sort((a, b) => a - b);
  const mid = runs.length >> 1;
  const ms = runs.length % 2 ? runs[mid] : (runs[mid - 1] + runs[mid]) / 2;
  const allRuns = ok.flatMap((r) => r.allRuns ?? r.runs);
  return {
    ...ok[0],
    runs,
    ms,
    minMs: runs[0],
    gflops: denseFlops(ok[0].n) / (ms * 1e6),
    roundMedians: ok.map((r) => r.ms),
    allRuns,
    allMedianMs: median(allRuns),
    counted: ok.reduce((sum, r) => sum + (r.counted ?? r.runs.length), 0),
  };
}

async function runWhere(where) {
  const chromium =
    where === 'chromium' ? await (await import('./browser/driver.mjs')).openChromium() : null;
  const execute = chromium
    ? (spec) =>
        chromium.runCase(spec, { log: console.log, timeoutMs: 4 * options.maxCaseSeconds * 1000 })
    : runInNode;
  try {
    const machine = {
      ...describeMachine(),
      where,
      chromium: chromium?.version,
      loadBefore: describeMachine().load,
    };
    console.log(
      `\n== ${where}${chromium ? ` (Chromium ${chromium.version})` : ''}: wasm SIMD128 register-only peak`,
    );
    const peak = chromium ? await chromium.measurePeak() : await measurePeak();
    console.log(`peak ${peak.best?.toFixed(2)} GFLOP/s (median ${peak.median?.toFixed(2)})`);

    const cases = plan();
    let fullRate = peak.best ?? 0;
    const byCase = new Map();
    for (let round = 1; round <= options.rounds; round++) {
      const earlier = new Map(); // this round's latest result per runner|mask|threads
      console.log(`\n== ${where}: round ${round} of ${options.rounds}, ${cases.length} cases`);
      for (const spec of cases) {
        const caseKey = `${key(spec)}|${spec.n}`;
        const skip = reasonToSkip(spec, earlier);
        const result = skip
          ? { ...spec, library: RUNNERS[spec.runner].library, ...skip }
          : // Cases compare their probes with the best one-thread rate seen so far in this run (its
            // peak measurement and every earlier one-thread case's probes): a case that ran wholly
            // while the host held part of the core has no fast probe of its own. Two-thread cases
            // probe both threads at once and take the slower, so the same one-thread rate applies.
            await execute({ ...spec, fullRate });
        if (result.status === 'ok' && spec.threads === 1 && result.probes?.length) {
          fullRate = Math.max(fullRate, ...result.probes);
        }
        result.load = describeMachine().load;
        console.log(summary(result));
        earlier.set(key(spec), result);
        byCase.set(caseKey, [...(byCase.get(caseKey) ?? []), result]);
      }
    }
    const results = [...byCase.values()].map(merge);
    return { machine: { ...machine, loadAfter: describeMachine().load }, peak, options, results };
  } finally {
    await chromium?.close();
  }
}

mkdirSync(values.out, { recursive: true });
for (const where of options.where) {
  const report = await runWhere(where);
  const file = `${values.out.replace(/\/$/, '')}/${where}.json`;
  writeFileSync(file, `${JSON.stringify(report, null, 1)}\n`);
  console.log(`\nwrote ${file}`);
}
