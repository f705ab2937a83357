// The package as users get it: `npm pack`, install the tarball into an empty project, then import
// it from Node, type-check a consumer against its .d.ts, run its CLI, and check that every module
// the widget imports is in it. Installing it fetches its dependencies (@huggingface/tokenizers and
// fflate, used by the model loaders) from npm.
//
//   node scripts/pack-smoke.mjs

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const web = fileURLToPath(new URL('../', import.meta.url));
const tsc = join(web, 'node_modules', '.bin', 'tsc');
const work = mkdtempSync(join(tmpdir(), 'attnlens-pack-'));
const run = (command, args, cwd) => execFileSync(command, args, { cwd, encoding: 'utf8' });

try {
  const [packed] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], web));
  const files = packed.files.map((f) => f.path);
  for (const required of [
    'package.json',
    'README.md',
    'index.d.ts',
    'bin/attnlens.js',
    'src/index.js',
    'src/wasm/attnlens-relaxed.js',
    'src/wasm/attnlens-relaxed.wasm',
    'src/wasm/attnlens-simd.js',
    'src/wasm/attnlens-simd.wasm',
    'src/wasm/attnlens-scalar.js',
    'src/wasm/attnlens-scalar.wasm',
    'src/wasm/attnlens-simd-threads.js',
    'src/wasm/attnlens-simd-threads.wasm',
    'src/wasm/attnlens-simd-threads.worker.js',
    'src/wasm/attnlens-relaxed-threads.js',
    'src/wasm/attnlens-relaxed-threads.wasm',
    'src/wasm/attnlens-relaxed-threads.worker.js',
    'widget/attnlens-widget.js',
    'widget/widget-style.js',
    'widget.d.ts',
    'src/models/files/index.js',
    'src/models/tokenizer.js',
  ]) {
    assert.ok(files.includes(required), `the tarball lacks ${required}`);
  }
  // The widget's module ships; its sample pages (blog, CSP test) do not.
  const strays = files.filter(
    (f) =>
      /^(test|scripts|node_modules|demo)\//.test(f) ||
      f.includes('-eval.') ||
      (f.startsWith('widget/') && !/^widget\/(attnlens-widget|widget-style)\.js$/.test(f)),
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
    export const length: number = r.output.length;`,
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
  console.log('installed package: the attnlens CLI runs');

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
  console.log(`installed package: the widget's ${widgetModules.length} modules all resolve`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
