// The WebGPU backend in headless Chromium with --enable-unsafe-webgpu (adapter: SwiftShader):
// the same agreement with wasm as in Node, through Chromium's own WebGPU stack, plus the
// fallbacks a page meets. Pages come from web/ over http://127.0.0.1 (a secure context).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { WEB_ROOT, artifact, newPage, openBrowser } from '../browser/harness.mjs';
import { tinyModel } from '../support/tiny-models.mjs';

const TOLERANCE = 1e-4;
const computed = (p) => p.evaluate(() => Number(document.body.dataset.computed ?? 0));

let browser;
let page;
before(async () => {
  browser = await openBrowser({ root: WEB_ROOT, webgpu: true });
  page = await newPage(browser.context);
  await page.goto(`${browser.base}/test/webgpu/page.html`);
  await page.waitForFunction(() => document.body.dataset.ready === 'true');
});
after(async () => {
  assert.deepEqual(page?.problems ?? [], []);
  await browser?.close();
});

test(
  'WebGPU results equal wasm for every mask, score and strategy',
  { timeout: 300000 },
  async () => {
    const { webgpu, results } = await page.evaluate(() => window.checks.agreement());
    assert.equal(webgpu.adapter.software, true, 'SwiftShader');
    assert.equal(webgpu.storage, 'f32');
    for (const { name, backend, strategy, error } of results) {
      assert.equal(backend, 'webgpu', name);
      assert.ok(error <= TOLERANCE, `${name} (${strategy}): error ${error}`);
    }
    assert.deepEqual([...new Set(results.map((r) => r.strategy))].sort(), [
      'materialized',
      'streaming',
    ]);
  },
);

test(
  "fallbacks: 'auto' skips SwiftShader, no adapter, a lost device",
  { timeout: 120000 },
  async () => {
    const out = await page.evaluate(() => window.checks.fallbacks());
    assert.equal(out.detected.available, true);
    assert.equal(out.detected.adapter.software, true);

    assert.match(out.autoDefault.backend, /^wasm-/);
    assert.match(out.autoDefault.unavailable, /software implementation/);
    assert.equal(out.autoDefault.error, 0);

    assert.match(
      out.noAdapter,
      /^backend: 'webgpu' is not available: requestAdapter\(\) returned null/,
    );
    assert.match(out.autoNoAdapter.backend, /^wasm-/);
    assert.equal(out.autoNoAdapter.error, 0);

    assert.equal(out.deviceLoss.before, 'webgpu');
    assert.match(out.deviceLoss.after, /^wasm-/);
    assert.equal(out.deviceLoss.error, 0);
    assert.equal(out.deviceLoss.events.length, 1);
    assert.equal(out.deviceLoss.events[0].from, 'webgpu');
    assert.match(out.deviceLoss.events[0].reason, /lost/);
    assert.equal(out.deviceLoss.backend, out.deviceLoss.after);
  },
);

test(
  'the demo offers WebGPU where it exists, runs on it, and switches back',
  { timeout: 120000 },
  async () => {
    const demo = await newPage(browser.context);
    await demo.goto(`${browser.base}/demo/?backend=webgpu&heads=2`);
    await demo.waitForFunction(() => Number(document.body.dataset.computed) >= 1, null, {
      timeout: 60000,
    });
    await demo.waitForFunction(() => document.body.dataset.webgpu === 'available', null, {
      timeout: 20000,
    });
    const option = await demo.$eval('#backend-option-webgpu', (o) => ({
      hidden: o.hidden,
      text: o.textContent,
    }));
    assert.deepEqual(option, { hidden: false, text: 'WebGPU (software)' });
    assert.equal(await demo.inputValue('#backend-select'), 'webgpu');
    assert.match(await demo.textContent('#engine-badge'), /^webgpu · /);
    assert.match(await demo.textContent('#cost-body .cost-facts'), /webgpu/);
    await demo.screenshot({ path: artifact('demo-webgpu.png') });

    const before = await computed(demo);
    await demo.selectOption('#backend-select', 'wasm');
    await demo.waitForFunction((n) => Number(document.body.dataset.computed) > n, before, {
      timeout: 20000,
    });
    assert.match(await demo.textContent('#engine-badge'), /^wasm-relaxed · /);
    // The link keeps the choice.
    await demo.waitForFunction(() => location.search.includes('backend=wasm'));
    assert.deepEqual(demo.problems, []);
    await demo.close();
  },
);

test(
  "a GPT-2 forward on loadModel's backend 'webgpu' equals wasm's",
  { timeout: 300000 },
  async () => {
    const folder = tinyModel('gpt2');
    const files = readdirSync(folder).map((name) => ({
      name,
      bytes: [...readFileSync(join(folder, name))],
    }));
    const forward = await newPage(browser.context);
    await forward.goto(`${browser.base}/test/webgpu/model-page.html`);
    await forward.waitForFunction(() => document.body.dataset.ready === 'true');
    const out = await forward.evaluate(
      ([picked, text]) => window.compareForward(picked, text),
      [files, 'Hello world, this is a test.'],
    );
    console.log(
      `# Chromium: N=${out.tokens} max |attention diff| ${out.attention}, logits ${out.logits}`,
    );
    assert.equal(out.backend, 'webgpu');
    assert.equal(out.ran, 'webgpu');
    assert.match(out.reason, /^backend 'webgpu': run\(\) on .*software adapter/);
    assert.ok(out.attention <= 1e-5, `attention differs by ${out.attention}`);
    assert.ok(out.logits <= 1e-4, `logits differ by ${out.logits}`);
    assert.deepEqual(out.top, out.expectedTop);
    assert.deepEqual(forward.problems, []);
    await forward.close();
  },
);
