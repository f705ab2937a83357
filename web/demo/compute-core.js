// Everything the demo computes, as one async function per request. It runs inside
// compute-worker.js (so typing never waits for wasm), or on the main thread when a module worker
// cannot start. Results carry only typed arrays and plain objects, so they cross postMessage as
// transferables.
import {
  analyze,
  analyzePair,
  createAttention,
  detectWebGpu,
  entropy,
  tokenize,
} from '../src/index.js';
import { maskOptions } from '../src/mask-notation.js';
import { DEFAULT_HEAD_DIM, DEFAULT_HEADS, DEFAULT_SCORE, DEFAULT_SEED } from '../src/vocabulary.js';

// Every request runs at the package's default head size (the explain panel shows it as d_k).
const HEAD_DIM = DEFAULT_HEAD_DIM;
// Powers of two for the memory curve. Past a few thousand tokens the full score matrix of several
// heads no longer fits wasm32's 4 GiB address space, and the engine says so: the curve stops at
// the last length it accepts.
const COST_CURVE_LENGTHS = Array.from({ length: 12 }, (_, i) => 2 ** (i + 4));
const BENCH_REPEATS = 3;
// The first calls into a fresh wasm instance compile and tier up its functions: tens of
// milliseconds against about one for a steady run of a sentence. The engine runs these on a
// short text before the first real request, so the time the cost panel shows is a steady one.
const WARM_UP_TEXT = 'warm up the attention kernels';
const WARM_UP_SCORES = [DEFAULT_SCORE, DEFAULT_SCORE, DEFAULT_SCORE, 'cosine', 'additive'];

// One engine per backend choice ('auto', 'wasm', 'webgpu'), created on first use and warmed up;
// a failed creation is not kept, so choosing again retries.
const engines = new Map();
const engineCalls = new Map(); // backend -> calls made so far (0: the next is its first)

function countCall(backend) {
  engineCalls.set(backend, (engineCalls.get(backend) ?? 0) + 1);
}

async function warmUp(attn, backend) {
  for (const score of WARM_UP_SCORES) {
    await analyze(WARM_UP_TEXT, {
      heads: DEFAULT_HEADS,
      headDim: HEAD_DIM,
      seed: DEFAULT_SEED,
      score,
      attention: attn,
    });
    countCall(backend);
  }
  return attn;
}

// The engine for `backend`; the worker asks for the default one as soon as it loads, so the
// warm-up overlaps the page's own start.
export function engine(backend = 'auto') {
  if (!engines.has(backend)) {
    const created = createAttention({ backend }).then((attn) => warmUp(attn, backend));
    engines.set(backend, created);
    created.catch(() => engines.delete(backend));
  }
  return engines.get(backend);
}

// What the backend picker may offer: WebGPU only where an adapter exists.
export async function capabilities() {
  return { webgpu: await detectWebGpu() };
}

// Entropy (bits) of each query row of a row-major [rows, cols] weight matrix.
function rowEntropies(weights, rows, cols) {
  const out = new Float32Array(rows);
  for (let r = 0; r < rows; r++) out[r] = entropy(weights.subarray(r * cols, (r + 1) * cols));
  return out;
}

async function runOnce(params, mask, attn, rowsHint, colsHint) {
  countCall(params.backend ?? 'auto');
  const options = {
    heads: params.heads,
    headDim: HEAD_DIM,
    seed: params.seed,
    granularity: params.granularity,
    score: params.score,
    temperature: params.temperature,
    attention: attn,
    ...maskOptions(mask, rowsHint, colsHint),
  };
  return params.mode === 'cross'
    ? analyzePair(params.source, params.text, options)
    : analyze(params.text, options);
}

async function costCurve(attn, shape) {
  const curve = [];
  for (const n of COST_CURVE_LENGTHS) {
    try {
      curve.push({
        n,
        materialized: await attn.workingSetBytes({
          ...shape,
          queryLength: n,
          keyLength: n,
          strategy: 'materialized',
        }),
        streaming: await attn.workingSetBytes({
          ...shape,
          queryLength: n,
          keyLength: n,
          strategy: 'streaming',
        }),
      });
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      break;
    }
  }
  return curve;
}

