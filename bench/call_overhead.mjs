// Call overhead of the embind module linked two ways: -sDYNAMIC_EXECUTION=0 (no eval; what
// web/ ships) and embind's default eval-generated invokers. Prints numbers, asserts nothing.
//
//   node bench/call_overhead.mjs [bindings dir]     (after ./scripts/build-wasm.sh)
//
// Rows: a raw call that does no work (_version), a raw _attention on a 1x1x1 problem (reads its
// call block: shape, options and tensors), the public attn.attention() on the same problem
// (checks, call block, copies in and out), and a mid-size attention where the kernels dominate.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Attention } from '../web/src/attention.js';
import { Backends } from '../web/src/backend.js';
import { ARRAY_SLOT, BLOCK_LENGTH, SLOT } from '../web/src/call-block.js';
import { WasmBackend } from '../web/src/wasm-backend.js';
import { tensor } from '../web/scripts/random.js';

const dir = process.argv[2]
  ? pathToFileURL(`${resolve(process.argv[2])}/`)
  : new URL('../build/wasm-simd/bindings/', import.meta.url);

async function load(name) {
  const { default: factory } = await import(new URL(`${name}.js`, dir).href);
  const compiled = await WebAssembly.compile(readFileSync(new URL(`${name}.wasm`, dir)));
  return factory({
    instantiateWasm(imports, receive) {
      WebAssembly.instantiate(compiled, imports).then((instance) => receive(instance, compiled));
      return {};
    },
  });
}

// Microseconds per call of one round of `calls` calls.
async function round(calls, fn) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await fn();
  return Number(process.hrtime.bigint() - start) / 1e3 / calls;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

// The calls to time on one module: name -> [calls per round, fn].
async function cases(name) {
  const module = await load(name);
  const backend = new WasmBackend(module, name);
  const attn = new Attention(new Backends('wasm', backend, null, {}));

  const one = new Float32Array([0.5]);
  // q, k, v and output of one element each, then a call block describing a causal 1x1x1 call.
  const tensors = module._malloc(16);
  module.HEAPF32.set([0.5, 0.5, 0.5, 0], tensors >> 2);
  const block = new Float64Array(BLOCK_LENGTH);
  for (const [name, value] of Object.entries({
    heads: 1,
    queryLength: 1,
    keyLength: 1,
    headDim: 1,
    valueDim: 1,
    scale: NaN,
    temperature: 1,
    causal: 1,
  }))
    block[SLOT[name]] = value;
  ['q', 'k', 'v', 'output'].forEach((name, i) => {
    block[ARRAY_SLOT[name]] = tensors + 4 * i;
    block[ARRAY_SLOT[name] + 1] = 1;
  });
  const address = module._malloc(block.byteLength);
  module.HEAPF64.set(block, address >> 3);

  const h = 8,
    n = 128,
    d = 64;
  const q = tensor(h * n * d, 1),
    k = tensor(h * n * d, 2),
    v = tensor(h * n * d, 3);
  return {
    '_version() (no work)': [100000, () => module._version()],
    '_attention raw, 1x1x1': [20000, () => module._attention(address)],
    'attn.attention(), 1x1x1': [
      20000,
      () => attn.attention(one, one, one, { heads: 1, headDim: 1, causal: true }),
    ],
    'attn.attention(), H8 N128 D64': [
      50,
      () => attn.attention(q, k, v, { heads: h, headDim: d, causal: true }),
    ],
  };
}

const flavour = process.argv[3] ?? 'simd';
const builds = {
  'no eval (shipped)': await cases(`attnlens-${flavour}`),
  'eval invokers': await cases(`attnlens-${flavour}-eval`),
};
const ROUNDS = 9;
console.log(
  `call overhead, wasm-${flavour}, microseconds per call (median of ${ROUNDS} interleaved rounds)`,
);
console.log(
  `${'call'.padEnd(32)}${Object.keys(builds)
    .map((b) => b.padStart(20))
    .join('')}`,
);
for (const row of Object.keys(builds['no eval (shipped)'])) {
  const times = Object.fromEntries(Object.keys(builds).map((b) => [b, []]));
  // Alternating the builds round by round keeps JIT warm-up and machine load from favouring one.
  for (let r = 0; r < ROUNDS; r++) {
    for (const [build, calls] of Object.entries(builds))
      times[build].push(await round(...calls[row]));
  }
  console.log(
    `${row.padEnd(32)}${Object.values(times)
      .map((t) => median(t).toFixed(2).padStart(20))
      .join('')}`,
  );
}
