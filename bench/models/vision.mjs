#!/usr/bin/env node
// Vision transformers from a picture to every head's attention map, attnlens against
// onnxruntime-web on the same weights (numbers printed, never asserted; vision-core.js says what
// is timed). See bench/models/README.md.
//
//   node bench/models/vision.mjs [--models vit-base,deit-tiny] [--pairs 5,15] [--browser]
//                                [--backend wasm-simd]
//
// Needs the wasm modules (./scripts/build-wasm.sh), onnxruntime-web in bench/peers/node_modules
// (cd bench/peers && npm ci) and the models (build_vision_models.py into bench/models/build/).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadAverage, openBenchPage, processor } from './bench-page.mjs';

const { values } = parseArgs({
  options: {
    models: { type: 'string', default: 'vit-base,deit-tiny' },
    pairs: { type: 'string', default: '5,15' },
    browser: { type: 'boolean', default: false },
    backend: { type: 'string', default: 'wasm' },
  },
});
const TITLES = { 'vit-base': 'ViT-base/16 224', 'deit-tiny': 'DeiT-tiny/16 224' };
const names = values.models.split(',');
const pairCounts = values.pairs.split(',').map(Number);
const models = names.map((name, i) => {
  if (!TITLES[name]) throw new Error(`--models: ${name} is not one of ${Object.keys(TITLES)}`);
  return { name, title: TITLES[name], pairs: pairCounts[i] ?? pairCounts.at(-1) };
});
const build = new URL('build/', import.meta.url);
console.log(`${processor()}; load average before: ${loadAverage()} (1, 5, 15 min)`);

if (values.browser) {
  const { REPO_ROOT, openBrowser } = await import('../../web/scripts/chromium.mjs');
  const browser = await openBrowser({ root: REPO_ROOT });
  try {
    const page = await openBenchPage(browser, 'vision');
    await page.evaluate((options) => window.runBenchmark(options), {
      models,
      backend: values.backend,
    });
  } finally {
    await browser.close();
  }
} else {
  const { loadModel } = await import('../../web/src/models/index.js');
  const { createAttention } = await import('../../web/src/index.js');
  const { readImage } = await import('../../web/src/vision/image-input.js');
  const { imageProcessor, preprocessImage } = await import('../../web/src/vision/preprocessor.js');
  const ort = await import('../peers/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs');
  const { runVisionBenchmark } = await import('./vision-core.js');
  console.log(`Node ${process.version}, one thread`);
  const file = (path) => readFileSync(new URL(path, build));
  await runVisionBenchmark({
    loadModel,
    createAttention,
    vision: { readImage, preprocessImage, imageProcessor },
    ort,
    models: models.map((m) => ({
      ...m,
      folder: fileURLToPath(new URL(`${m.name}/`, build)),
      onnx: file(`${m.name}.onnx`),
      preprocessor: JSON.parse(file(`${m.name}/preprocessor_config.json`)),
    })),
    backend: values.backend,
    cpuMs: () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    },
    log: console.log,
  });
}
console.log(`load average after: ${loadAverage()} (1, 5, 15 min)`);
