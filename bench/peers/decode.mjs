#!/usr/bin/env node
// Grouped-query attention and a KV-cache decode step, in one Node process on one thread (numbers
// printed, never asserted):
//   (a) 32 query heads over 8 K/V heads (kvHeads), D = 64, N = 2048, against 32 plain heads:
//       attn.attention() both, no mask and causal.
//   (b) decode steps of 256 tokens and of one token that fill a KV cache to 4096 entries (32
//       query heads over 8 K/V heads, D = 64, causal aligned bottom-right): attn.kvCache()'s
//       append() + attend(), attn.attention() over the whole K/V copied in, and onnxruntime-web's
//       ai.onnx Attention (opset 23) with past_key / past_value on its wasm execution provider,
//       which returns present_key / present_value for the next step.
// Calls of the runners alternate within each round, so a busy stretch of the shared host slows
// them alike, and count only at full speed (timeAlternating); the times are medians. Each step's
// output is checked against float64 attention on sampled rows before anything is timed.
//
//   /usr/bin/python3 bench/peers/models/build_models.py bench/peers/models/build   # once
//   node bench/peers/decode.mjs [--rounds 7] [--json FILE] [--docs]
// --docs writes its section of docs/benchmarks.md (kept there by report/write-docs.mjs).

import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createAttention } from '../../web/src/index.js';
import { tensor } from '../../web/scripts/random.js';
import { describeMachine } from './core/machine.mjs';
import { openSpeedProbe } from './core/peak.js';
import { FULL_SPEED, median } from './core/timing.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    json: { type: 'string' },
    docs: { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(args.rounds);
const HEADS = 32;
const KV_HEADS = 8;
const D = 64;
const N = 2048;
const TOTAL = 4096; // cache entries after the step
const STEPS = [256, 1]; // new tokens per step: a prompt chunk, and one token
const MAX_ERROR = 2e-4;

const attn = await createAttention({ backend: 'wasm' });
const machine = describeMachine();
console.log(`attnlens ${attn.version} on ${attn.backend}, ${machine.cpu}, load ${machine.load}`);

// The register-only loop of the peers bench (core/peak.js), run between calls: a call counts when
// the loop ran at FULL_SPEED of its best rate on both sides of it (the host took no part of the
// core meanwhile), as in core/timing.js.
const probe = await openSpeedProbe();
let bestProbe = 0;
const probeRate = () => {
  const rate = probe ? probe(5) : 1;
  bestProbe = Math.max(bestProbe, rate);
  return rate;
};

// Each runner's median time over the rounds, its calls alternating with the others' in every
// round; rounds go on (up to 3x) until every runner has 3 calls at full speed.
async function timeAlternating(runners) {
  for (const run of Object.values(runners)) await run(); // warm-up
  const names = Object.keys(runners);
  const calls = Object.fromEntries(names.map((name) => [name, []]));
  const fullSpeed = ({ before, after }) => Math.min(before, after) >= FULL_SPEED * bestProbe;
  let before = probeRate();
  for (let round = 0; round < 3 * ROUNDS; round++) {
    for (const name of names) {
      const ms = await runners[name]();
      const after = probeRate();
      calls[name].push({ ms, before, after });
      before = after;
    }
    const enough = names.every((name) => calls[name].filter(fullSpeed).length >= 3);
    if (round + 1 >= ROUNDS && enough) break;
  }
  return Object.fromEntries(
    names.map((name) => {
      const counted = calls[name].filter(fullSpeed);
      const kept = counted.length > 0 ? counted : calls[name];
      const ms = median(kept.map((c) => c.ms));
      const allMs = calls[name].map((c) => Number(c.ms.toFixed(1)));
      return [name, { ms, counted: counted.length, calls: allMs.length, allMs }];
    }),
  );
}

// Wall time of `call`, after `setup` (not timed).
function timed(call, setup = () => {}) {
  return async () => {
    setup();
    const started = performance.now();
    await call();
    return performance.now() - started;
  };
}

// ---- (a) grouped-query attention against plain heads ----------------------------------------

const q = tensor(HEADS * N * D, 1);
const kPlain = tensor(HEADS * N * D, 2);
const vPlain = tensor(HEADS * N * D, 3);
const kGrouped = kPlain.slice(0, KV_HEADS * N * D);
const vGrouped = vPlain.slice(0, KV_HEADS * N * D);
const grouped = [];
for (const mask of ['none', 'causal']) {
  const options = { heads: HEADS, headDim: D, causal: mask === 'causal' };
  const ms = await timeAlternating({
    plain: timed(() => attn.attention(q, kPlain, vPlain, options)),
    grouped: timed(() => attn.attention(q, kGrouped, vGrouped, { ...options, kvHeads: KV_HEADS })),
  });
  grouped.push({
    mask,
    plainMs: ms.plain.ms,
    groupedMs: ms.grouped.ms,
    ratio: ms.grouped.ms / ms.plain.ms,
    counted: `${ms.plain.counted}/${ms.plain.calls}, ${ms.grouped.counted}/${ms.grouped.calls}`,
    allMs: { plain: ms.plain.allMs, grouped: ms.grouped.allMs },
  });
}
console.log(`\n(a) ${HEADS} query heads, D = ${D}, N = ${N}: ${KV_HEADS} K/V heads vs ${HEADS}`);
for (const r of grouped) {
  console.log(
    `  ${r.mask.padEnd(6)} plain ${r.plainMs.toFixed(1)} ms, grouped ${r.groupedMs.toFixed(1)} ` +
      `ms, grouped / plain ${r.ratio.toFixed(3)} (full-speed calls ${r.counted})`,
  );
}

// ---- (b) decode steps over a KV cache -------------------------------------------------------

const ort = await import('onnxruntime-web');
ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';
const graph = new URL('./models/build/decode-attention-causal.onnx', import.meta.url);
const session = await ort.InferenceSession.create(readFileSync(graph), {
  executionProviders: ['wasm'],
  graphOptimizationLevel: 'all',
});
const kvShape = (rows) => [1, KV_HEADS, rows, D];
const cache = attn.kvCache({ heads: KV_HEADS, queryHeads: HEADS, headDim: D, capacity: TOTAL });

// The whole K/V [Hkv, TOTAL, D]: each head's `past` rows, then its `step` new ones.
function concatenated(past, next, pastRows, step) {
  const out = new Float32Array(KV_HEADS * TOTAL * D);
  for (let h = 0; h < KV_HEADS; h++) {
    out.set(past.subarray(h * pastRows * D, (h + 1) * pastRows * D), h * TOTAL * D);
    out.set(next.subarray(h * step * D, (h + 1) * step * D), (h * TOTAL + pastRows) * D);
  }
  return out;
}

// Float64 attention of query row i of head h: keys 0 .. past + i (bottom-right causal).
function referenceRow({ q, k, v, past, step }, h, i) {
  const kv = Math.floor(h / (HEADS / KV_HEADS));
  const visible = past + i + 1;
  const logits = new Float64Array(visible);
  for (let j = 0; j < visible; j++) {
    let dot = 0;
    for (let d = 0; d < D; d++) dot += q[(h * step + i) * D + d] * k[(kv * TOTAL + j) * D + d];
    logits[j] = dot / Math.sqrt(D);
  }
  const max = Math.max(...logits);
  let sum = 0;
  for (let j = 0; j < visible; j++) sum += logits[j] = Math.exp(logits[j] - max);
  const row = new Float64Array(D);
  for (let j = 0; j < visible; j++) {
    for (let d = 0; d < D; d++) row[d] += (logits[j] / sum) * v[(kv * TOTAL + j) * D + d];
  }
  return row;
}

// The largest error of `output` [HEADS, step, D] on sampled rows.
function maxError(output, problem) {
  let worst = 0;
  for (const [h, i] of [
    [0, 0],
    [5, 17],
    [13, 128],
    [31, problem.step - 1],
  ]) {
    const row = Math.min(i, problem.step - 1);
    const expected = referenceRow(problem, h, row);
    for (let d = 0; d < D; d++) {
      const got = output[(h * problem.step + row) * D + d];
      worst = Math.max(worst, Math.abs(got - expected[d]));
    }
  }
  return worst;
}

// `step` new tokens attend to the cache filled to TOTAL - step, and to their own keys.
async function decodeStep(step) {
  const past = TOTAL - step;
  const q = tensor(HEADS * step * D, 11);
  const pastK = tensor(KV_HEADS * past * D, 12);
  const pastV = tensor(KV_HEADS * past * D, 13);
  const newK = tensor(KV_HEADS * step * D, 14);
  const newV = tensor(KV_HEADS * step * D, 15);
  const problem = {
    q,
    k: concatenated(pastK, newK, past, step),
    v: concatenated(pastV, newV, past, step),
    past,
    step,
  };
  const refill = () => {
    cache.reset();
    cache.append(pastK, pastV);
  };
  const cacheStep = async () => {
    cache.append(newK, newV);
    return (await cache.attend(q, { causal: true })).output;
  };
  const copied = { heads: HEADS, kvHeads: KV_HEADS, headDim: D, causal: true, queryOffset: past };
  const copiedStep = async () => (await attn.attention(q, problem.k, problem.v, copied)).output;
  const feeds = {
    q: new ort.Tensor('float32', q, [1, HEADS, step, D]),
    k: new ort.Tensor('float32', newK, kvShape(step)),
    v: new ort.Tensor('float32', newV, kvShape(step)),
    past_key: new ort.Tensor('float32', pastK, kvShape(past)),
    past_value: new ort.Tensor('float32', pastV, kvShape(past)),
  };
  const ortStep = async () => (await session.run(feeds)).out.data;

  refill();
  const checks = {
    cache: maxError(await cacheStep(), problem),
    copied: maxError(await copiedStep(), problem),
    ort: maxError(await ortStep(), problem),
  };
  const result = { step, past, checks, ms: {}, allMs: {}, counted: '' };
  if (Object.values(checks).some((error) => !(error <= MAX_ERROR))) {
    console.log(`\n(b) ${step}-token step: wrong output, not timed: ${JSON.stringify(checks)}`);
    return result;
  }
  const times = await timeAlternating({
    cache: timed(cacheStep, refill),
    copied: timed(copiedStep),
    ort: timed(ortStep),
  });
  for (const [name, { ms, counted, calls, allMs }] of Object.entries(times)) {
    result.ms[name] = ms;
    result.allMs[name] = allMs;
    result.counted += `${result.counted ? ', ' : ''}${name} ${counted}/${calls}`;
  }
  const { cache: c, copied: cp, ort: o } = result.ms;
  console.log(
    `\n(b) decode step: ${step} queries over ${TOTAL} cached keys (${past} past), ` +
      `${HEADS} / ${KV_HEADS} heads, D = ${D}, causal bottom-right`,
  );
  console.log(`  attn.kvCache append + attend  ${c.toFixed(2)} ms`);
  console.log(`  attn.attention, K/V copied in ${cp.toFixed(2)} ms`);
  console.log(`  onnxruntime-web ${ort.env.versions.web} Attention ${o.toFixed(2)} ms`);
  console.log(`  onnxruntime-web / kvCache ${(o / c).toFixed(2)}`);
  console.log(`  full-speed calls: ${result.counted}`);
  console.log(`  max error on sampled rows: ${JSON.stringify(checks)}`);
  return result;
}

const decode = [];
for (const step of STEPS) decode.push(await decodeStep(step));
cache.dispose();
attn.dispose();
probe?.close();

const results = {
  machine,
  backend: attn.backend,
  ort: ort.env.versions.web,
  ROUNDS,
  grouped,
  decode,
};
if (args.json) writeFileSync(args.json, `${JSON.stringify(results, null, 1)}\n`);
if (args.docs) {
  const { writeDecodeSection } = await import('./report/decode-section.js');
  writeDecodeSection(results);
}
process.exit(0); // onnxruntime's thread pool would keep the process alive
