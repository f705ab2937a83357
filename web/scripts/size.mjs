// Prints the size of what a page loads by default: the package's JS that `import ... from
// 'attnlens'` pulls in, the Emscripten glue and the .wasm (fetched as .wasm.gz), raw and
// gzipped, for each of the two flavours a page may pick (wasm-relaxed where relaxed SIMD
// validates, else wasm-simd); then the same for attnlens/inline, whose wasm is a base64 module,
// for attnlens/models (its JS and the models' module) and the bundled model (reported, not
// budgeted).
// Fails when either gzipped total of the default entry exceeds the budget, so growth is noticed.
//
//   node scripts/size.mjs

import * as esbuild from 'esbuild';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const BUDGET_GZIP_BYTES = 150 * 1024;
const web = new URL('../', import.meta.url);
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
const gzip = (bytes) => gzipSync(bytes, { level: 9 }).length;

// The JS files a page loads by default: the static import closure of the entry point. Dynamic
// imports load on demand: the glue of each flavour (only the one picked, counted on its own row)
// and the WebGPU backend (only where a GPU object exists: reported, not counted).
async function staticImportClosure(entry) {
  const { metafile } = await esbuild.build({
    entryPoints: [fileURLToPath(new URL(entry, web))],
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform: 'neutral',
    logLevel: 'silent',
  });
  const closure = new Set();
  const pending = Object.keys(metafile.inputs).filter((path) => path.endsWith(entry));
  while (pending.length) {
    const path = pending.pop();
    if (closure.has(path)) continue;
    closure.add(path);
    for (const { path: imported, kind } of metafile.inputs[path].imports) {
      if (kind === 'import-statement' && metafile.inputs[imported]) pending.push(imported);
    }
  }
  return { metafile, closure };
}
const { metafile, closure: staticClosure } = await staticImportClosure('src/index.js');
const packageJs = [...staticClosure].map((path) => readFileSync(path));
const onDemand = Object.keys(metafile.inputs).filter(
  (path) => !staticClosure.has(path) && !path.includes('/wasm/attnlens-'),
);
const webgpuJs = Buffer.concat(onDemand.map((path) => readFileSync(path)));

function table(title, rows) {
  let raw = 0,
    zipped = 0;
  console.log(`${title.padEnd(48)}${'raw'.padStart(12)}${'gzip -9'.padStart(12)}`);
  for (const [name, bytes] of rows) {
    raw += bytes.length;
    zipped += gzip(bytes);
    console.log(
      `${name.padEnd(48)}${kib(bytes.length).padStart(12)}${kib(gzip(bytes)).padStart(12)}`,
    );
  }
  console.log(`${'total'.padEnd(48)}${kib(raw).padStart(12)}${kib(zipped).padStart(12)}\n`);
  return zipped;
}
const file = (path) => [path, readFileSync(new URL(path, web))];

let largest = 0;
for (const flavour of ['relaxed', 'simd']) {
  const zipped = table(`default build (wasm-${flavour})`, [
    ['package JS (import closure of src/index.js)', Buffer.concat(packageJs)],
    file(`src/wasm/attnlens-${flavour}.js`),
    // Fetched as it is: gzip -9 of an already gzipped file, as a compressing server would send it.
    file(`src/wasm/attnlens-${flavour}.wasm.gz`),
  ]);
  largest = Math.max(largest, zipped);
}
// The inline entry adds its two modules and, per flavour picked, the base64 of the .wasm.gz.
const inlineJs = ['src/inline.js', 'src/wasm-inline.js'].map((path) =>
  readFileSync(new URL(path, web)),
);
for (const flavour of ['relaxed', 'simd', 'scalar']) {
  table(`attnlens/inline (wasm-${flavour})`, [
    [
      'package JS (src/index.js closure + inline entry)',
      Buffer.concat([...packageJs, ...inlineJs]),
    ],
    file(`src/wasm/attnlens-${flavour}.js`),
    file(`src/wasm/inline/attnlens-${flavour}.js`),
  ]);
}
const allEmbedded = ['relaxed', 'simd', 'scalar'].map((f) =>
  readFileSync(new URL(`src/wasm/inline/attnlens-${f}.js`, web)),
);
console.log(
  `(attnlens/inline in one file, as esbuild writes it without --splitting: all three embedded ` +
    `modules, ${kib(Buffer.concat(allEmbedded).length)} raw, ` +
    `${kib(gzip(Buffer.concat(allEmbedded)))} gzip, besides the above)`,
);
console.log(
  `(WebGPU backend, imported where a GPU exists: ${onDemand.length} files, ` +
    `${kib(webgpuJs.length)} raw, ${kib(gzip(webgpuJs))} gzip)`,
);
// The threaded twins replace their flavour's glue and .wasm on cross-origin isolated pages.
for (const flavour of ['relaxed-threads', 'simd-threads']) {
  const files = ['js', 'wasm.gz', 'worker.js'].map((ext) =>
    readFileSync(new URL(`src/wasm/attnlens-${flavour}.${ext}`, web)),
  );
  const raw = files.reduce((sum, bytes) => sum + bytes.length, 0);
  const zipped = files.reduce((sum, bytes) => sum + gzip(bytes), 0);
  console.log(
    `(isolated pages: src/wasm/attnlens-${flavour}.{js,wasm.gz,worker.js}: ` +
      `${kib(raw)} raw, ${kib(zipped)} gzip)`,
  );
}
// attnlens/models: its own JS (with the tokenizer library) and the models' module, which holds
// the attention engine too and so replaces the default module on pages that run models.
const { closure: modelsClosure } = await staticImportClosure('src/models/index.js');
const modelsJs = Buffer.concat([...modelsClosure].map((path) => readFileSync(path)));
for (const flavour of ['relaxed', 'simd']) {
  table(`attnlens/models (wasm-${flavour}: not budgeted)`, [
    ['package JS (closure of src/models/index.js)', modelsJs],
    file(`src/wasm/attnlens-models-${flavour}.js`),
    file(`src/wasm/attnlens-models-${flavour}.wasm.gz`),
  ]);
}
// The bundled model (src/models/bundled/): in the package and the site, fetched only when a
// model named 'stories260K' is loaded (the README says why the package carries it).
table('bundled stories260K (by name only: not budgeted)', [
  file('src/models/bundled/stories260K/stories260K.bin'),
  file('src/models/bundled/stories260K/tok512.bin'),
]);
const scalar = readFileSync(new URL('src/wasm/attnlens-scalar.wasm.gz', web));
console.log(
  `(fallback src/wasm/attnlens-scalar.wasm.gz: ${kib(scalar.length)} raw, ` +
    `${kib(gzip(scalar))} gzip)`,
);
if (largest > BUDGET_GZIP_BYTES) {
  console.error(`over budget: ${kib(largest)} gzipped > ${kib(BUDGET_GZIP_BYTES)}`);
  process.exit(1);
}
