#!/usr/bin/env node
// Forward pass of real-model shapes, attnlens against onnxruntime-web (numbers printed, never
// asserted; forward-core.js says what is timed). See bench/models/README.md.
//
//   node bench/models/forward.mjs [--sizes 64,256,1024] [--browser] [--backend wasm-simd]
//
// Needs the wasm modules (./scripts/build-wasm.sh), onnxruntime-web in bench/peers/node_modules
// (cd bench/peers && npm ci) and the models (build_models.py into bench/models/build/).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '64,256,1024' },
    browser: { type: 'boolean', default: false },
    backend: { type: 'string', default: 'wasm' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const here = new URL('./', import.meta.url);
const build = new URL('build/', here);

if (values.browser) {
  const { REPO_ROOT, newPage, openBrowser } = await import('../../web/scripts/chromium.mjs');
  const browser = await openBrowser({ root: REPO_ROOT });
  try {
    const page = await newPage(browser.context);
    page.on('console', (message) => {
      if (message.type() === 'log') console.log(message.text());
    });
    page.setDefaultTimeout(0);
    await page.goto(`${browser.base}/bench/models/forward.html`);
    await page.waitForFunction(() => document.body.dataset.ready === 'true');
    console.log(
      `headless Chromium ${await page.evaluate(() => navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1])}, one thread`,
    );
    await page.evaluate(({ sizes: s, backend }) => window.runBenchmark({ sizes: s, backend }), {
      sizes,
      backend: values.backend,
    });
  } finally {
    await browser.close();
  }
} else {
  const { loadModel } = await import('../../web/src/models/index.js');
  const { createAttention } = await import('../../web/src/index.js');
  const ort = await import('../peers/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs');
  const { runForwardBenchmark } = await import('./forward-core.js');
  console.log(`Node ${process.version}, one thread`);
  await runForwardBenchmark({
    loadModel,
    createAttention,
    ort,
    onnx: readFileSync(new URL('gpt2-small.onnx', build)),
    gpt2: fileURLToPath(new URL('gpt2-small/', build)),
    tinyStories: fileURLToPath(new URL('tinystories-1m/', build)),
    sizes,
    backend: values.backend,
    log: console.log,
  });
}
