// A real-model run in headless Chromium: the unbundled package in a page (its dependencies
// through the import map of models-loading.html, the loading tests' page) and a bundled module
// worker, each loading a tiny checkpoint from a folder URL of the page's own server. Both
// compute what Node computes: the same bits on wasm-simd, within rounding on the page's default
// (wasm-relaxed: fused multiply-adds).
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { createAttention } from '../../src/index.js';
import { loadModel } from '../../src/models/index.js';
import { assertClose, tinyModels } from '../support/tiny-models.mjs';
import { newPage, openBrowser, WEB_ROOT } from './harness.mjs';

const GPT_TEXT = 'Once upon a time there was a little girl named Lily.';
const BERT_TEXT = 'the cat [MASK] on the mat';

async function inNode(name, text) {
  const attention = await createAttention({ backend: 'wasm-simd', models: true });
  const model = await loadModel(join(tinyModels(), name), { attention });
  const run = await model.run(text, { returnLogits: true });
  model.dispose();
  attention.dispose();
  return run;
}

// A folder URL has no listing: the loader asks for each candidate weight file (404 for those the
// folder lacks) and reads sizes by requests it then aborts. Those are the design, not problems.
// (Chromium's console line for a 404 names no URL; the 'http 404: URL' line of each is kept.)
const problems = (page) =>
  page.problems.filter(
    (p) =>
      !p.includes('/models/') &&
      !p.startsWith('console: Failed to load resource: the server responded with a status of 404'),
  );

describe('running a real model in Chromium', () => {
  let root, browser, page;
  before(async () => {
    // The page's server root: the package's sources and dependencies, the test pages, the tiny
    // models, and the worker bundle with the .wasm files next to it (bundlers do not copy them).
    root = mkdtempSync(join(tmpdir(), 'attnlens-models-browser-'));
    for (const name of ['src', 'node_modules', 'test'])
      symlinkSync(join(WEB_ROOT, name), join(root, name));
    symlinkSync(tinyModels(), join(root, 'models'));
    const bundle = join(root, 'bundle');
    await esbuild.build({
      entryPoints: [fileURLToPath(new URL('./models-run-worker.js', import.meta.url))],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      outfile: join(bundle, 'worker.js'),
      logLevel: 'warning',
    });
    mkdirSync(join(bundle, 'wasm'));
    // The loader fetches each module as .wasm.gz next to the bundle.
    for (const flavour of ['relaxed', 'simd', 'scalar']) {
      const file = `attnlens-models-${flavour}.wasm.gz`;
      copyFileSync(join(WEB_ROOT, 'src/wasm', file), join(bundle, 'wasm', file));
    }
    browser = await openBrowser({ root });
    page = await newPage(browser.context);
    await page.goto(`${browser.base}/test/browser/models-loading.html`);
  });
  after(async () => {
    await browser?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('a page runs GPT-Neo from a folder URL on its default backend, as Node does', async () => {
    const result = await page.evaluate(async (text) => {
      const { loadModel } = await import('/src/models/index.js');
      const model = await loadModel(new URL('/models/gpt-neo.safetensors/', location.href).href);
      const run = await model.run(text, { returnLogits: true });
      const out = {
        info: model.info,
        attention: Array.from(run.attention),
        logits: Array.from(run.logits),
        predictions: run.predictions,
        ids: run.tokens.map((t) => t.id),
      };
      model.dispose();
      return out;
    }, GPT_TEXT);
    const node = await inNode('gpt-neo.safetensors', GPT_TEXT);
    assert.equal(result.info.backend, 'wasm-relaxed');
    assert.deepEqual(result.info.layerMasks, ['causal', 'causal+local:2', 'causal']);
    assert.deepEqual(
      result.ids,
      node.tokens.map((t) => t.id),
    );
    assertClose(result.attention, node.attention, { abs: 1e-5 }, 'page attention');
    assertClose(result.logits, node.logits, { abs: 1e-4, rel: 1e-5 }, 'page logits');
    assert.equal(result.predictions[0].id, node.predictions[0].id);
    assert.deepEqual(problems(page), []);
  });

  it('a module worker runs BERT on wasm-simd with the same bits as Node', async () => {
    const result = await page.evaluate(
      ({ text }) =>
        new Promise((resolve) => {
          const worker = new Worker('/bundle/worker.js', { type: 'module' });
          worker.onmessage = ({ data }) => {
            worker.terminate();
            resolve(
              data.error
                ? data
                : {
                    ...data,
                    run: {
                      ...data.run,
                      attention: Array.from(data.run.attention),
                      logits: Array.from(data.run.logits),
                    },
                  },
            );
          };
          worker.onerror = (event) => resolve({ error: event.message });
          worker.postMessage({
            folder: new URL('/models/bert.bin/', location.href).href,
            text,
            backend: 'wasm-simd',
          });
        }),
      { text: BERT_TEXT },
    );
    assert.equal(result.error, undefined, result.error);
    const node = await inNode('bert.bin', BERT_TEXT);
    assert.equal(result.info.backend, 'wasm-simd');
    assert.deepEqual(result.run.attention, Array.from(node.attention));
    assert.deepEqual(result.run.logits, Array.from(node.logits));
    // Probabilities go through Math.exp, whose last bit differs between V8 versions.
    const withoutP = (predictions) =>
      predictions.map(({ position, top }) => ({
        position,
        top: top.map(({ p, ...rest }) => rest),
      }));
    assert.deepEqual(withoutP(result.run.predictions), withoutP(node.predictions));
    result.run.predictions.forEach(({ top }, i) =>
      top.forEach(({ p }, j) => assert.ok(Math.abs(p - node.predictions[i].top[j].p) < 1e-12)),
    );
    assert.deepEqual(problems(page), []);
  });
});
