// The package as users get it: `npm pack`, install the tarball into an empty project, then import
// it from Node, type-check a consumer against its .d.ts, run its CLI, and check that every module
// the widget imports is in it, that it holds every module loader.js may load (from the loader's
// own FLAVOURS table, read from the installed copy) and its license, and load the widget from it
// in headless Chromium with a snapshot= and a model= element (the model served by a local
// server in the Hub's layout). Before that, `npm pack` of a
// copy whose src/wasm/ is missing or stale must build it or refuse (scripts/prepack.mjs).
// Installing it fetches its dependencies (@huggingface/tokenizers and fflate, used by the model
// loaders) from npm.
//
//   node scripts/pack-smoke.mjs

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { writeSnapshot } from '../src/snapshot/write.js';
import { startHubServer } from '../test/support/hub-server.mjs';
import { newPage, openBrowser } from './chromium.mjs';

const web = fileURLToPath(new URL('../', import.meta.url));
const tsc = join(web, 'node_modules', '.bin', 'tsc');
const work = mkdtempSync(join(tmpdir(), 'attnlens-pack-'));
const run = (command, args, cwd) => execFileSync(command, args, { cwd, encoding: 'utf8' });

// `npm pack` in a checkout whose src/wasm/ is missing or stale: prepack refuses, saying what to
// run, where there is no build script (or no Emscripten), and runs the build script where there
// is one. A copy of web/ stands in for the checkout; a stand-in build script (which only says it
// ran and fails) and emcc on PATH make the second case, so no real build is needed.
function packRefusals() {
  const repo = join(work, 'checkout');
  const copy = join(repo, 'web');
  cpSync(web, copy, {
    recursive: true,
    filter: (path) => !/\/(node_modules|dist)(\/|$)/.test(path.slice(web.length - 1)),
  });
  const pack = (env = {}) => {
    try {
      execFileSync('npm', ['pack', '--dry-run', '--json'], {
        cwd: copy,
        encoding: 'utf8',
        stdio: 'pipe',
        env: { ...process.env, ...env },
      });
      return { code: 0, stderr: '' };
    } catch (error) {
      return { code: error.status, stderr: error.stderr };
    }
  };
  rmSync(join(copy, 'src', 'wasm', 'attnlens-simd.wasm.gz'));
  let result = pack();
  assert.notEqual(result.code, 0, 'packing without the wasm modules must fail');
  assert.match(
    result.stderr,
    /attnlens: cannot pack:\n {2}src\/wasm\/attnlens-simd\.wasm\.gz is missing/,
  );
  assert.match(result.stderr, /build the wasm modules with \.\/scripts\/build-wasm\.sh/);

  // In a checkout: the sources (here one file) decide whether src/wasm/ is stale.
  cpSync(
    join(web, 'src', 'wasm', 'attnlens-simd.wasm.gz'),
    join(copy, 'src/wasm/attnlens-simd.wasm.gz'),
  );
  mkdirSync(join(repo, 'src'));
  writeFileSync(join(repo, 'src', 'kernel.cpp'), '// not what src/wasm/ was built from\n');
  mkdirSync(join(repo, 'scripts'));
  writeFileSync(join(repo, 'scripts', 'build-wasm.sh'), 'echo stand-in build ran >&2; exit 3\n');
  const bin = join(work, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'emcc'), '#!/bin/sh\nexit 0\n');
  chmodSync(join(bin, 'emcc'), 0o755);
  result = pack({ PATH: `${bin}:${process.env.PATH}` });
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, /src\/wasm\/ was built from other sources than these/);
  assert.match(result.stderr, /building the wasm modules first/);
  assert.match(result.stderr, /stand-in build ran/);
  assert.match(result.stderr, /build-wasm\.sh failed \(exit status 3\)/);
  rmSync(repo, { recursive: true, force: true });
  console.log('npm pack with src/wasm/ missing: refused; stale in a checkout: ran build-wasm.sh');
}

