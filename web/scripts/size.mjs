// Prints the size of what a page loads by default: the package's JS that `import ... from
// 'attnlens'` pulls in, the Emscripten glue and the .wasm, raw and gzipped, for each of the two
// flavours a page may pick (wasm-relaxed where relaxed SIMD validates, else wasm-simd).
// Fails when either gzipped total exceeds the budget, so growth is noticed.
//
//   node scripts/size.mjs

import * as esbuild from 'esbuild';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

// 150 KiB until the argument rules, the disposed-call checks and the retired memory of
// allocate() (about 5 KiB of source, gzipped, comments included) took the default build to 152.
const BUDGET_GZIP_BYTES = 155 * 1024;
const web = new URL('../', import.meta.url);
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
const gzip = (bytes) => gzipSync(bytes, { level: 9 }).length;

// The JS files a page loads by default: the static import closure of the entry point. Dynamic
// imports load on demand: the glue of each flavour (only the one picked, counted on its own row)
// and the WebGPU backend (only where a GPU object exists: reported, not counted).
const { metafile } = await esbuild.build({
  entryPoints: [fileURLToPath(new URL('src/index.js', web))],
  bundle: true,
  write: false,
  metafile: true,
  format: 'esm',
  platform: 'neutral',
  logLevel: 'silent',
});
const staticClosure = new Set();
const pending = Object.keys(metafile.inputs).filter((path) => path.endsWith('src/index.js'));
while (pending.length) {
  const path = pending.pop();
  if (staticClosure.has(path)) continue;
  staticClosure.add(path);
  for (const { path: imported, kind } of metafile.inputs[path].imports) {
    if (kind === 'import-statement' && metafile.inputs[imported]) pending.push(imported);
  }
}
const packageJs = [...staticClosure].map((path) => readFileSync(path));
const onDemand = Object.keys(metafile.inputs).filter(
  (path) => !staticClosure.has(path) && !path.includes('/wasm/attnlens-'),
);
const webgpuJs = Buffer.concat(onDemand.map((path) => readFileSync(path)));

let largest = 0;
for (const flavour of ['relaxed', 'simd']) {
  const rows = [
    ['package JS (import closure of src/index.js)', Buffer.concat(packageJs)],
    [
      `src/wasm/attnlens-${flavour}.js (Emscripten glue)`,
      readFileSync(new URL(`src/wasm/attnlens-${flavour}.js`, web)),
    ],
    [
      `src/wasm/attnlens-${flavour}.wasm`,
      readFileSync(new URL(`src/wasm/attnlens-${flavour}.wasm`, web)),
    ],
  ];
  let raw = 0,
    zipped = 0;
  console.log(
    `${`default build (wasm-${flavour})`.padEnd(48)}${'raw'.padStart(12)}${'gzip -9'.padStart(12)}`,
  );
  for (const [name, bytes] of rows) {
    raw += bytes.length;
    zipped += gzip(bytes);
    console.log(
      `${name.padEnd(48)}${kib(bytes.length).padStart(12)}${kib(gzip(bytes)).padStart(12)}`,
    );
  }
  console.log(`${'total'.padEnd(48)}${kib(raw).padStart(12)}${kib(zipped).padStart(12)}\n`);
  largest = Math.max(largest, zipped);
}
console.log(
  `(WebGPU backend, imported where a GPU exists: ${onDemand.length} files, ` +
    `${kib(webgpuJs.length)} raw, ${kib(gzip(webgpuJs))} gzip)`,
);
// The threaded twins replace their flavour's glue and .wasm on cross-origin isolated pages.
for (const flavour of ['relaxed-threads', 'simd-threads']) {
  const files = ['js', 'wasm', 'worker.js'].map((ext) =>
    readFileSync(new URL(`src/wasm/attnlens-${flavour}.${ext}`, web)),
  );
  const raw = files.reduce((sum, bytes) => sum + bytes.length, 0);
  const zipped = files.reduce((sum, bytes) => sum + gzip(bytes), 0);
  console.log(
    `(isolated pages: src/wasm/attnlens-${flavour}.{js,wasm,worker.js}: ` +
      `${kib(raw)} raw, ${kib(zipped)} gzip)`,
  );
}
const scalar = readFileSync(new URL('src/wasm/attnlens-scalar.wasm', web));
console.log(
  `(fallback src/wasm/attnlens-scalar.wasm: ${kib(scalar.length)} raw, ${kib(gzip(scalar))} gzip)`,
);
if (largest > BUDGET_GZIP_BYTES) {
  console.error(`over budget: ${kib(largest)} gzipped > ${kib(BUDGET_GZIP_BYTES)}`);
  process.exit(1);
}
