#!/usr/bin/env node
// Two builds of attnlens, the same models, one Node process: model.run() of the same model and
// text (ViT-base: picture) on each, calls alternating (before, after, then after, before, ...), one thread. Prints
// the medians, the after/before ratio (median of the per-pair ratios) and its interquartile
// range; asserts nothing. See README.md.
//
//   node bench/compare/ab-forward.mjs --before OLD/web --after NEW/web
//     [--models bench/models/build] [--sizes 64,256] [--pairs N] [--backend wasm-simd]
//     [--tiny-pairs 31] [--vit-pairs 5]
//
// Each web/ folder needs its wasm modules in src/wasm/ (at least attnlens-models-<flavour>.js,
// .wasm and .wasm.gz); the models come from bench/models/build_models.py, and ViT-base (run when
// its folder is there) from bench/models/build_vision_models.py. 0 pairs skips a case.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { storyOf64Tokens, textOfTokens } from '../models/forward-core.js';
import { cameraFrame } from '../models/vision-core.js';
import { comparePairs, formatRatio, loadAverage } from './stats.js';

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    after: { type: 'string' },
    models: {
      type: 'string',
      default: fileURLToPath(new URL('../models/build/', import.meta.url)),
    },
    sizes: { type: 'string', default: '64,256' },
    pairs: { type: 'string' },
    'tiny-pairs': { type: 'string', default: '31' },
    'vit-pairs': { type: 'string', default: '5' },
    backend: { type: 'string', default: 'wasm-simd' },
  },
});
if (!values.before || !values.after) {
  console.error('usage: ab-forward.mjs --before OLD/web --after NEW/web [options]');
  process.exit(2);
}
const sizes = values.sizes.split(',').map(Number);
/** Pairs of timed calls at n tokens: fewer where one call takes seconds. */
const pairsFor = (n) => Number(values.pairs ?? (n <= 64 ? 21 : n <= 256 ? 9 : 5));

// The first 12 hex digits of the module's sha256: which build a side really ran.
function moduleHash(web) {
  const flavour = values.backend.replace(/^wasm-/, '');
  const file = resolve(web, `src/wasm/attnlens-models-${flavour}.wasm`);
  if (!existsSync(file)) return '?';
  return createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 12);
}

async function openSide(label, web) {
  const root = pathToFileURL(`${resolve(web)}/`);
  const { createAttention } = await import(new URL('src/index.js', root).href);
  const { loadModel } = await import(new URL('src/models/index.js', root).href);
  const attention = await createAttention({ backend: values.backend, threads: 1, models: true });
  return { label, web, attention, loadModel };
}

