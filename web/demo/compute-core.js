// Everything the demo computes, as one async function per request. It runs inside
// compute-worker.js (so typing never waits for wasm), or on the main thread when a module worker
// cannot start. Results carry only typed arrays and plain objects, so they cross postMessage as
// transferables.
import { analyze, analyzePair, createAttention, detectWebGpu, tokenize } from '../src/index.js';
import { maskOptions } from '../src/mask-notation.js';
import { DEFAULT_HEAD_DIM, DEFAULT_HEADS, DEFAULT_SCORE, DEFAULT_SEED } from '../src/vocabulary.js';
import { headSummaries } from './head-summaries.js';
import { keptKeys, selectsKeys } from '../src/interpret/kept-keys.js';

// The warm-up runs at the package's default head size; requests bring the page's d_k.
const HEAD_DIM = DEFAULT_HEAD_DIM;
// The score spread is measured on at most this many tokens of each text at every d_k the page
// offers: enough for a stable spread, cheap enough at d_k = 128 with 8 heads.
const SPREAD_TOKENS = 64;
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

async function runOnce(params, mask, attn, rowsHint, colsHint) {
  countCall(params.backend ?? 'auto');
  const options = {
    heads: params.heads,
    headDim: params.headDim,
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

// What top-k and LSH left out of the softmax, over every head: of the (query, key) pairs the
// mask lets through, how many the softmax saw. null when the mask selects nothing.
function selectionCount(mask, selection) {
  if (!selection) return null;
  let visible = 0;
  let kept = 0;
  for (const head of selection.heads) {
    for (let i = 0; i < mask.length; i++) {
      visible += mask[i] ? 1 : 0;
      kept += head.kept[i];
    }
  }
  return { visible, kept };
}

// One run's heads as the views take them: the summaries, and each head's own visibility where
// top-k or LSH chose keys per query (`mask`: what the softmax saw; `leftOut`: visible keys they
// dropped), with the LSH buckets for the explain panel.
function viewHeads(run, selectionMask, params, rows, cols) {
  // Every head shares one mask here (no per-head key lengths), so head 0's stands for all.
  const mask = run.heads[0].mask;
  const selection = keptKeys({
    mask,
    heads: run.heads,
    q: run.q,
    k: run.k,
    rows,
    cols,
    headDim: params.headDim,
    selection: selectionMask,
  });
  const heads = headSummaries(run.heads, mask, rows, cols).map((head, h) => ({
    ...head,
    mask: selection ? selection.heads[h].kept : mask,
    leftOut: selection ? selection.heads[h].leftOut : null,
  }));
  return { mask, heads, selection, buckets: selection?.buckets ?? null };
}

// params: { mode, text, source, heads, headDim, seed, granularity, score, temperature, mask,
// compare, backend } (mask/compare: parsed mask models from mask-notation.js; compare may be null)
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
  const { mask, heads, selection, buckets } = viewHeads(primary, params.mask, params, rows, cols);
  let compare = null;
  if (params.compare) {
    const second = await runOnce(params, params.compare, attn, rows, cols);
    const view = viewHeads(second, params.compare, params, rows, cols);
    compare = { mask: view.mask, heads: view.heads, buckets: view.buckets };
  }
  const shape = {
    heads: params.heads,
    queryLength: rows,
    keyLength: cols,
    headDim: params.headDim,
    valueDim: params.headDim,
  };
  const cost = {
    materialized: await attn.workingSetBytes({ ...shape, strategy: 'materialized' }),
    streaming: await attn.workingSetBytes({ ...shape, strategy: 'streaming' }),
    curve: await costCurve(attn, shape),
    selection: selectionCount(mask, selection),
  };
  return {
    empty: false,
    rowTokens: rowTokens.map(({ text, start, end }) => ({ text, start, end })),
    colTokens: colTokens.map(({ text, start, end }) => ({ text, start, end })),
    heads,
    mask,
    buckets,
    compare,
    q: primary.q,
    k: primary.k,
    v: primary.v,
    headDim: params.headDim,
    // analyze()'s own timing: `engineMs` is the attention kernels alone, `totalMs` the whole
    // analysis (tokenize, embed, kernels, masks); `warm` is false for an engine's first call.
    timing: { engineMs: primary.timing.ms, totalMs: primary.timing.totalMs, warm },
    backend: primary.backend ?? attn.backend,
    cost,
  };
}

// Random Q/K/V of a long sequence through both strategies with the current mask: the measured
// face of O(N^2) memory versus the tiled kernel (and of the tiles a sparse mask lets it skip).
export async function benchmark({ heads, headDim, length, mask, temperature, backend }) {
  const attn = await engine(backend);
  const size = heads * length * headDim;
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
  const options = { heads, headDim, temperature, ...maskOptions(mask, length, length) };
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
      pairsScored: stats.pairsScored,
      bytes: await attn.workingSetBytes({
        heads,
        queryLength: length,
        keyLength: length,
        headDim,
        valueDim: headDim,
        strategy,
      }),
    };
  }
  const selects = selectsKeys(mask);
  return { length, heads, headDim, backend: ran, selects, ...results };
}

// The first `count` tokens of `text` as text (the whole text when it has no more).
function leadingText(text, granularity, count) {
  const tokens = tokenize(text, { granularity });
  return tokens.length > count ? text.slice(0, tokens[count - 1].end) : text;
}

// Standard deviation of every raw score q·k of every head.
function spreadOf(heads) {
  let n = 0;
  let sum = 0;
  let squares = 0;
  for (const head of heads) {
    for (const score of head.scores) {
      n += 1;
      sum += score;
      squares += score * score;
    }
  }
  const mean = sum / n;
  return Math.sqrt(Math.max(0, squares / n - mean * mean));
}

// Why scaled dot divides by sqrt(d_k): the spread of the raw dot products q·k of this text (its
// first SPREAD_TOKENS tokens), with these heads, at every d_k in `headDims`, with and without the
// division. Unscaled, the spread grows about as sqrt(d_k); divided, it stays put.
// params: { mode, text, source, heads, seed, granularity, headDims, backend }
export async function scoreSpread(params) {
  const attn = await engine(params.backend);
  const text = leadingText(params.text, params.granularity, SPREAD_TOKENS);
  const source =
    params.mode === 'cross' ? leadingText(params.source, params.granularity, SPREAD_TOKENS) : null;
  const empty = (t) => tokenize(t, { granularity: params.granularity }).length === 0;
  if (empty(text) || (source !== null && empty(source))) {
    return { empty: true, points: [] };
  }
  const points = [];
  for (const headDim of params.headDims) {
    const options = {
      heads: params.heads,
      headDim,
      seed: params.seed,
      granularity: params.granularity,
      score: 'dot',
      attention: attn,
    };
    countCall(params.backend ?? 'auto');
    const run =
      source === null ? await analyze(text, options) : await analyzePair(source, text, options);
    const raw = spreadOf(run.heads);
    points.push({ headDim, raw, scaled: raw / Math.sqrt(headDim) });
  }
  return { empty: false, points, tokens: SPREAD_TOKENS };
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
