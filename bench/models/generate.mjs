#!/usr/bin/env node
// Greedy generation on GPT-2 small's shape: attnlens' model.generate() against onnxruntime-web
// with past key/values on the same weights, calls alternating (numbers printed, never asserted;
// generate-core.js says what is timed). See bench/models/README.md, "Generation".
//
//   node bench/models/generate.mjs [--prompt 32] [--tokens 48] [--pairs 5] [--browser]
//        [--backend wasm-simd]
//
// Needs the wasm modules (./scripts/build-wasm.sh), onnxruntime-web in bench/peers/node_modules
// (cd bench/peers && npm ci) and build_models.py's gpt2-small/ and gpt2-small-decode.onnx in
// bench/models/build/.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    prompt: { type: 'string', default: '32' },
    tokens: { type: 'string', default: '48' },
    pairs: { type: 'string', default: '5' },
    browser: { type: 'boolean', default: false },
    backend: { type: 'string', default: 'wasm' },
  },
});
const settings = {
  promptTokens: Number(values.prompt),
  newTokens: Number(values.tokens),
  pairs: Number(values.pairs),
  backend: values.backend,
};
const build = new URL('build/', import.meta.url);
const load = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`;
console.log(`${load()} (before)`);

if (values.browser) {
  const { REPO_ROOT, newPage, openBrowser } = await import('../../web/scripts/chromium.mjs');
  const browser = await openBrowser({ root: REPO_ROOT });
  try {
    const page = await newPage(browser.context);
    page.on('console', (message) => {
      if (message.type() === 'log') console.log(message.text());
    });
    page.setDefaultTimeout(0);
    await page.goto(`${browser.base}/bench/models/generate.html`);
    await page.waitForFunction(() => document.body.dataset.ready === 'true');
    console.log(
      `headless Chromium ${await page.evaluate(() => navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1])}, one thread`,
    );
    await page.evaluate((s) => window.runBenchmark(s), settings);
  } finally {
    await browser.close();
  }
} else {
  const { loadModel } = await import('../../web/src/models/index.js');
  const { createAttention } = await import('../../web/src/index.js');
  const ort = await import('../peers/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs');
  const { runGenerateBenchmark } = await import('./generate-core.js');
  console.log(`Node ${process.version}, one thread`);
  await runGenerateBenchmark({
    loadModel,
    createAttention,
    ort,
    onnx: readFileSync(new URL('gpt2-small-decode.onnx', build)),
    gpt2: fileURLToPath(new URL('gpt2-small/', build)),
    ...settings,
    log: console.log,
  });
}
console.log(`${load()} (after)`);