// The installed widget in headless Chromium, its modules served from the consumer project as
// they were installed (an import map names the two dependencies): one <attn-lens snapshot=...>
// (a snapshot of the tiny model's run, written here) and one <attn-lens model=...> whose Load
// button is pressed, the model served from a local server in the Hub's layout. The tarball's
// widget imports widget-models.js for both: without it they end in "Failed to fetch".
async function widgetFromTarball(project, modelFolder) {
  const id = 'attnlens/tiny-gpt2';
  const text = 'The quick brown fox';
  const hubRoot = join(work, 'hub');
  cpSync(modelFolder, join(hubRoot, ...id.split('/'), 'main'), { recursive: true });
  writeFileSync(
    join(project, 'snapshot-run.mjs'),
    `
    import { loadModel } from 'attnlens/models';
    const model = await loadModel(process.argv[2]);
    const run = await model.run(process.argv[3]);
    console.log(JSON.stringify({ info: model.info, tokens: run.tokens,
      attention: [...run.attention], predictions: run.predictions }));`,
  );
  const run = JSON.parse(
    execFileSync('node', ['snapshot-run.mjs', modelFolder, text], {
      cwd: project,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    }),
  );
  const { info, tokens } = run;
  const n = tokens.length;
  // A causal model's layers each see the keys up to the query.
  const causal = Uint8Array.from({ length: n * n }, (_, i) => (i % n <= Math.floor(i / n) ? 1 : 0));
  const all = (count) => Array.from({ length: count }, (_, i) => i);
  const snapshot = writeSnapshot(
    {
      model: { id, revision: 'main', ...info },
      text,
      pair: null,
      tokens,
      attention: Float32Array.from(run.attention),
      visible: all(info.layers).map(() => causal),
      layerMasks: info.layerMasks,
      surgery: null,
      predictions: run.predictions,
      selected: { layer: 0, head: 0 },
    },
    { layers: all(info.layers), heads: all(info.heads) },
  );
  writeFileSync(join(project, 'snapshot.json'), JSON.stringify(snapshot));
  const modules = '/node_modules';
  const imports = {
    '@huggingface/tokenizers': `${modules}/@huggingface/tokenizers/dist/tokenizers.mjs`,
    fflate: `${modules}/fflate/esm/browser.js`,
  };
  writeFileSync(
    join(project, 'widget.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>widget</title>
<link rel="icon" href="data:,">
<script type="importmap">${JSON.stringify({ imports })}</script>
<script type="module" src="${modules}/attnlens/widget/attnlens-widget.js"></script>
</head><body>
<attn-lens id="snap" snapshot="snapshot.json"></attn-lens>
<attn-lens id="live" model="${id}" text="${text}"></attn-lens>
</body></html>`,
  );
  const hub = await startHubServer({ root: hubRoot });
  const browser = await openBrowser({ root: project });
  try {
    await browser.context.addInitScript((url) => {
      globalThis.ATTNLENS_HUB_URL = url;
    }, hub.url);
    const page = await newPage(browser.context);
    await page.goto(`${browser.base}/widget.html`);
    const settled = (element, states) =>
      page.waitForFunction(
        ([element, states]) => states.includes(document.getElementById(element).dataset.state),
        [element, states],
        { timeout: 60000 },
      );
    const status = (element) =>
      page.evaluate(
        (element) => document.getElementById(element).shadowRoot.textContent.slice(0, 300),
        element,
      );
    await settled('snap', ['ready', 'error']);
    assert.equal(await page.getAttribute('#snap', 'data-state'), 'ready', await status('snap'));
    await settled('live', ['waiting-load', 'error']);
    assert.equal(
      await page.getAttribute('#live', 'data-state'),
      'waiting-load',
      await status('live'),
    );
    await page.locator('#live .load-model').click();
    await settled('live', ['ready', 'error']);
    assert.equal(await page.getAttribute('#live', 'data-state'), 'ready', await status('live'));
    const cells = await page.evaluate(
      () => document.getElementById('live').shadowRoot.querySelectorAll('table td').length,
    );
    assert.ok(cells >= n * n, `the model's heatmap table has ${cells} cells`);
    const problems = page.problems.filter((line) => !line.includes(new URL(hub.url).origin));
    assert.deepEqual(problems, [], 'no console errors or failed requests');
  } finally {
    await browser.close();
    await hub.close();
  }
}

try {
  packRefusals();
  const [packed] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], web));
  const files = packed.files.map((f) => f.path);
  for (const required of [
    'package.json',
    'README.md',
    'LICENSE',
    'index.d.ts',
    'bin/attnlens.js',
    'src/index.js',
    'src/inline.js',
    'widget/attnlens-widget.js',
    'widget/widget-models.js',
    'widget/widget-style.js',
    'widget/widget-translation.js',
    'widget/widget-picture.js',
    'widget.d.ts',
    'src/models/files/index.js',
    'src/models/tokenizer.js',
    'src/models/index.js',
    'models.d.ts',
    'src/train/index.js',
    'src/train/trainer-worker.js',
    'train.d.ts',
    // The bundled model (README.md: why the package carries it), with its licence and sha256.
    'src/models/bundled/stories260K/stories260K.bin',
    'src/models/bundled/stories260K/tok512.bin',
    'src/models/bundled/stories260K/README.md',
  ]) {
    assert.ok(files.includes(required), `the tarball lacks ${required}`);
  }
  // The widget's modules ship; its sample pages (blog, CSP test) do not.
  const shippedWidget = /^widget\/(attnlens-widget|widget-(models|style|translation|picture))\.js$/;
  const strays = files.filter(
    (f) =>
      /^(test|scripts|node_modules|demo)\//.test(f) ||
      f.includes('-eval.') ||
      (f.startsWith('widget/') && !shippedWidget.test(f)),
  );
  assert.deepEqual(strays, [], 'files that do not belong in the tarball');
  console.log(
    `tarball: ${packed.filename}, ${files.length} files, ` +
      `${(packed.size / 1024).toFixed(1)} KiB packed, ` +
      `${(packed.unpackedSize / 1024).toFixed(1)} KiB unpacked`,
  );

  const project = join(work, 'project');
  run('mkdir', ['-p', project]);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--ignore-scripts', join(work, packed.filename)],
    project,
  );

  // Every file the installed loader.js names (FLAVOURS, MODEL_FLAVOURS) and the inline entry
  // embeds.
  const installed = join(project, 'node_modules', 'attnlens');
  const { FLAVOURS, MODEL_FLAVOURS } = await import(
    pathToFileURL(join(installed, 'src', 'loader.js')).href
  );
  const modules = [
    ...Object.entries(FLAVOURS),
    ...Object.entries(MODEL_FLAVOURS).map(([flavour, entry]) => [`models ${flavour}`, entry]),
  ];
  const { EMBEDDED_WASM } = await import(
    pathToFileURL(join(installed, 'src', 'wasm-inline.js')).href
  );
  let named = 0;
  for (const [flavour, entry] of modules) {
    const urls = [entry.packagedUrl(), entry.workerUrl?.(), entry.glueUrl?.()].filter(Boolean);
    urls.push(new URL(entry.fileName, entry.packagedUrl()));
    for (const url of urls) {
      assert.ok(existsSync(fileURLToPath(url)), `the tarball lacks ${url.pathname} (${flavour})`);
      named += 1;
    }
    assert.equal(typeof (await entry.importGlue()).default, 'function', `${flavour}: its glue`);
  }
  for (const [flavour, importEmbedded] of Object.entries(EMBEDDED_WASM)) {
    assert.match((await importEmbedded()).default, /^H4sI/, `${flavour}: embedded .wasm.gz`);
  }
  console.log(
    `installed package: the ${named} files and ${modules.length} glue modules ` +
      `loader.js names, and the ${Object.keys(EMBEDDED_WASM).length} embedded modules, are there`,
  );
  // attnlens/wasm/* is the folder to copy for those who place the files themselves.
  const copied = run(
    'node',
    [
      '--input-type=module',
      '-e',
      "console.log(import.meta.resolve('attnlens/wasm/attnlens-simd.wasm.gz'))",
    ],
    project,
  ).trim();
  assert.ok(existsSync(fileURLToPath(copied)), `attnlens/wasm/* resolves to ${copied}`);
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  assert.equal(manifest.license, 'MIT');
  for (const field of ['repository', 'homepage', 'bugs', 'author'])
    assert.ok(manifest[field], field);
  assert.equal(
    readFileSync(join(installed, 'LICENSE'), 'utf8'),
    readFileSync(join(web, '..', 'LICENSE'), 'utf8'),
    "the package's LICENSE is the repository's",
  );
  assert.match(
    readFileSync(join(installed, 'LICENSE'), 'utf8'),
    /^MIT License\n\nCopyright \(c\) \d{4} the attnlens authors/,
  );

  writeFileSync(
    join(project, 'app.mjs'),
    `
    import { createAttention, analyze } from 'attnlens';
    const results = {};
    for (const backend of ['auto', 'wasm-scalar']) {
      const attn = await createAttention({ backend });
      // One query, two keys: weights softmax([1, 0]) and the output mixes the values.
      const q = new Float32Array([1, 0]);
      const k = new Float32Array([1, 0, 0, 1]);
      const v = new Float32Array([2, 0, 0, 4]);
      const options = { heads: 1, headDim: 2, scale: 1, returnWeights: true };
      const r = await attn.attention(q, k, v, options);
      results[attn.backend] = { weights: Array.from(r.weights), output: Array.from(r.output) };
      attn.dispose();
    }
    const a = await analyze('The animal was tired', { heads: 2 });
    results.tokens = a.tokens.map((t) => t.text);
    console.log(JSON.stringify(results));`,
  );
  // Node 20 validates relaxed SIMD only behind a flag: with it, 'auto' loads the relaxed module.
  const results = {
    ...JSON.parse(run('node', ['app.mjs'], project)),
    ...JSON.parse(run('node', ['--experimental-wasm-relaxed-simd', 'app.mjs'], project)),
  };
  const e = Math.E;
  for (const backend of ['wasm-relaxed', 'wasm-simd', 'wasm-scalar']) {
    const [w0, w1] = results[backend].weights;
    assert.ok(
      Math.abs(w0 - e / (e + 1)) < 1e-6 && Math.abs(w1 - 1 / (e + 1)) < 1e-6,
      JSON.stringify(results),
    );
    assert.ok(Math.abs(results[backend].output[0] - 2 * w0) < 1e-6);
  }
  assert.deepEqual(results.tokens, ['The', 'animal', 'was', 'tired']);
  console.log(
    'installed package: attention on wasm-relaxed, wasm-simd and wasm-scalar, analyze() ok',
  );

  writeFileSync(
    join(project, 'consumer.ts'),
    `
    import { createAttention, type AttentionResult } from 'attnlens';
    const attn = await createAttention();
    const x = new Float32Array(4);
    const r: AttentionResult = await attn.attention(x, x, x, { heads: 1, headDim: 4 });
    export const length: number = r.output.length;
    import { loadModel, type ModelRun } from 'attnlens/models';
    const run: ModelRun = await (await loadModel('gpt2')).run('hello');
    export const heads: Float32Array = run.attention;`,
  );
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        types: [],
      },
    }),
  );
  run(tsc, ['-p', project], project);
  console.log('installed package: its types resolve through the exports map and type-check');

  const cli = JSON.parse(
    run(
      join(project, 'node_modules', '.bin', 'attnlens'),
      ["The animal didn't cross the street", '--json'],
      project,
    ),
  );
  assert.equal(cli.backend, 'wasm-simd');
  // The bundled model, from the installed package, with no network.
  const story = JSON.parse(
    run(
      join(project, 'node_modules', '.bin', 'attnlens'),
      ['--model', 'stories260K', 'Once upon a time, there was a', '--json', '--top', '1'],
      project,
    ),
  );
  assert.equal(story.model.parameters, 260032);
  assert.equal(story.predictions[0].token, '\u2581little');
  console.log('installed package: the attnlens CLI runs, and --model stories260K from the package');

  // The widget is one script tag, so its whole static import graph must ship: esbuild follows
  // every import of the installed 'attnlens/widget' and fails on one the tarball lacks.
  const { metafile } = await esbuild.build({
    stdin: { contents: "import 'attnlens/widget';", resolveDir: project },
    absWorkingDir: project,
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform: 'browser',
    logLevel: 'silent',
  });
  const widgetModules = Object.keys(metafile.inputs).filter((path) =>
    path.startsWith('node_modules/attnlens/'),
  );
  assert.ok(widgetModules.includes('node_modules/attnlens/src/i18n/strings/zh.js'));
  assert.ok(widgetModules.includes('node_modules/attnlens/widget/widget-picture.js'));
  console.log(`installed package: the widget's ${widgetModules.length} modules all resolve`);

  // attnlens/models from the installed package (its dependencies resolved by npm): a tiny GPT-2
  // from tests/models/make_tiny_models.py, through the API and the CLI.
  const models = join(work, 'tiny-models');
  run('/usr/bin/python3', [join(web, '..', 'tests', 'models', 'make_tiny_models.py'), models], web);
  writeFileSync(
    join(project, 'model.mjs'),
    `
    import { loadModel } from 'attnlens/models';
    const model = await loadModel(process.argv[2]);
    const run = await model.run('The quick brown fox');
    console.log(JSON.stringify({ layers: model.info.layers, n: run.tokens.length,
      attention: run.attention.length, top: run.predictions.length }));`,
  );
  const modelRun = JSON.parse(
    run('node', ['model.mjs', join(models, 'gpt2.safetensors')], project),
  );
  assert.equal(modelRun.attention, modelRun.layers * 3 * modelRun.n * modelRun.n);
  assert.equal(modelRun.top, 10);
  const modelCli = JSON.parse(
    run(
      join(project, 'node_modules', '.bin', 'attnlens'),
      ['--model', join(models, 'bert.bin'), 'the cat [MASK] on the mat', '--json'],
      project,
    ),
  );
  assert.equal(modelCli.predictions[0].position, 3);
  console.log('installed package: attnlens/models runs a tiny checkpoint, by the API and the CLI');

  await widgetFromTarball(project, join(models, 'gpt2.safetensors'));
  console.log('installed package: the widget draws a snapshot and a model in Chromium');

  // attnlens/train from the installed package: its worker starts from the installed files.
  writeFileSync(
    join(project, 'train.mjs'),
    `
    import { createTrainer, SAMPLE_TEXTS } from 'attnlens/train';
    const trainer = await createTrainer({ layers: 1, heads: 2, width: 8, context: 8 });
    const result = await trainer.train(SAMPLE_TEXTS.en, { steps: 3, batchSize: 2 });
    console.log(JSON.stringify({ steps: result.steps, loss: result.loss }));
    trainer.dispose();`,
  );
  const trained = JSON.parse(run('node', ['train.mjs'], project));
  assert.equal(trained.steps, 3);
  assert.ok(Number.isFinite(trained.loss));
  console.log('installed package: attnlens/train trains in its worker');
} finally {
  rmSync(work, { recursive: true, force: true });
}
