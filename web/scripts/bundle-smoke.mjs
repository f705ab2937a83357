// The package bundled with esbuild, as an app would ship it:
//   1. the browser build succeeds without Node built-ins and references both .wasm files the way
//      the loader names them (new URL('./wasm/...', import.meta.url)); esbuild does not copy
//      them, so they are copied next to the bundle as README says;
//   2. the bundle runs in Node;
//   3. a page and a module worker built from it run in headless Chromium under a strict
//      Content-Security-Policy without 'unsafe-eval' (the no-eval link is what allows that).
//
//   node scripts/bundle-smoke.mjs          (needs /usr/bin/chromium, or CHROMIUM_PATH)

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { chromium } from 'playwright-core';

const src = fileURLToPath(new URL('../src/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'attnlens-bundle-'));
const CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; img-src data:";

// One query row [1, 0] against keys [1, 0] and [0, 1] with the default scale 1/sqrt(2).
const COMPUTE = `
  import { createAttention } from 'attnlens';
  export async function compute(backend) {
    const attn = await createAttention({ backend });
    const x = new Float32Array([1, 0, 0, 1]);
    const options = { heads: 1, headDim: 2, returnWeights: true };
    const { weights } = await attn.attention(x, x, x, options);
    return { backend: attn.backend, weight: weights[0] };
  }`;
const ENTRIES = {
  'compute.js': COMPUTE,
  'app.js': `import { compute } from './compute.js';
    console.log(JSON.stringify(await compute('auto')));`,
  'page.js': `import { compute } from './compute.js';
    const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    const inWorker = new Promise((resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => reject(new Error(e.message));
    });
    Promise.all([compute('auto'), inWorker]).then(
      ([page, workerResult]) => {
        document.title = JSON.stringify({ page, worker: workerResult });
      },
      (error) => { document.title = 'error: ' + error.message; });`,
  'worker.js': `import { compute } from './compute.js';
    postMessage(await compute('wasm-scalar'));`,
};

function expectWeight({ weight }) {
  const e = Math.exp(1 / Math.SQRT2);
  assert.ok(Math.abs(weight - e / (e + 1)) < 1e-6, `weight ${weight}`);
}

async function build(out) {
  for (const [name, code] of Object.entries(ENTRIES)) writeFileSync(join(work, name), code);
  const result = await esbuild.build({
    entryPoints: ['app.js', 'page.js', 'worker.js'].map((name) => join(work, name)),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    outdir: out,
    alias: { attnlens: join(src, 'index.js') },
    logLevel: 'warning',
  });
  assert.deepEqual(result.errors, []);
  const bundle = readFileSync(join(out, 'page.js'), 'utf8');
  for (const flavour of ['relaxed', 'simd', 'scalar']) {
    assert.match(
      bundle,
      new RegExp(`new URL\\("\\./wasm/attnlens-${flavour}\\.wasm", import\\.meta\\.url\\)`),
      `the bundle references attnlens-${flavour}.wasm relative to itself`,
    );
  }
  assert.doesNotMatch(bundle, /\bnew Function\b|\beval\(/, 'no eval in the bundle');
  mkdirSync(join(out, 'wasm'));
  for (const file of ['attnlens-relaxed.wasm', 'attnlens-simd.wasm', 'attnlens-scalar.wasm']) {
    copyFileSync(join(src, 'wasm', file), join(out, 'wasm', file));
  }
  writeFileSync(
    join(out, 'index.html'),
    '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,">' +
      '<script type="module" src="page.js"></script>',
  );
  console.log(
    `esbuild browser bundle: ${(bundle.length / 1024).toFixed(1)} KiB, ` +
      'references the three .wasm files',
  );
}

function serve(root) {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };
  const server = createServer((request, response) => {
    const path = normalize(
      join(root, new URL(request.url, 'http://x').pathname.replace(/\/$/, '/index.html')),
    );
    try {
      const body = readFileSync(path);
      response.writeHead(200, {
        'content-type': types[extname(path)] ?? 'application/octet-stream',
        'content-security-policy': CSP,
      });
      response.end(body);
    } catch {
      response.writeHead(404);
      response.end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function runInChromium(out) {
  const server = await serve(out);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage();
    const problems = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => document.title !== '', null, { timeout: 30000 });
    const title = await page.title();
    assert.ok(!title.startsWith('error'), title);
    const { page: inPage, worker } = JSON.parse(title);
    assert.equal(inPage.backend, 'wasm-relaxed', 'Chromium validates relaxed SIMD: auto picks it');
    assert.equal(worker.backend, 'wasm-scalar');
    expectWeight(inPage);
    expectWeight(worker);
    assert.deepEqual(problems, [], 'console errors (a CSP violation would show here)');
    console.log(
      'headless Chromium, strict CSP: the page (wasm-relaxed) and a module worker ' +
        '(wasm-scalar) ran it',
    );
  } finally {
    await browser.close();
    server.close();
  }
}

try {
  const out = join(work, 'dist');
  await build(out);
  const inNode = JSON.parse(
    execFileSync(process.execPath, [join(out, 'app.js')], { encoding: 'utf8' }),
  );
  assert.equal(inNode.backend, 'wasm-simd');
  expectWeight(inNode);
  console.log('the bundle runs in Node with the .wasm files beside it');
  await runInChromium(out);
} finally {
  rmSync(work, { recursive: true, force: true });
}
