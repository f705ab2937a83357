#!/usr/bin/env node
// WebGPU benchmark (numbers printed, never asserted): streaming attention, H = 8, D = 64,
// N in {512, 2048, 8192}, without a mask and causal, with and without the transfers, and wasm
// for comparison (bench/webgpu-core.js says what each column times).
//
//   node bench/webgpu.mjs [--sizes 512,2048] [--repeats 3] [--wasm-max-n 2048]
//   node bench/webgpu.mjs --browser [--chromium-arg=--use-vulkan ...]
//
// Node uses the `webgpu` package (web/node_modules); without a GPU run it through
// web/scripts/swiftshader.mjs. --browser runs the same code in headless Chromium with
// --enable-unsafe-webgpu (pages from this repository over http://127.0.0.1). On a software
// adapter (SwiftShader) the default sizes shrink to 128 and 256: those numbers only show that the
// kernels run; published figures need a real GPU.
import { parseArgs } from 'node:util';
import { HEADER } from './webgpu-core.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string' },
    repeats: { type: 'string', default: '3' },
    'wasm-max-n': { type: 'string', default: '2048' },
    browser: { type: 'boolean', default: false },
    'chromium-arg': { type: 'string', multiple: true, default: [] },
  },
});
const options = {
  sizes: values.sizes ? values.sizes.split(',').map(Number) : undefined,
  repeats: Number(values.repeats),
  wasmMaxN: Number(values['wasm-max-n']),
};

function report({ adapter, subgroups }, where) {
  console.log(
    `\nadapter: ${adapter.description || adapter.architecture} (${adapter.vendor})` +
      `${adapter.software ? ', SOFTWARE: these numbers only show the kernels run' : ''}; ${where}; ` +
      `subgroups ${subgroups ? 'on' : 'off'}; H = 8, D = 64`,
  );
}

if (values.browser) {
  const { REPO_ROOT, newPage, openBrowser } = await import('../web/scripts/chromium.mjs');
  const browser = await openBrowser({
    root: REPO_ROOT,
    webgpu: true,
    args: values['chromium-arg'],
  });
  try {
    const page = await newPage(browser.context);
    page.on('console', (message) => {
      if (message.type() === 'log') console.log(message.text());
    });
    await page.goto(`${browser.base}/bench/webgpu.html`);
    await page.waitForFunction(() => document.body.dataset.ready === 'true');
    console.log(HEADER);
    const result = await page.evaluate(
      (o) => window.runBenchmark({ ...o, log: console.log }),
      options,
    );
    report(result, 'headless Chromium');
  } finally {
    await browser.close();
  }
} else {
  // The package is web/'s devDependency; this file lives outside web/.
  const { create } = await import('../web/node_modules/webgpu/index.js');
  const { runBenchmark } = await import('./webgpu-core.js');
  console.log(HEADER);
  const result = await runBenchmark({ ...options, gpu: create([]), log: console.log });
  report(result, 'Node (Dawn)');
}
