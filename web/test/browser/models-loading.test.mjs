// Loading a model in headless Chromium through the same Hub code path a real page uses, from
// the local server with the Hub's URL layout (another origin, as the Hub is): progress events
// with the total known up front, cancellation that stops the download, a second load served
// from Cache Storage with the server stopped, and files picked with an <input type=file>.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTokenizer } from '../../src/models/tokenizer.js';
import { loadModelFiles } from '../../src/models/files/index.js';
import { startHubServer } from '../support/hub-server.mjs';
import { writeTinyModel } from '../support/model-fixtures.mjs';
import { newPage, openBrowser, WEB_ROOT } from './harness.mjs';

const ID = 'attnlens/tiny-gpt2';
const TEXT = 'Hello world, 你好 😀';

// In the page: loads the model and reports what the test checks.
async function loadInPage({ id, hubUrl, abortInWeights = false }) {
  const { loadModelFiles } = await import('/src/models/files/index.js');
  const { createTokenizer } = await import('/src/models/tokenizer.js');
  const controller = new AbortController();
  const events = [];
  try {
    const files = await loadModelFiles(id, {
      hubUrl,
      signal: controller.signal,
      onProgress: (event) => {
        events.push(event);
        if (abortInWeights && event.file === 'model.safetensors') controller.abort();
      },
    });
    const tokenizer = await createTokenizer(files.tokenizer);
    return {
      source: files.source,
      bytes: files.bytes,
      events,
      ln: Array.from(files.tensors.readFloat32('ln_f.weight')),
      wteSum: files.tensors.readFloat32('wte.weight').reduce((a, b) => a + b, 0),
      ids: tokenizer.encode(window.TEXT).ids,
    };
  } catch (error) {
    return { error: { name: error.name, message: error.message }, events };
  }
}

describe('loading models in Chromium', () => {
  let browser, page, hub, root, weights, expectedIds;
  const origin = () => new URL(hub.url).origin;
  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'attnlens-hub-browser-'));
    weights = writeTinyModel(join(root, ...ID.split('/'), 'main'), { hidden: 256 });
    const reference = await loadModelFiles(join(root, ...ID.split('/'), 'main'));
    expectedIds = (await createTokenizer(reference.tokenizer)).encode(TEXT).ids;
    hub = await startHubServer({ root, chunkDelayMs: 5 });
    browser = await openBrowser({ root: WEB_ROOT, isolated: false });
    page = await newPage(browser.context);
    await page.goto(`${browser.base}/test/browser/models-loading.html`);
    await page.evaluate((text) => (window.TEXT = text), TEXT);
  });
  after(async () => {
    await browser?.close();
    await hub?.close().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  });
  // The Hub is another origin: its requests are expected, anything else is a problem.
  const problems = () => page.problems.filter((p) => !p.includes(origin()));

  it('cancels with an AbortError, stops the download and caches nothing', async () => {
    const result = await page.evaluate(loadInPage, {
      id: ID,
      hubUrl: hub.url,
      abortInWeights: true,
    });
    assert.equal(result.error?.name, 'AbortError', JSON.stringify(result.error));
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(hub.aborted, ['model.safetensors'], 'the server saw the download stop');
    const cached = await page.evaluate(async () =>
      (await (await caches.open('attnlens-models')).keys()).map((request) => request.url),
    );
    assert.ok(
      cached.some((url) => url.endsWith('/config.json')),
      'finished files are cached',
    );
    assert.ok(
      !cached.some((url) => url.endsWith('/model.safetensors')),
      'the cancelled one is not',
    );
  });

  it('loads with progress against a total known before the first byte', async () => {
    const result = await page.evaluate(loadInPage, { id: ID, hubUrl: hub.url });
    assert.equal(result.error, undefined, JSON.stringify(result.error));
    assert.deepEqual(result.source, { kind: 'hub', id: ID, revision: 'main', fromCache: false });
    assert.deepEqual(result.ln, Array.from(weights['ln_f.weight'].data));
    assert.deepEqual(result.ids, expectedIds);
    const { events } = result;
    const total = events[0].totalBytes;
    assert.ok(total > result.bytes, 'the total counts every file, weights included');
    assert.ok(events.every((e) => e.totalBytes === total));
    assert.equal(events.at(-1).totalLoaded, total);
    assert.ok(
      events.filter((e) => e.file === 'model.safetensors').length > 5,
      'streamed in chunks',
    );
    assert.deepEqual(problems(), []);
  });

  it('loads again from the cache with the server stopped', async () => {
    await hub.close();
    const result = await page.evaluate(loadInPage, { id: ID, hubUrl: hub.url });
    assert.equal(result.error, undefined, JSON.stringify(result.error));
    assert.equal(result.source.fromCache, true);
    assert.deepEqual(result.ln, Array.from(weights['ln_f.weight'].data));
    const sum = weights['wte.weight'].data.reduce((a, b) => a + b, 0);
    assert.equal(result.wteSum, sum);
    assert.deepEqual(result.ids, expectedIds);
    assert.equal(result.events.at(-1).totalLoaded, result.events[0].totalBytes);
    assert.deepEqual(problems(), []);
  });

  it('loads files picked with an <input type=file>', async () => {
    const folder = join(root, ...ID.split('/'), 'main');
    await page.setInputFiles(
      '#picker',
      readdirSync(folder).map((f) => join(folder, f)),
    );
    const result = await page.evaluate(async () => {
      const { loadModelFiles } = await import('/src/models/files/index.js');
      const files = await loadModelFiles(document.querySelector('#picker').files);
      return { source: files.source, names: files.tensors.names, config: files.config };
    });
    assert.deepEqual(result.source, { kind: 'files', fromCache: false });
    assert.deepEqual(result.names, Object.keys(weights));
    assert.equal(result.config.model_type, 'gpt2');
  });
});