// params: { mode, text, source, heads, seed, granularity, score, temperature, mask, compare,
// backend } (mask/compare: parsed mask models from mask-notation.js; compare may be null)
export async function computeView(params) {
  const attn = await engine(params.backend);
  const queryTokens = tokenize(params.text, { granularity: params.granularity });
  const keyTokens =
    params.mode === 'cross'
      ? tokenize(params.source, { granularity: params.granularity })
      : queryTokens;
  if (!queryTokens.length || !keyTokens.length) {
    return { empty: true, rowTokens: queryTokens, colTokens: keyTokens };
  }
  const rows = queryTokens.length;
  const cols = keyTokens.length;
  const warm = (engineCalls.get(params.backend ?? 'auto') ?? 0) > 0;
  const primary = await runOnce(params, params.mask, attn, rows, cols);
  const rowTokens = params.mode === 'cross' ? primary.targetTokens : primary.tokens;
  const colTokens = params.mode === 'cross' ? primary.sourceTokens : primary.tokens;
  // Every head shares one mask here (no per-head key lengths), so head 0's stands for all.
  const mask = primary.heads[0].mask;
  const heads = primary.heads.map((head) => ({
    weights: head.weights,
    scores: head.scores,
    entropy: rowEntropies(head.weights, rows, cols),
  }));
  let compare = null;
  if (params.compare) {
    const second = await runOnce(params, params.compare, attn, rows, cols);
    compare = {
      mask: second.heads[0].mask,
      heads: second.heads.map((head) => ({
        weights: head.weights,
        entropy: rowEntropies(head.weights, rows, cols),
      })),
    };
  }
  const shape = {
    heads: params.heads,
    queryLength: rows,
    keyLength: cols,
    headDim: HEAD_DIM,
    valueDim: HEAD_DIM,
  };
  const cost = {
    materialized: await attn.workingSetBytes({ ...shape, strategy: 'materialized' }),
    streaming: await attn.workingSetBytes({ ...shape, strategy: 'streaming' }),
    curve: await costCurve(attn, shape),
  };
  return {
    empty: false,
    rowTokens: rowTokens.map(({ text, start, end }) => ({ text, start, end })),
    colTokens: colTokens.map(({ text, start, end }) => ({ text, start, end })),
    heads,
    mask,
    compare,
    q: primary.q,
    k: primary.k,
    v: primary.v,
    headDim: HEAD_DIM,
    // analyze()'s own timing: `engineMs` is the attention kernels alone, `totalMs` the whole
    // analysis (tokenize, embed, kernels, masks); `warm` is false for an engine's first call.
    timing: { engineMs: primary.timing.ms, totalMs: primary.timing.totalMs, warm },
    backend: primary.backend ?? attn.backend,
    cost,
  };
}

// Random Q/K/V of a long sequence through both strategies with the current mask: the measured
// face of O(N^2) memory versus the tiled kernel (and of the tiles a sparse mask lets it skip).
export async function benchmark({ heads, length, mask, temperature, backend }) {
  const attn = await engine(backend);
  const size = heads * length * HEAD_DIM;
  const fill = (seed) => {
    const a = new Float32Array(size);
    let s = seed >>> 0;
    for (let i = 0; i < size; i++) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      a[i] = s / 4294967296 - 0.5;
    }
    return a;
  };
  const q = fill(1);
  const k = fill(2);
  const v = fill(3);
  const options = { heads, headDim: HEAD_DIM, temperature, ...maskOptions(mask, length, length) };
  const results = {};
  let ran = attn.backend;
  for (const strategy of ['materialized', 'streaming']) {
    let best = Infinity;
    let stats;
    for (let i = 0; i < BENCH_REPEATS; i++) {
      const started = performance.now();
      const r = await attn.attention(q, k, v, { ...options, strategy });
      best = Math.min(best, performance.now() - started);
      stats = r.stats;
      ran = r.stats.backend;
    }
    results[strategy] = {
      ms: best,
      tilesVisited: stats.tilesVisited,
      tilesTotal: stats.tilesTotal,
      bytes: await attn.workingSetBytes({
        heads,
        queryLength: length,
        keyLength: length,
        headDim: HEAD_DIM,
        valueDim: HEAD_DIM,
        strategy,
      }),
    };
  }
  return { length, heads, headDim: HEAD_DIM, backend: ran, ...results };
}

// The typed arrays of a result, for postMessage's transfer list.
export function transferables(result) {
  const buffers = new Set();
  const visit = (value) => {
    if (!value || typeof value !== 'object') return;
    if (ArrayBuffer.isView(value)) buffers.add(value.buffer);
    else for (const item of Array.isArray(value) ? value : Object.values(value)) visit(item);
  };
  visit(result);
  return [...buffers];
}