function maxDifference(a, b) {
  if (a.length !== b.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

/**
 * One untimed call per side (compilation, first allocations; their outputs compared), then
 * `pairs` pairs of timed calls, the side that goes first swapping from pair to pair.
 */
async function timePairs(name, runners, pairs) {
  const load = await loadAverage();
  const first = [await runners[0](), await runners[1]()];
  const [a, b] = first.map(([, result]) => result);
  const diff = maxDifference(a.attention, b.attention);
  const sameTop = a.predictions?.[0]?.id === b.predictions?.[0]?.id;
  first.length = 0;
  const ms = [[], []];
  const cpuMs = [[], []];
  for (let pair = 0; pair < pairs; pair++) {
    const order = pair % 2 === 0 ? [0, 1] : [1, 0];
    for (const side of order) {
      const [wall, , cpu] = await runners[side]();
      ms[side].push(wall);
      cpuMs[side].push(cpu);
    }
  }
  const row = { name, ...comparePairs(ms[0], ms[1]), load: `${load} -> ${await loadAverage()}` };
  row.cpu = comparePairs(cpuMs[0], cpuMs[1]);
  console.log(
    `${name.padEnd(34)} before ${row.before.toFixed(2).padStart(8)} ms  after ` +
      `${row.after.toFixed(2).padStart(8)} ms  after/before ${formatRatio(row)}  ` +
      `(medians of ${pairs} pairs; best ${row.bestBefore.toFixed(2)} / ` +
      `${row.bestAfter.toFixed(2)} ms; outputs ${diff === 0 ? 'identical' : `max |diff| ${diff}`}` +
      `${sameTop ? '' : ', top predictions differ'}; CPU time ${row.cpu.before.toFixed(2)} / ` +
      `${row.cpu.after.toFixed(2)} ms, after/before ${formatRatio(row.cpu)}; load ${row.load})`,
  );
  return row;
}

// A call's wall time, its result, and the process's CPU time during it (user + system): on an
// oversubscribed machine the wall time also counts the time other processes held the core, the
// CPU time only what this call ran (plus Node's own helper threads, the GC's among them).
const timed = (model, text, options) => async () => {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await model.run(text, options);
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return [wall, result, (cpu.user + cpu.system) / 1000];
};

const sides = [await openSide('before', values.before), await openSide('after', values.after)];
console.log(
  `Node ${process.version}, one thread, ${values.backend}; before ${sides[0].web} ` +
    `(module ${moduleHash(sides[0].web)}), after ${sides[1].web} (module ` +
    `${moduleHash(sides[1].web)}); load average ${await loadAverage()}`,
);
const rows = [];
const gpt2 = [];
for (const side of sides)
  gpt2.push(
    await side.loadModel(resolve(values.models, 'gpt2-small'), { attention: side.attention }),
  );
for (const n of sizes) {
  const text = textOfTokens(n);
  const ids = gpt2[0].tokenizer.encode(text).ids;
  if (ids.length !== n) throw new Error(`the text gave ${ids.length} tokens, not ${n}`);
  const runners = gpt2.map((model) => timed(model, text, { returnLogits: false }));
  rows.push(await timePairs(`GPT-2 small shape, N = ${n}`, runners, pairsFor(n)));
}
for (const model of gpt2) model.dispose();

if (Number(values['tiny-pairs']) > 0) {
  const tiny = [];
  for (const side of sides)
    tiny.push(
      await side.loadModel(resolve(values.models, 'tinystories-1m'), { attention: side.attention }),
    );
  const story = storyOf64Tokens(tiny[0].tokenizer);
  const runners = tiny.map((model) => timed(model, story));
  rows.push(await timePairs('TinyStories-1M shape, N = 64', runners, Number(values['tiny-pairs'])));
  for (const model of tiny) model.dispose();
}

// ViT-base/16 (random weights, vision.mjs's model): a 640 x 480 camera frame to all 144 maps.
const vitFolder = resolve(values.models, 'vit-base');
if (Number(values['vit-pairs']) > 0 && existsSync(vitFolder)) {
  const vit = [];
  for (const side of sides)
    vit.push(await side.loadModel(vitFolder, { attention: side.attention }));
  const picture = cameraFrame();
  const runners = vit.map((model) => timed(model, picture, { returnLogits: true, topK: 1 }));
  rows.push(await timePairs('ViT-base/16 224, a picture', runners, Number(values['vit-pairs'])));
  for (const model of vit) model.dispose();
} else if (Number(values['vit-pairs']) > 0) {
  console.log(`ViT-base skipped: no ${vitFolder} (bench/models/build_vision_models.py)`);
}
for (const side of sides) side.attention.dispose();

console.log(
  '\n| case | before, median ms | after, median ms | after/before (IQR of pair ratios) ' +
    '| best before / after, ms | CPU time after/before (IQR) | pairs | load |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const row of rows) {
  console.log(
    `| ${row.name} | ${row.before.toFixed(1)} | ${row.after.toFixed(1)} | ${formatRatio(row)} ` +
      `| ${row.bestBefore.toFixed(1)} / ${row.bestAfter.toFixed(1)} | ${formatRatio(row.cpu)} ` +
      `| ${row.pairs} | ${row.load} |`,
  );
}
