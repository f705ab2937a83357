#!/usr/bin/env node
// Two builds of attnlens, one Node process: decoding steps of GPT-2 small's shape against the
// KV cache (model.generate(), a step timed from one onToken() to the next, as in
// bench/models/decode.mjs) on each, calls alternating (the side that goes first swaps from pair
// to pair), one thread. Per pair, each side's value is the median step of one generate() call.
// Prints the medians, the after/before ratio (median of the per-pair ratios) and its
// interquartile range; asserts nothing. See README.md.
//
//   node bench/compare/ab-decode.mjs --before OLD/web --after NEW/web
//     [--models bench/models/build] [--sizes 64,256] [--steps 8] [--pairs 7] [--backend wasm-simd]
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { textOfTokens } from '../models/forward-core.js';
import { comparePairs, formatRatio, loadAverage, median } from './stats.js';

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    after: { type: 'string' },
    models: {
      type: 'string',
      default: fileURLToPath(new URL('../models/build/', import.meta.url)),
    },
    sizes: { type: 'string', default: '64,256' },
    steps: { type: 'string', default: '8' },
    pairs: { type: 'string', default: '7' },
    backend: { type: 'string', default: 'wasm-simd' },
  },
});
if (!values.before || !values.after) {
  console.error('usage: ab-decode.mjs --before OLD/web --after NEW/web [options]');
  process.exit(2);
}
const sizes = values.sizes.split(',').map(Number);
const steps = Number(values.steps);
const pairs = Number(values.pairs);

async function openSide(web) {
  const root = pathToFileURL(`${resolve(web)}/`);
  const { createAttention } = await import(new URL('src/index.js', root).href);
  const { loadModel } = await import(new URL('src/models/index.js', root).href);
  const attention = await createAttention({ backend: values.backend, threads: 1, models: true });
  const model = await loadModel(resolve(values.models, 'gpt2-small'), { attention });
  return { web, attention, model };
}

/** The median step of one greedy generate() call after `prompt`, and the ids it produced. */
async function decode(model, prompt) {
  const stamps = [];
  const generated = await model.generate(prompt, {
    maxTokens: steps + 1,
    onToken: () => stamps.push(performance.now()),
  });
  return [median(stamps.slice(1).map((t, i) => t - stamps[i])), generated.ids];
}

const sides = [await openSide(values.before), await openSide(values.after)];
console.log(
  `Node ${process.version}, one thread, ${values.backend}; before ${sides[0].web}, after ` +
    `${sides[1].web}; ${steps} steps a call; load average ${await loadAverage()}`,
);
for (const n of sizes) {
  const prompt = textOfTokens(n - steps - 1);
  const load = await loadAverage();
  const [[, idsBefore], [, idsAfter]] = [
    await decode(sides[0].model, prompt),
    await decode(sides[1].model, prompt),
  ];
  const same = idsBefore.join() === idsAfter.join();
  const ms = [[], []];
  for (let pair = 0; pair < pairs; pair++) {
    for (const side of pair % 2 === 0 ? [0, 1] : [1, 0]) {
      ms[side].push((await decode(sides[side].model, prompt))[0]);
    }
  }
  const row = comparePairs(ms[0], ms[1]);
  console.log(
    `GPT-2 small shape, step at past ~${n}: before ${row.before.toFixed(2)} ms  after ` +
      `${row.after.toFixed(2)} ms  after/before ${formatRatio(row)}  (medians of ${pairs} ` +
      `pairs; best ${row.bestBefore.toFixed(2)} / ${row.bestAfter.toFixed(2)} ms; tokens ` +
      `${same ? 'identical' : 'differ'}; load ${load} -> ${await loadAverage()})`,
  );
}
for (const side of sides) {
  side.model.dispose();
  side.attention.dispose();
}
