// The package bundled as apps ship it, by esbuild, Rollup, Vite and webpack 5, each bundle run in
// headless Chromium on a cross-origin isolated page under a strict Content-Security-Policy
// (no 'unsafe-eval'):
//   - the default entry ('attnlens') where the bundler copies new URL(..., import.meta.url)
//     assets itself (Vite, webpack), and with esbuild after copying attnlens/wasm/* beside the
//     bundle, as README says; all three run large calls on two threads;
//   - the inline entry ('attnlens/inline', the wasm embedded) with every bundler and no asset
//     step: one thread, no request for a .wasm file;
//   - webpack's default production build prints no warning and writes no file: path into the
//     bundle; the esbuild bundles also run in Node.
// The package is installed as a link in a scratch project, so every bundler resolves it through
// its exports map as it would from node_modules. A new entry to check is one more item of
// ENTRIES (its module and its checks).
//
//   node scripts/bundle-smoke.mjs          (needs /usr/bin/chromium, or CHROMIUM_PATH;
//                                           KEEP=1 keeps the scratch project and its bundles)

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import nodeResolve from '@rollup/plugin-node-resolve';
import * as esbuild from 'esbuild';
import { chromium } from 'playwright-core';
import { rollup } from 'rollup';
import { build as viteBuild } from 'vite';
import webpack from 'webpack';
import { CHROMIUM_FLAGS, CHROMIUM_PATH } from './chromium.mjs';

const web = fileURLToPath(new URL('../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'attnlens-bundle-'));
const CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; img-src data:";

// One small call checked against its softmax, one large enough (THREADS_MIN_FLOPS) to be split.
const attentionCheck = (specifier) => `
  import { createAttention } from '${specifier}';
  export async function compute(backend = 'auto', threads = 2) {
    const attn = await createAttention({ backend, threads });
    const x = new Float32Array([1, 0, 0, 1]);
    const options = { heads: 1, headDim: 2, returnWeights: true };
    const { weights } = await attn.attention(x, x, x, options);
    const big = new Float32Array(4 * 64 * 32).fill(0.01);
    const { stats } = await attn.attention(big, big, big, { heads: 4, headDim: 32 });
    const result = { backend: attn.backend, threads: stats.threads, weight: weights[0] };
    attn.dispose();
    return result;
  }`;

function expectWeight({ weight }, what) {
  const e = Math.exp(1 / Math.SQRT2);
  assert.ok(Math.abs(weight - e / (e + 1)) < 1e-6, `${what}: weight ${weight}`);
}

// The attention entries: Chromium runs relaxed SIMD on `threads` threads, Node SIMD128 on one.
const attentionEntry = (specifier, { threads, fetchesWasm, skip = [] }) => ({
  code: attentionCheck(specifier),
  skip,
  inPage(result, name, wasmFiles) {
    assert.equal(result.backend, 'wasm-relaxed', `${name}: Chromium runs relaxed SIMD`);
    expectWeight(result, name);
    assert.equal(result.threads, threads, `${name}: threads of a large call`);
    if (!fetchesWasm) assert.deepEqual(wasmFiles, [], `${name}: fetched wasm files`);
    return `${result.backend}, a large call on ${result.threads} thread(s)`;
  },
  inNode(result, name) {
    assert.equal(result.backend, 'wasm-simd', `${name} in Node`);
    assert.equal(result.threads, 1, `${name}: Node runs one thread`);
    expectWeight(result, `${name} in Node`);
  },
});

// Each entry: the module (compute.js) its page, its esbuild module worker and Node run, the
// bundlers that skip it, and the checks of what compute() returned.
const ENTRIES = {
  // Threaded where its worker script was copied; Rollup copies no new URL() assets.
  default: attentionEntry('attnlens', { threads: 2, fetchesWasm: true, skip: ['rollup'] }),
  inline: attentionEntry('attnlens/inline', { threads: 1, fetchesWasm: false }),
};

// The esbuild pages also run the package in a module worker (an entry point of its own there).
const pageScript = (withWorker) => `import { compute } from './compute.js';
  const inWorker = ${!withWorker} ? null : new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    worker.onmessage = (e) => resolve(e.data);
    worker.onerror = (e) => reject(new Error(e.message));
  });
  Promise.all([compute(), inWorker]).then(
    ([result, worker]) => { document.title = JSON.stringify({ ...result, worker }); },
    (error) => { document.title = 'error: ' + error.message; });`;
const WORKER_SCRIPT = `import { compute } from './compute.js';
  compute('wasm-scalar', 1).then(postMessage);`;
const html = (script, type = 'module') =>
  '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title></title>' +
  `<script type="${type}" src="${script}"></script>`;

// The scratch project: node_modules/attnlens -> web/, and per entry a folder of sources.
function writeProject() {
  mkdirSync(join(work, 'node_modules'));
  symlinkSync(web, join(work, 'node_modules', 'attnlens'), 'dir');
  for (const [entry, { code }] of Object.entries(ENTRIES)) {
    const dir = join(work, 'src', entry);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'compute.js'), code);
    writeFileSync(join(dir, 'page.js'), pageScript(false));
    writeFileSync(join(dir, 'page-with-worker.js'), pageScript(true));
    writeFileSync(join(dir, 'worker.js'), WORKER_SCRIPT);
    writeFileSync(
      join(dir, 'node.js'),
      `import { compute } from './compute.js';
      console.log(JSON.stringify(await compute('auto', 1)));`,
    );
    writeFileSync(join(dir, 'index.html'), html('./page.js'));
  }
}

