// The built site offline: once the demo has been opened, its service worker (web/site/, written
// to sw.js by scripts/build-site.mjs) serves it with the server stopped; an update is never
// served stale, old site caches go, the model loader's cache and other origins are left alone;
// and the bundled model (stories260K) loads and runs with the network off.
// Builds a site of its own (so it can change a file and regenerate sw.js as a new build would).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/static-server.mjs';
import { writeServiceWorker } from '../../../scripts/site-offline.mjs';
import { CHROMIUM_FLAGS, CHROMIUM_PATH, newPage, REPO_ROOT } from '../../scripts/chromium.mjs';
import { artifact } from './harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'attnlens-offline-'));
const site = join(work, 'site');
let server;
let port;
let context;

async function serve() {
  server = await startServer({ root: site, port: port ?? 0 });
  port = server.address().port;
}
async function stopServer() {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}
async function until(condition, timeoutMs) {
  for (const start = Date.now(); !(await condition());) {
    if (Date.now() - start > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
const siteCaches = (page) => page.evaluate(async () => (await caches.keys()).sort());

async function openDemo(page, search = '') {
  await page.goto(`http://127.0.0.1:${port}/demo/${search}`);
  await page.waitForFunction(() => Number(document.body.dataset.computed) >= 1, null, {
    timeout: 30000,
  });
}

describe('the built site offline', () => {
  before(async () => {
    execFileSync(process.execPath, [join(REPO_ROOT, 'scripts/build-site.mjs'), '--out', site]);
    await serve();
    context = await chromium.launchPersistentContext(join(work, 'profile'), {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_FLAGS,
    });
    context.attnlensBase = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    await context?.close();
    if (server?.listening) await stopServer();
    rmSync(work, { recursive: true, force: true });
  });

  it('serves the demo, computing, with the server stopped; updates are never stale', async () => {
    const page = await newPage(context);
    await openDemo(page, '?text=offline+first');
    await page.evaluate(async () => {
      await navigator.serviceWorker.ready;
      if (!navigator.serviceWorker.controller) {
        await new Promise((resolve) => {
          navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true });
        });
      }
      // What the model loader keeps must outlive every site update.
      await (await caches.open('attnlens-models')).put('/model-file', new Response('weights'));
    });
    const [firstCache] = (await siteCaches(page)).filter((name) =>
      name.startsWith('attnlens-site-'),
    );
    assert.ok(firstCache, 'the site cache was made');
    // The models module and the bundled model are precached (the page offers stories260K
    // offline); an uncompressed .wasm is not: the worker keeps it when first fetched.
    for (const precached of [
      '../src/wasm/attnlens-models-scalar.wasm.gz',
      '../src/models/bundled/stories260K/stories260K.bin',
    ]) {
      const url = new URL(precached, `${context.attnlensBase}/demo/`).href;
      assert.ok(await page.evaluate((u) => caches.match(u).then(Boolean), url), precached);
    }
    const modelsModule = '../src/wasm/attnlens-models-scalar.wasm';
    const cachedBefore = await page.evaluate(
      (url) => caches.match(url).then(Boolean),
      modelsModule,
    );
    assert.equal(cachedBefore, false, 'not precached');
    const onlineBytes = await page.evaluate(
      (url) => fetch(url).then(async (r) => (await r.arrayBuffer()).byteLength),
      modelsModule,
    );
    assert.deepEqual(page.problems, []);

    await stopServer();
    const offlineBytes = await page.evaluate(
      (url) => fetch(url).then(async (r) => (await r.arrayBuffer()).byteLength),
      modelsModule,
    );
    assert.equal(offlineBytes, onlineBytes, 'served from the cache once fetched');
    await page.reload();
    await page.waitForFunction(() => Number(document.body.dataset.computed) >= 1, null, {
      timeout: 30000,
    });
    // The state in the query string still applies offline, and the engine computed it.
    assert.equal(await page.inputValue('#main-text'), 'offline first');
    const offlineTitle = await page.title();
    assert.ok(offlineTitle.length > 0);
    // Another origin is not the worker's business: with its server gone it simply fails.
    const foreign = await page.evaluate(() =>
      fetch('http://localhost:9/anything').then(
        () => 'answered',
        () => 'failed',
      ),
    );
    assert.equal(foreign, 'failed');

    // A new build: one page changed, so sw.js changes; online, the new page is what comes.
    const pagePath = join(site, 'demo', 'index.html');
    writeFileSync(pagePath, readFileSync(pagePath, 'utf8').replace('<title>', '<title>updated · '));
    const { version } = writeServiceWorker(site);
    await serve();
    await page.reload();
    await page.waitForFunction(() => document.title.startsWith('updated · '), null, {
      timeout: 10000,
    });
    // The new worker fills its own cache, then deletes the old one; the models' cache stays.
    const expected = ['attnlens-models', `attnlens-site-${version}`];
    await until(async () => (await siteCaches(page)).join() === expected.join(), 30000);
    assert.deepEqual(await siteCaches(page), expected);

    // And the new version is what is served offline.
    await stopServer();
    await page.reload();
    await page.waitForFunction(() => Number(document.body.dataset.computed) >= 1, null, {
      timeout: 30000,
    });
    assert.ok((await page.title()).startsWith('updated · '));
    assert.equal(
      await page.evaluate(async () => (await caches.match('/model-file'))?.text()),
      'weights',
    );
  });

  it('runs the bundled stories260K with the network off, never having loaded a model', async () => {
    // The server is stopped (the step above ends offline); this page has never run a model.
    const page = await newPage(context);
    await page.goto(`${context.attnlensBase}/demo/?lang=en`);
    await page.waitForFunction(() => Number(document.body.dataset.computed) >= 1, null, {
      timeout: 30000,
    });
    await page.click('label:has(input[name="model-kind"][value="real"])');
    const first = page.locator('#model-list .model-option').first();
    assert.equal(await first.getAttribute('data-model'), 'stories260K');
    assert.match(await first.textContent(), /bundled, 1 MB, instant/);
    await page.waitForFunction(() => Number(document.body.dataset.modelRuns ?? 0) >= 1, null, {
      timeout: 30000,
    });
    assert.match(
      await page.textContent('.model-status.is-ready'),
      /^Loaded: llama · 5 layers × 8 heads .* It comes with the page: no download, offline too\.$/,
    );
    assert.equal(
      await page.inputValue('#main-text'),
      'Once upon a time, there was a little girl named Lily. She',
    );
    await page.click('#tab-model');
    assert.equal(await page.locator('#model-grid .al-model-cell').count(), 5 * 8);
    // The trained model's next token, as run.c's semantics give it (the Node tests check the
    // numbers): "▁lo" (id 401, the start of "loved") after "... Lily. She".
    const top = page.locator('#predictions-body .al-prediction').first();
    assert.equal(await top.getAttribute('data-id'), '401');
    // The token strip's word mark: "·lo" is " lo", a new word.
    assert.equal(await top.locator('.al-prediction-token').textContent(), '·lo');
    await page.screenshot({ path: artifact('offline-stories260K.png'), fullPage: true });
    // The other catalog models ask the Hub for their sizes, which fails offline: by design.
    assert.deepEqual(
      page.problems.filter((line) => !line.includes('https://huggingface.co/')),
      [],
    );
  });
});
