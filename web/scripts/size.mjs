// Prints the size of what a page loads for the default build (wasm-simd): the package's JS that
// `import ... from 'attnlens'` pulls in, the Emscripten glue and the .wasm, raw and gzipped.
// Fails when the gzipped total exceeds the budget, so growth is noticed.
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

// The JS files reachable from the entry point (the glue of both flavours is a dynamic import;
// only the SIMD one is loaded by default, so it is counted separately).
const { metafile } = await esbuild.build({
  entryPoints: [fileURLToPath(new URL('src/index.js', web))],
  bundle: true, write: false, metafile: true, format: 'esm', platform: 'neutral', logLevel: 'silent',
});
const packageJs = Object.keys(metafile.inputs)
  .filter((path) => !path.includes('/wasm/attnlens-'))
  .map((path) => readFileSync(path));

const rows = [
  ['package JS (import closure of src/index.js)', Buffer.concat(packageJs)],
  ['src/wasm/attnlens-simd.js (Emscripten glue)', readFileSync(new URL('src/wasm/attnlens-simd.js', web))],
  ['src/wasm/attnlens-simd.wasm', readFileSync(new URL('src/wasm/attnlens-simd.wasm', web))],
];
let raw = 0, zipped = 0;
console.log(`${'default build (wasm-simd)'.padEnd(48)}${'raw'.padStart(12)}${'gzip -9'.padStart(12)}`);
for (const [name, bytes] of rows) {
  raw += bytes.length;
  zipped += gzip(bytes);
  console.log(`${name.padEnd(48)}${kib(bytes.length).padStart(12)}${kib(gzip(bytes)).padStart(12)}`);
}
console.log(`${'total'.padEnd(48)}${kib(raw).padStart(12)}${kib(zipped).padStart(12)}`);
const scalar = readFileSync(new URL('src/wasm/attnlens-scalar.wasm', web));
console.log(`(fallback src/wasm/attnlens-scalar.wasm: ${kib(scalar.length)} raw, ${kib(gzip(scalar))} gzip)`);
if (zipped > BUDGET_GZIP_BYTES) {
  console.error(`over budget: ${kib(zipped)} gzipped > ${kib(BUDGET_GZIP_BYTES)}`);
  process.exit(1);
}