const out = (name) => join(work, 'out', name);
const built = {};

async function buildEsbuild(entry) {
  const dir = out(`esbuild-${entry}`);
  const result = await esbuild.build({
    entryPoints: ['page-with-worker.js', 'worker.js', 'node.js'].map((name) =>
      join(work, 'src', entry, name),
    ),
    absWorkingDir: work,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    outdir: dir,
    logLevel: 'warning',
  });
  assert.deepEqual(result.errors, []);
  writeFileSync(join(dir, 'index.html'), html('./page-with-worker.js'));
  if (entry === 'default') {
    // esbuild leaves new URL('./wasm/...', import.meta.url) as it is: copy the package's files.
    cpSync(join(work, 'node_modules', 'attnlens', 'src', 'wasm'), join(dir, 'wasm'), {
      recursive: true,
      filter: (path) => !path.includes('/inline'),
    });
  }
  return dir;
}

async function buildRollup(entry) {
  const dir = out(`rollup-${entry}`);
  const bundle = await rollup({
    input: join(work, 'src', entry, 'page.js'),
    plugins: [nodeResolve({ browser: true })],
    onwarn: (warning) => assert.fail(`Rollup: ${warning.message}`),
  });
  await bundle.write({ dir, format: 'es' });
  await bundle.close();
  writeFileSync(join(dir, 'index.html'), html('./page.js'));
  return dir;
}

async function buildVite(entry) {
  const dir = out(`vite-${entry}`);
  await viteBuild({
    root: join(work, 'src', entry),
    base: './',
    logLevel: 'warn',
    configFile: false,
    build: { outDir: dir, emptyOutDir: true },
  });
  return dir;
}

// One compilation for both entries (webpack is the slowest of the four).
let webpackBuild;
function buildWebpack(entry) {
  webpackBuild ??= new Promise((resolve, reject) => {
    const compiler = webpack({
      mode: 'production',
      context: work,
      entry: Object.fromEntries(
        Object.keys(ENTRIES).map((name) => [name, `./src/${name}/page.js`]),
      ),
      output: { path: out('webpack') },
    });
    compiler.run((error, stats) => {
      compiler.close(() => {});
      if (error) return reject(error);
      const { warnings, errors } = stats.toJson({ all: false, warnings: true, errors: true });
      try {
        assert.deepEqual(
          errors.map((e) => e.message),
          [],
          'webpack errors',
        );
        assert.deepEqual(
          warnings.map((w) => w.message),
          [],
          'webpack warnings',
        );
        resolve(out('webpack'));
      } catch (failure) {
        reject(failure);
      }
    });
  });
  return webpackBuild.then((dir) => {
    writeFileSync(join(dir, `${entry}.html`), html(`./${entry}.js`, 'text/javascript'));
    return { dir, page: `webpack/${entry}.html` };
  });
}

