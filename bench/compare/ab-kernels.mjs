#!/usr/bin/env node
// Two builds of the kernel benchmark (attnlens_bench, native or wasm), run in turn, several
// rounds, the one that goes first swapping each round. For every line both print, its median
// and its best time: the median over rounds of each side's, and the after/before ratio (the
// median of the per-round ratios) with its interquartile range. Asserts nothing.
//
//   node bench/compare/ab-kernels.mjs --before OLD/attnlens_bench --after NEW/attnlens_bench
//     [--rounds 5] [--full] [--filter SUBSTRING]
//
// A binary whose name ends in .js (an Emscripten build) runs under this Node, with its flags (for a
// relaxed-SIMD build: node --experimental-wasm-relaxed-simd ab-kernels.mjs ...). Without --full
// each run is `--quick` (the same sizes, fewer calls). See README.md.
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { comparePairs, formatRatio, loadAverage } from './stats.js';

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    after: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    full: { type: 'boolean', default: false },
    filter: { type: 'string' },
  },
});
if (!values.before || !values.after) {
  console.error('usage: ab-kernels.mjs --before OLD/attnlens_bench --after NEW/attnlens_bench');
  process.exit(2);
}

// "attention   H=8 D=64 N=512 none stream    19.813   19.620 ms   27.10 ..." and the peak line.
const TIMED_LINE = /^(\S+)\s+(.+?)\s+([\d.]+)\s+([\d.]+) ms\b/;
const PEAK_LINE = /^peak\s+(.+?)\s+([\d.]+) GFLOP\/s/;

/** One run of `binary`: Map of "group name" to { median, best } (ms; the peak in GFLOP/s). */
function runOnce(binary) {
  const args = [
    ...(values.full ? [] : ['--quick']),
    ...(values.filter ? ['--filter', values.filter] : []),
  ];
  const [command, argv] = binary.endsWith('.js')
    ? [process.execPath, [...process.execArgv, binary, ...args]]
    : [binary, args];
  const output = execFileSync(command, argv, { encoding: 'utf8', maxBuffer: 1 << 26 });
  const lines = new Map();
  for (const line of output.split('\n')) {
    const peak = line.match(PEAK_LINE);
    if (peak) {
      lines.set(`peak ${peak[1]} (GFLOP/s)`, { median: Number(peak[2]), best: Number(peak[2]) });
      continue;
    }
    const timed = line.match(TIMED_LINE);
    if (timed)
      lines.set(`${timed[1]} ${timed[2]}`, { median: Number(timed[3]), best: Number(timed[4]) });
  }
  return lines;
}

const rounds = Number(values.rounds);
const binaries = [values.before, values.after];
const runs = [[], []];
const loads = [await loadAverage()];
console.log(
  `kernel benchmark, ${values.full ? 'full' : '--quick'} runs, ${rounds} rounds; before ` +
    `${values.before}, after ${values.after}; load average ${loads[0]}`,
);
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? [0, 1] : [1, 0];
  for (const side of order) runs[side].push(runOnce(binaries[side]));
  loads.push(await loadAverage());
  console.error(`round ${round + 1}/${rounds} done, load average ${loads.at(-1)}`);
}

console.log(
  '\n| line | before, median | after, median | after/before of medians (IQR over rounds) ' +
    '| before, best | after, best | after/before of bests (IQR over rounds) |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const key of runs[0][0].keys()) {
  const present = (run) => run.has(key);
  if (!runs[0].every(present) || !runs[1].every(present)) continue;
  const [before, after] = runs.map((side) => side.map((run) => run.get(key).median));
  const [bestBefore, bestAfter] = runs.map((side) => side.map((run) => run.get(key).best));
  const medians = comparePairs(before, after);
  const bests = comparePairs(bestBefore, bestAfter);
  // The peak is a rate (GFLOP/s): its best is the highest. Its ratio is still after / before.
  const best = key.startsWith('peak ') ? Math.max : Math.min;
  console.log(
    `| ${key} | ${medians.before.toFixed(3)} | ${medians.after.toFixed(3)} | ` +
      `${formatRatio(medians)} | ${best(...bestBefore).toFixed(3)} | ` +
      `${best(...bestAfter).toFixed(3)} | ${formatRatio(bests)} |`,
  );
}
console.log(`\nload average, start and after each round: ${loads.join(' | ')}`);
