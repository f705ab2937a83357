#!/usr/bin/env node
// A model's forward pass on WebGPU against the wasm forward, in one run (numbers printed, never
// asserted): model.run(text) of GPT-2 small at N tokens, loaded once with loadModel's backend
// 'webgpu' and once with the default wasm, the two sides' calls alternating so both see the same
// machine load. Both return every layer's attention [12, 12, N, N] and the last position's
// logits to JavaScript (tokenizing, the GPU's upload, dispatches and readback included).
//
//   node bench/models/webgpu-forward.mjs [--model DIR] [--sizes 1024] [--repeats 3]
//                                        [--backend wasm-simd] [--vision DIR]
//
// DIR defaults to bench/models/build/gpt2-small/ (build_models.py). --vision adds a vision
// transformer's run(picture) (a 640 x 480 frame) on both, e.g. build/vit-base/
// (build_vision_models.py). Node uses the `webgpu`
// package (web/node_modules); without a GPU run it through web/scripts/swiftshader.mjs with a
// small model and size (a software adapter's numbers only show that the passes run).
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createAttention } from '../../web/src/index.js';
import { loadModel } from '../../web/src/models/index.js';
import { maxDifference, median, textOfTokens } from './forward-core.js';
import { cameraFrame } from './vision-core.js';

const { values } = parseArgs({
  options: {
    model: {
      type: 'string',
      default: fileURLToPath(new URL('build/gpt2-small/', import.meta.url)),
    },
    sizes: { type: 'string', default: '1024' },
    repeats: { type: 'string', default: '3' },
    backend: { type: 'string', default: 'wasm' },
    vision: { type: 'string' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const repeats = Number(values.repeats);

const { create } = await import('../../web/node_modules/webgpu/index.js');
const gpu = create([]);
const attention = await createAttention({ backend: values.backend, models: true });
const wasm = await loadModel(values.model, { attention });
const onGpu = await loadModel(values.model, { backend: 'webgpu', webgpu: { gpu } });
const { layers, heads, hidden } = wasm.info;
console.log(
  `Node ${process.version}; ${wasm.info.backend} (threads ${attention.threads}) against ` +
    `${onGpu.info.backendReason}`,
);
console.log(
  `model: ${layers} layers, ${heads} heads, ${hidden} wide; load ${loadavg()[0].toFixed(2)}`,
);
console.log('N | wasm | webgpu | webgpu faster by | max |attention diff| | same top-5');

const time = async (model, text) => {
  const start = performance.now();
  const result = await model.run(text, { truncate: true });
  return { ms: performance.now() - start, result };
};

for (const n of sizes) {
  const text = textOfTokens(Math.min(n, wasm.info.maxPositions));
  await time(onGpu, text); // compiles the kernels and sizes the buffers
  const wasmTimes = [];
  const gpuTimes = [];
  let last;
  for (let r = 0; r < repeats; r++) {
    const a = await time(wasm, text);
    const b = await time(onGpu, text);
    wasmTimes.push(a.ms);
    gpuTimes.push(b.ms);
    last = [a.result, b.result];
  }
  const [expected, actual] = last;
  const top = (run) =>
    run.predictions
      .slice(0, 5)
      .map((p) => p.id)
      .join(',');
  const [w, g] = [median(wasmTimes), median(gpuTimes)];
  console.log(
    `${expected.tokens.length} | ${w.toFixed(0)} ms | ${g.toFixed(0)} ms | ${(w / g).toFixed(2)}x | ` +
      `${maxDifference(actual.attention, expected.attention).toExponential(2)} | ` +
      `${top(actual) === top(expected) ? 'yes' : 'NO'} (ran on ${actual.backend})`,
  );
}
wasm.dispose();
onGpu.dispose();

if (values.vision) {
  const frame = cameraFrame();
  const wasmVision = await loadModel(values.vision, { attention });
  const gpuVision = await loadModel(values.vision, { backend: 'webgpu', webgpu: { gpu } });
  const timeImage = async (model) => {
    const start = performance.now();
    const result = await model.run(frame);
    return { ms: performance.now() - start, result };
  };
  await timeImage(gpuVision);
  const [wasmTimes, gpuTimes] = [[], []];
  let last;
  for (let r = 0; r < repeats; r++) {
    const a = await timeImage(wasmVision);
    const b = await timeImage(gpuVision);
    wasmTimes.push(a.ms);
    gpuTimes.push(b.ms);
    last = [a.result, b.result];
  }
  const [expected, actual] = last;
  const [w, g] = [median(wasmTimes), median(gpuTimes)];
  const label = (run) => run.labels?.[0]?.index ?? '-';
  console.log(
    `vision (${wasmVision.info.layers} layers, ${expected.tokens} tokens) | ${w.toFixed(0)} ms | ` +
      `${g.toFixed(0)} ms | ${(w / g).toFixed(2)}x | ` +
      `${maxDifference(actual.attention, expected.attention).toExponential(2)} | top label ` +
      `${label(actual) === label(expected) ? 'same' : 'DIFFERS'} (ran on ${actual.backend})`,
  );
  wasmVision.dispose();
  gpuVision.dispose();
}
console.log(`load ${loadavg()[0].toFixed(2)}`);
attention.dispose();