const BUNDLERS = {
  esbuild: buildEsbuild,
  rollup: buildRollup,
  vite: buildVite,
  webpack: buildWebpack,
};

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) yield* files(join(dir, entry.name));
    else yield join(dir, entry.name);
  }
}

// Nothing of the build machine in what ships: webpack used to write file: URLs of the sources.
function checkOutput(name, dir) {
  for (const file of files(dir)) {
    if (!/\.(js|html)$/.test(file)) continue;
    const text = readFileSync(file, 'utf8');
    assert.doesNotMatch(text, /file:\/\/\//, `${name}: ${file} holds a file: URL`);
    assert.doesNotMatch(text, /\bnew Function\b|\beval\(/, `${name}: ${file} uses eval`);
    assert.ok(!text.includes(work), `${name}: ${file} names the build folder`);
  }
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
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-embedder-policy': 'require-corp',
      });
      response.end(body);
    } catch {
      response.writeHead(404);
      response.end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function runInChromium(bundles) {
  const server = await serve(join(work, 'out'));
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
  });
  try {
    for (const [name, { page: path }] of Object.entries(bundles)) {
      const page = await browser.newPage();
      const problems = [];
      const wasmFiles = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('request', (r) => {
        if (/\.wasm(\.gz)?$|\.gz$/.test(new URL(r.url()).pathname)) wasmFiles.push(r.url());
      });
      await page.goto(`http://127.0.0.1:${server.address().port}/${path}`);
      await page.waitForFunction(() => document.title !== '', null, { timeout: 60000 });
      const title = await page.title();
      assert.ok(!title.startsWith('error'), `${name}: ${title}`);
      const result = JSON.parse(title);
      const said = ENTRIES[name.split('-')[1]].inPage(result, name, wasmFiles);
      if (result.worker) {
        assert.equal(result.worker.backend, 'wasm-scalar', `${name}: module worker`);
        expectWeight(result.worker, `${name} in a module worker`);
      }
      assert.deepEqual(problems, [], `${name}: console errors (a CSP violation would show here)`);
      const worker = result.worker ? ', and wasm-scalar in a module worker' : '';
      console.log(`  Chromium, ${name}: ${said}${worker}`);
      await page.close();
    }
  } finally {
    await browser.close();
    server.close();
  }
}

try {
  writeProject();
  const started = Date.now();
  for (const [bundler, build] of Object.entries(BUNDLERS)) {
    for (const [entry, { skip }] of Object.entries(ENTRIES)) {
      if (skip.includes(bundler)) continue;
      const name = `${bundler}-${entry}`;
      const t0 = Date.now();
      const made = await build(entry);
      const { dir, page } = typeof made === 'string' ? { dir: made, page: `${name}/` } : made;
      checkOutput(name, dir);
      built[name] = { dir, page };
      console.log(`${name}: built in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
  }
  for (const [entry, { inNode }] of Object.entries(ENTRIES)) {
    const name = `esbuild-${entry}`;
    const file = join(built[name].dir, 'node.js');
    inNode(JSON.parse(execFileSync(process.execPath, [file], { encoding: 'utf8' })), name);
  }
  console.log('the esbuild bundles run in Node (the default one with attnlens/wasm/* beside it)');
  await runInChromium(built);
  console.log(`bundle smoke test: ${((Date.now() - started) / 1000).toFixed(1)} s`);
} finally {
  if (!process.env.KEEP) rmSync(work, { recursive: true, force: true });
  else console.log(work);
}
