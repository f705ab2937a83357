// What the Chromium test runs inside a page served from http://127.0.0.1: WebGPU (SwiftShader
// under --enable-unsafe-webgpu) against wasm over masks, scores, shapes, modern attention's
// options and both strategies, and the fallbacks. Returns plain numbers and strings;
// chromium.test.mjs asserts on them.

import { createAttention, detectWebGpu } from '../../src/index.js';
// The seeded inputs of ../support/helpers.js (which needs Node), from the module it re-exports.
import { tensor } from '../../scripts/random.js';

// The largest |actual - expected| / (1 + |expected|) over every returned array.
function worstError(actual, expected) {
  let worst = 0;
  for (const key of ['output', 'weights', 'scores', 'q', 'k', 'v']) {
    if (!expected[key]) continue;
    if (!actual[key] || actual[key].length !== expected[key].length) return Infinity;
    for (let i = 0; i < expected[key].length; i++) {
      const error = Math.abs(actual[key][i] - expected[key][i]) / (1 + Math.abs(expected[key][i]));
      if (!(error <= worst)) worst = Number.isNaN(error) ? Infinity : error;
    }
  }
  return worst;
}

const keyValid = Uint8Array.from({ length: 40 }, (_, j) => (j % 7 === 3 ? 0 : 1));
const custom = Uint8Array.from({ length: 40 * 40 }, (_, i) => ((i * 13) % 5 === 0 ? 0 : 1));
custom.fill(0, 5 * 40, 6 * 40); // query 5 sees nothing
const additive = {
  hidden: 5,
  wQuery: tensor(2 * 5 * 3, 20, 0.8),
  wKey: tensor(2 * 5 * 3, 21, 0.8),
  v: tensor(2 * 5, 22),
};

// [name, heads, Nq, Nk, options]
const CASES = [
  [
    'causal window with global tokens',
    2,
    40,
    40,
    { causal: true, window: { before: 3 }, globalTokens: [0, 30] },
  ],
  [
    'dilated window, temperature 0.5',
    2,
    40,
    40,
    { window: { before: 2, after: 2, dilation: 3 }, temperature: 0.5 },
  ],
  ['strided and fixed sparse', 2, 40, 40, { sparse: { pattern: 'fixed', stride: 6, summary: 2 } }],
  [
    'key padding, key flags and a custom mask',
    2,
    40,
    40,
    { keyLengths: [33, 0], keyValid, mask: custom },
  ],
  ['cosine score', 2, 40, 40, { score: 'cosine', causal: true }],
  ['additive score', 2, 40, 40, { score: 'additive', additive, window: 4 }],
  ['N = 1', 2, 1, 1, { causal: true }],
  ['Nq != Nk', 2, 9, 40, { window: 5, scale: 0.7 }],
  [
    'after past keys: ALiBi, softcap and a bias, causal',
    2,
    9,
    40,
    { queryOffset: 31, causal: true, alibi: true, softcap: 2, bias: tensor(9 * 40, 23, 2) },
  ],
  ['topK and lsh', 2, 40, 40, { topK: 6, lsh: { buckets: 4, rounds: 2, seed: 5 } }],
];

/** Every case on WebGPU and wasm, streaming and materialized (with weights and scores). */
export async function agreement() {
  const gpu = await createAttention({ backend: 'webgpu' });
  const wasm = await createAttention({ backend: 'wasm' });
  const results = [];
  for (const [name, heads, nq, nk, options] of CASES) {
    const q = tensor(heads * nq * 3, nq + 1, 1.5);
    const k = tensor(heads * nk * 3, nk + 2, 1.5);
    const v = tensor(heads * nk * 5, nk + 3);
    for (const extra of [{}, { returnWeights: true, returnScores: true }]) {
      const o = { heads, headDim: 3, valueDim: 5, ...options, ...extra };
      const r = await gpu.attention(q, k, v, o);
      results.push({
        name,
        backend: r.stats.backend,
        strategy: r.stats.strategy,
        error: worstError(r, await wasm.attention(q, k, v, o)),
      });
    }
  }
  const x = tensor(9 * 6, 30);
  const w = {
    wQuery: tensor(6 * 6, 31, 0.5),
    wKey: tensor(6 * 6, 32, 0.5),
    wValue: tensor(6 * 10, 33, 0.5),
    wOut: tensor(10 * 4, 34, 0.5),
  };
  const mh = {
    heads: 2,
    headDim: 3,
    valueDim: 5,
    causal: true,
    returnWeights: true,
    returnProjections: true,
  };
  const r = await gpu.multiHead(x, w, mh);
  results.push({
    name: 'multiHead',
    backend: r.stats.backend,
    strategy: r.stats.strategy,
    error: worstError(r, await wasm.multiHead(x, w, mh)),
  });
  const info = { webgpu: gpu.webgpu, results };
  gpu.dispose();
  wasm.dispose();
  return info;
}

/** 'auto' on a software adapter, a gpu with no adapter, and a lost device. */
export async function fallbacks() {
  const q = tensor(2 * 16 * 3, 1);
  const k = tensor(2 * 16 * 3, 2);
  const v = tensor(2 * 16 * 5, 3);
  const o = { heads: 2, headDim: 3, valueDim: 5, causal: true };
  const wasm = await createAttention({ backend: 'wasm' });
  const expected = await wasm.attention(q, k, v, o);
  const same = (r) => worstError(r, expected);
  const out = { detected: await detectWebGpu() };

  const auto = await createAttention();
  out.autoDefault = {
    backend: auto.backend,
    unavailable: auto.webgpuUnavailable,
    error: same(await auto.attention(q, k, v, o)),
  };
  auto.dispose();

  const noAdapter = { requestAdapter: async () => null };
  out.noAdapter = await createAttention({ backend: 'webgpu', webgpu: { gpu: noAdapter } }).then(
    () => 'created',
    (e) => e.message,
  );
  const autoNoAdapter = await createAttention({
    webgpu: { gpu: noAdapter, allowSoftwareAdapter: true },
  });
  out.autoNoAdapter = {
    backend: autoNoAdapter.backend,
    error: same(await autoNoAdapter.attention(q, k, v, o)),
  };
  autoNoAdapter.dispose();

  const adapter = await navigator.gpu.requestAdapter();
  const device = await adapter.requestDevice();
  const lost = await createAttention({
    webgpu: { device, minFlops: 0, allowSoftwareAdapter: true },
  });
  const before = (await lost.attention(q, k, v, o)).stats.backend;
  const events = [];
  lost.addEventListener('backendchange', (e) =>
    events.push({ from: e.from, to: e.to, reason: e.reason }),
  );
  device.destroy();
  const after = await lost.attention(q, k, v, o);
  out.deviceLoss = {
    before,
    after: after.stats.backend,
    error: same(after),
    events,
    backend: lost.backend,
  };
  lost.dispose();
  wasm.dispose();
  return out;
}
