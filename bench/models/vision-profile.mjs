#!/usr/bin/env node
// Where a vision model's run(image) spends its time: V8's sampling profiler over a few runs of
// the vision benchmark's picture, each sample put in one part of the pass by its call stack
// (preprocessing, patch embedding, the projections, the attention kernel, the MLP, copies, GC).
// Prints percentages of the samples; asserts nothing. See bench/models/README.md.
//
//   node bench/models/vision-profile.mjs --module build/wasm-prof/bindings [--model deit-tiny]
//                                        [--runs 10]
//
// --module: a folder holding attnlens-models-simd.{js,wasm} linked with --profiling-funcs (the
// shipped modules carry no function names), e.g.
//   emcmake cmake -S . -B build/wasm-prof -DCMAKE_BUILD_TYPE=Release -DATTNLENS_BUILD_TESTS=OFF \
//     -DATTNLENS_BUILD_BENCH=OFF -DCMAKE_EXE_LINKER_FLAGS=--profiling-funcs
//   cmake --build build/wasm-prof --target attnlens_models_web
// The script runs a temporary copy of web/src with that module in place of the shipped one.
import {
  copyFileSync,
  cpSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { cameraFrame } from './vision-core.js';

const { values } = parseArgs({
  options: {
    module: { type: 'string' },
    model: { type: 'string', default: 'deit-tiny' },
    runs: { type: 'string', default: '10' },
  },
});
if (!values.module) throw new Error('--module: the folder of a --profiling-funcs link (see above)');
const repo = fileURLToPath(new URL('../../', import.meta.url));
const web = mkdtempSync(join(tmpdir(), 'attnlens-vision-profile-'));
cpSync(join(repo, 'web/src'), join(web, 'src'), { recursive: true });
copyFileSync(join(repo, 'web/package.json'), join(web, 'package.json'));
symlinkSync(join(repo, 'web/node_modules'), join(web, 'node_modules'));
for (const ext of ['js', 'wasm']) {
  copyFileSync(
    join(resolve(values.module), `attnlens-models-simd.${ext}`),
    join(web, `src/wasm/attnlens-models-simd.${ext}`),
  );
}
// The loader reads the gzip-compressed copy.
const wasm = join(web, 'src/wasm/attnlens-models-simd.wasm');
writeFileSync(`${wasm}.gz`, gzipSync(readFileSync(wasm)));

// Innermost match wins among LEAF (the sampled function itself), then the first frame up the
// stack that matches PASS, then any frame that matches LEAF.
const LEAF = [
  [/^dispatch$/, 'the profiler itself'],
  [/resizeRgb|resizeWindow|horizontalPass|clip8/, 'preprocessing: resize (JS)'],
  [
    /centreCrop|preprocessImage|writePixelValues|readPixels|readImage/,
    'preprocessing: read, crop, normalise (JS)',
  ],
  [/garbage collector/, 'garbage collection'],
  [/copyFloats/, 'attention and logits copied out of wasm memory (JS)'],
];
const PASS = [
  [/gelu/, 'MLP: GELU'],
  [/feed_forward/, 'MLP: its two linear layers (GEMM)'],
  [/run_materialized|QueryPanel/, 'attention kernel: scores, softmax, weights kept, values'],
  [/::embed\(|embed_patches/, 'patch embedding (unfold, GEMM), class token, positions'],
  [/layer_norm/, 'layer norms'],
  [/add_block_output/, 'residual adds'],
  [/self_attention/, 'attention: query, key, value and output projections (GEMM)'],
  [/logits|classifier|lm_head/, 'classifier'],
];

try {
  const src = pathToFileURL(join(web, 'src/')).href;
  const { loadModel } = await import(`${src}models/index.js`);
  const { createAttention } = await import(`${src}index.js`);
  const attention = await createAttention({ backend: 'wasm-simd', threads: 1, models: true });
  const model = await loadModel(join(repo, 'bench/models/build', values.model), { attention });
  const picture = cameraFrame();
  const runs = Number(values.runs);
  await model.run(picture, { returnLogits: true, topK: 1 });
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
  await session.post('Profiler.start');
  const [t0, cpu0] = [performance.now(), process.cpuUsage()];
  for (let r = 0; r < runs; r++) await model.run(picture, { returnLogits: true, topK: 1 });
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - t0;
  const { profile } = await session.post('Profiler.stop');
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n);
  const find = (rules, names) => {
    for (const name of names) for (const [re, part] of rules) if (re.test(name)) return part;
    return null;
  };
  const parts = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const stack = [];
    for (let n = byId.get(id); n; n = parent.get(n.id)) stack.push(n.callFrame.functionName);
    const part = find(LEAF, stack.slice(0, 1)) ?? find(PASS, stack) ?? find(LEAF, stack) ?? 'other';
    parts.set(part, (parts.get(part) ?? 0) + profile.timeDeltas[i]);
    total += profile.timeDeltas[i];
  });
  model.dispose();
  attention.dispose();
  console.log(
    `${values.model}, ${runs} runs of run(picture): ${(wall / runs).toFixed(1)} ms wall, ` +
      `${((cpu.user + cpu.system) / 1000 / runs).toFixed(1)} ms CPU a run`,
  );
  console.log('| part of the pass | share of the samples |\n| --- | --- |');
  for (const [part, time] of [...parts].sort((a, b) => b[1] - a[1])) {
    console.log(`| ${part} | ${((100 * time) / total).toFixed(1)}% |`);
  }
} finally {
  rmSync(web, { recursive: true, force: true });
}
