// Argument checks, done in full before wasm memory is touched.
//
// Each check* function turns what a user passed into a normalized "problem" (explicit shape,
// typed arrays, every option resolved) that any backend can run without re-validating, or throws
// a TypeError / RangeError whose message starts with the argument name (see errors.js).
// The core checks everything again; these checks exist so that mistakes are reported in
// JavaScript's names and before any copying.

import {
  boolean,
  integer,
  oneOf,
  optionsObject,
  rangeError,
  shapeError,
  typeError,
  typedArray,
} from './argument-checks.js';
import { attnlensError, describe } from './errors.js';
import { lengthOf, typedArrayName } from './typed-arrays.js';
import {
  DEFAULT_SCORE,
  DEFAULT_STRATEGY,
  LOGIT_OPTIONS,
  MASK_OPTIONS,
  SCORES,
  SPARSE_PATTERNS,
  STRATEGIES,
} from './vocabulary.js';

// Largest size accepted for one dimension; products are bounded by real array lengths or by
// wasm memory (a failed allocation raises an 'out_of_memory' RangeError).
export const MAX_SIZE = 2 ** 31 - 1;

const ATTENTION_KEYS = [
  'heads',
  'kvHeads',
  'headDim',
  'valueDim',
  'score',
  'scale',
  'temperature',
  'strategy',
  'additive',
  'returnWeights',
  'returnScores',
  ...MASK_OPTIONS,
  ...LOGIT_OPTIONS,
];
/** multiHead()'s option names (analyze() takes them too). */
export const MULTI_HEAD_KEYS = [
  ...ATTENTION_KEYS,
  'modelDim',
  'keyModelDim',
  'outDim',
  'source',
  'returnProjections',
];
const ADDITIVE_KEYS = ['hidden', 'wQuery', 'wKey', 'v'];
// multiHead's weights: the matrices and biases, and `additive`, which projectionWeights() (text/)
// puts next to them and multiHead leaves alone (the additive score reads options.additive).
const WEIGHT_KEYS = ['wQuery', 'wKey', 'wValue', 'wOut', 'bQuery', 'bKey', 'bValue', 'bOut'];
const RUN_KEYS = ATTENTION_KEYS.filter(
  (key) =>
    !['heads', 'kvHeads', 'headDim', 'valueDim', 'returnWeights', 'returnScores'].includes(key),
);

// ---- primitives -------------------------------------------------------------------------------

const size = (value, name) => integer(value, name, 1, MAX_SIZE);

function optionalSize(value, name, fallback) {
  return value === undefined ? fallback : size(value, name);
}

const float32Array = (value, name) => typedArray(value, name, Float32Array);

/**
 * A number the engine can hold: it computes in float32, so a double that float32 would turn
 * into 0 or Infinity is refused here, with the value as given, rather than passed on and
 * reported by the core as the float it became.
 */
function float32Option(value, name, { positive = false } = {}) {
  if (typeof value !== 'number') throw typeError(name, `must be a number, got ${describe(value)}`);
  const what = positive ? 'a positive finite number' : 'a finite number';
  if (!Number.isFinite(value) || (positive && !(value > 0))) {
    throw rangeError(name, `must be ${what}, got ${value}`);
  }
  const single = Math.fround(value);
  if (!Number.isFinite(single) || (positive && single === 0)) {
    throw rangeError(
      name,
      `must be ${what} within float32's range (the engine's precision), got ${value}, ` +
        `which is ${single} in float32`,
    );
  }
  return value;
}

/**
 * NaN or Infinity anywhere in `values` is a RangeError naming the first bad index. O(n), which
 * is nothing next to the O(N^2 * D) attention that follows.
 */
export function requireFinite(values, name) {
  if (allFinite(values)) return;
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    if (x - x !== 0) {
      // false only for finite x: NaN - NaN and Inf - Inf are NaN
      const what = Number.isNaN(x) ? 'NaN' : x > 0 ? '+Infinity' : '-Infinity';
      throw attnlensError('non_finite', name, `${name}[${i}] is ${what}; inputs must be finite`, {
        index: i,
      });
    }
  }
}

/**
 * The input tensors of a checked call left to the backend (`problem.finite`, name -> array)
 * must be finite. checkAttention() leaves q, k and v to the backend this way: the wasm
 * core checks its copies anyway (with SIMD, several times faster than a JavaScript loop: ~7% of
 * a call at N = 512), and the WebGPU path calls this before dispatching.
 */
export function requireFiniteInputs(problem) {
  for (const [name, values] of Object.entries(problem.finite)) requireFinite(values, name);
}

/**
 * The core found a non-finite element in one of `problem.finite`: the same error the JavaScript
 * check raises (with its `index`), found again in JavaScript only on this error path. Any other
 * error is returned unchanged.
 */
export function inputError(problem, error) {
  const values = error?.code === 'non_finite' ? problem.finite?.[error.parameter] : undefined;
  if (values === undefined) return error;
  try {
    requireFinite(values, error.parameter);
  } catch (jsError) {
    return jsError;
  }
  return error;
}

/**
 * Whether every element is finite: x * 0 is 0 for finite x and NaN for NaN or Infinity, and NaN
 * survives any sum. Four branch-free sums run ~2.5x faster than a test per element, which
 * matters for the weights and inputs checked on every call.
 */
function allFinite(values) {
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  const end = values.length & ~3;
  let i = 0;
  for (; i < end; i += 4) {
    a += values[i] * 0;
    b += values[i + 1] * 0;
    c += values[i + 2] * 0;
    d += values[i + 3] * 0;
  }
  for (; i < values.length; i++) a += values[i] * 0;
  return a + b + c + d === 0;
}

// `array` (or a length) of `expected` elements, else a shape error; returns the length.
export function requireLength(array, expected, name, formula) {
  const length = typeof array === 'number' ? array : array.length;
  if (length !== expected) {
    throw shapeError(name, `expected ${formula} = ${expected} elements, got ${length}`);
  }
  return length;
}

// length / unit as a positive integer, or a shape error explaining the unit.
export function positiveMultiple(array, unit, name, unitText) {
  if (array.length === 0 || array.length % unit !== 0) {
    throw shapeError(
      name,
      `length ${array.length} is not a positive multiple of ${unitText} = ${unit}`,
    );
  }
  return array.length / unit;
}

// Uint8Array, or an array of booleans / numbers (each element read once), as 0/1 flags of the
// given length.
function flags(value, name, expected, formula) {
  if (typedArrayName(value) === 'Uint8Array') {
    const out = typedArray(value, name, Uint8Array);
    requireLength(out, expected, name, formula);
    return out;
  }
  if (!Array.isArray(value)) {
    throw typeError(name, `must be a Uint8Array or an array of booleans, got ${describe(value)}`);
  }
  const length = arrayLength(value, name);
  // Elements past `expected` are not read: the length is wrong anyway.
  const out = new Uint8Array(Math.min(length, expected));
  for (let i = 0; i < out.length; i++) {
    const x = value[i];
    if (typeof x !== 'boolean' && typeof x !== 'number') {
      throw typeError(name, `${name}[${i}] must be a boolean or a number, got ${describe(x)}`);
    }
    out[i] = x ? 1 : 0;
  }
  requireLength(length, expected, name, formula);
  return out;
}

// An array or typed array of integers, copied (each element read once).
function integerList(value, name, min, max) {
  const typed = typedArrayName(value) !== undefined;
  if (!Array.isArray(value) && !typed) {
    throw typeError(name, `must be an array of integers, got ${describe(value)}`);
  }
  const length = typed ? lengthOf(value) : arrayLength(value, name);
  const out = new Array(length);
  for (let i = 0; i < length; i++) out[i] = integer(value[i], `${name}[${i}]`, min, max);
  return out;
}

// An array's length, read once. A real array's is always an integer below 2^32; a Proxy of one
// may answer anything.
function arrayLength(array, name) {
  const length = array.length;
  if (!Number.isInteger(length) || length < 0 || length > 2 ** 32 - 1) {
    throw typeError(name, `must be an array, got one whose length is ${describe(length)}`);
  }
  return length;
}

// Option objects are read before tensors are used, but a getter among them could still detach
// or shrink a tensor's buffer after it was checked: its view then no longer has the length that
// was validated.
function requireIntact(tensors, lengths) {
  for (const [name, view] of Object.entries(tensors)) {
    if (lengthOf(view) !== lengths[name]) {
      throw typeError(name, 'was detached or resized while the options were being read');
    }
  }
}

const lengthsOf = (tensors) =>
  Object.fromEntries(Object.entries(tensors).map(([name, view]) => [name, view.length]));

// An optional value: `fallback` only for undefined (null is a value, checked like any other).
const orDefault = (value, fallback) => (value === undefined ? fallback : value);

/**
 * kvHeads, the heads of k and v (grouped-query attention): a divisor of heads; heads when not
 * given. Query head h reads K/V head floor(h / (heads / kvHeads)).
 */
function kvHeadsOption(value, heads) {
  if (value === undefined) return heads;
  const kvHeads = integer(value, 'kvHeads', 1, heads);
  if (heads % kvHeads !== 0) {
    throw rangeError('kvHeads', `must divide heads = ${heads}, got ${kvHeads}`);
  }
  return kvHeads;
}

// ---- options shared by every call -------------------------------------------------------------

/** `window` as { before, after, dilation }, each at most `longest` (the positions there are). */
function windowOption(given, longest) {
  if (typeof given === 'number') {
    return { before: integer(given, 'window', 0, longest), after: given, dilation: 1 };
  }
  if (given === null || typeof given !== 'object') {
    throw typeError(
      'window',
      `must be a number or { before, after, dilation }, got ${describe(given)}`,
    );
  }
  const w = optionsObject(given, 'window', ['before', 'after', 'dilation']);
  return {
    before: integer(orDefault(w.before, 0), 'window.before', 0, longest),
    after: integer(orDefault(w.after, 0), 'window.after', 0, longest),
    dilation: integer(orDefault(w.dilation, 1), 'window.dilation', 1, longest),
  };
}

/** The mask options against a shape: the formula of include/attnlens/mask.h. */
function maskOptions(options, { heads, queryLength, keyLength }) {
  // Query i sits at position i + queryOffset among the keys; positions fit in 31 bits.
  const queryOffset = integer(
    orDefault(options.queryOffset, 0),
    'queryOffset',
    0,
    MAX_SIZE - queryLength,
  );
  const longest = Math.max(queryLength + queryOffset, keyLength);
  const mask = { causal: boolean(options.causal, 'causal') };
  if (queryOffset !== 0) mask.queryOffset = queryOffset;
  if (options.window !== undefined) mask.window = windowOption(options.window, longest);
  if (options.sparse !== undefined) {
    const s = optionsObject(options.sparse, 'sparse', ['pattern', 'stride', 'summary']);
    if (s.pattern === undefined) {
      const names = SPARSE_PATTERNS.map((name) => `'${name}'`).join(' or ');
      throw typeError('sparse.pattern', `is required (${names})`);
    }
    const pattern = oneOf(s.pattern, 'sparse.pattern', SPARSE_PATTERNS);
    if (s.stride === undefined) throw typeError('sparse.stride', 'is required');
    const stride = integer(s.stride, 'sparse.stride', 1, longest);
    const summary =
      pattern === 'fixed' ? integer(orDefault(s.summary, 1), 'sparse.summary', 1, stride) : 1;
    mask.sparse = { pattern, stride, summary };
  }
  if (options.globalTokens !== undefined) {
    mask.globalTokens = integerList(options.globalTokens, 'globalTokens', 0, longest - 1);
  }
  if (options.keyLengths !== undefined) {
    mask.keyLengths = integerList(options.keyLengths, 'keyLengths', 0, keyLength);
    requireLength(mask.keyLengths, heads, 'keyLengths', 'one per head: heads');
  }
  if (options.keyValid !== undefined) {
    mask.keyValid = flags(options.keyValid, 'keyValid', keyLength, 'keyLength');
  }
  if (options.mask !== undefined) {
    mask.mask = flags(
      options.mask,
      'mask',
      queryLength * keyLength,
      `queryLength*keyLength = ${queryLength}*${keyLength}`,
    );
  }
  return mask;
}

/** Score, scale, temperature, strategy, additive weights and the mask. */
function computeOptions(options, shape, { wantsMatrices }) {
  const score = oneOf(options.score, 'score', SCORES, DEFAULT_SCORE);
  const resolved = { score, ...maskOptions(options, shape) };
  if (options.scale !== undefined) resolved.scale = float32Option(options.scale, 'scale');
  resolved.temperature =
    options.temperature === undefined
      ? 1
      : float32Option(options.temperature, 'temperature', { positive: true });
  resolved.strategy = oneOf(options.strategy, 'strategy', STRATEGIES, DEFAULT_STRATEGY);
  if (resolved.strategy === 'streaming' && wantsMatrices) {
    throw typeError(
      'strategy',
      'the streaming strategy never forms the weight matrix; use ' +
        "'materialized' or 'auto' to get weights or scores",
    );
  }
  Object.assign(resolved, logitOptions(options, shape));
  // Checked whenever given, so a wrong one is reported even while another score is chosen; only
  // the additive score uses it.
  if (options.additive !== undefined) {
    const additive = additiveWeights(options.additive, shape);
    if (score === 'additive') resolved.additive = additive;
  } else if (score === 'additive') {
    throw typeError('additive', "score 'additive' needs { hidden, wQuery, wKey, v }");
  }
  return resolved;
}

const LSH_KEYS = ['buckets', 'rounds', 'seed'];

/**
 * softcap, bias, alibi / alibiSlopes, topK and lsh (attention.h's formula): only those given
 * appear in the result.
 */
function logitOptions(options, { heads, queryLength, keyLength }) {
  const out = {};
  if (options.softcap !== undefined) {
    out.softcap = float32Option(options.softcap, 'softcap', { positive: true });
  }
  if (options.bias !== undefined) {
    const bias = float32Array(options.bias, 'bias');
    const matrix = queryLength * keyLength;
    if (bias.length !== matrix && bias.length !== heads * matrix) {
      throw shapeError(
        'bias',
        `expected heads*queryLength*keyLength = ${heads * matrix} or queryLength*keyLength = ` +
          `${matrix} elements, got ${bias.length}`,
      );
    }
    // -Infinity hides a key, as ONNX's float attn_mask does; NaN and +Infinity mean nothing.
    for (let i = 0; i < bias.length; i++) {
      const x = bias[i];
      if (x !== x || x === Infinity) {
        const what = x !== x ? 'NaN' : '+Infinity';
        throw attnlensError(
          'non_finite',
          'bias',
          `bias[${i}] is ${what}; a bias is finite, or ` + '-Infinity to hide a key',
          { index: i },
        );
      }
    }
    out.bias = bias;
  }
  const alibi = boolean(options.alibi, 'alibi');
  if (options.alibiSlopes !== undefined) {
    if (alibi) throw typeError('alibiSlopes', 'and alibi: true both given; give one of them');
    const slopes = float32Array(options.alibiSlopes, 'alibiSlopes');
    requireLength(slopes, heads, 'alibiSlopes', 'one per head: heads');
    requireFinite(slopes, 'alibiSlopes');
    out.alibiSlopes = slopes;
  } else if (alibi) {
    out.alibi = true;
  }
  if (options.topK !== undefined) out.topK = integer(options.topK, 'topK', 1, keyLength);
  if (options.lsh !== undefined) {
    const l = optionsObject(options.lsh, 'lsh', LSH_KEYS);
    if (l.buckets === undefined) throw typeError('lsh.buckets', 'is required');
    const buckets = integer(l.buckets, 'lsh.buckets', 2, 1024);
    if (buckets % 2 !== 0) {
      throw rangeError(
        'lsh.buckets',
        `must be even (each round hashes to the sign of ` +
          `buckets / 2 projections), got ${buckets}`,
      );
    }
    out.lsh = {
      buckets,
      rounds: integer(orDefault(l.rounds, 1), 'lsh.rounds', 1, 16),
      seed: integer(orDefault(l.seed, 0), 'lsh.seed', 0, 2 ** 32 - 1),
    };
  }
  return out;
}

function additiveWeights(value, { heads, headDim }) {
  const a = optionsObject(value, 'additive', ADDITIVE_KEYS);
  const hidden = size(a.hidden, 'additive.hidden');
  const weights = { hidden };
  for (const [key, expected, formula] of [
    ['wQuery', heads * hidden * headDim, 'heads*hidden*headDim'],
    ['wKey', heads * hidden * headDim, 'heads*hidden*headDim'],
    ['v', heads * hidden, 'heads*hidden'],
  ]) {
    const name = `additive.${key}`;
    weights[key] = float32Array(a[key], name);
    requireLength(weights[key], expected, name, formula);
    requireFinite(weights[key], name);
  }
  return weights;
}

// ---- one function per call --------------------------------------------------------------------

/**
 * attention(q, k, v, options) -> { shape, q, k, v, options, returnWeights, returnScores }.
 * Nq and Nk follow from the lengths: q is [heads, Nq, headDim], k [heads, Nk, headDim].
 */
export function checkAttention(rawQ, rawK, rawV, rawOptions) {
  const options = optionsObject(rawOptions, 'options', ATTENTION_KEYS);
  const q = float32Array(rawQ, 'q');
  const k = float32Array(rawK, 'k');
  const v = float32Array(rawV, 'v');
  if (options.heads === undefined) throw typeError('heads', 'is required');
  if (options.headDim === undefined) throw typeError('headDim', 'is required');
  const heads = size(options.heads, 'heads');
  const kvHeads = kvHeadsOption(options.kvHeads, heads);
  const headDim = size(options.headDim, 'headDim');
  const valueDim = optionalSize(options.valueDim, 'valueDim', headDim);
  // Messages name kvHeads only where it was given.
  const kv = options.kvHeads === undefined ? 'heads' : 'kvHeads';
  const shape = {
    heads,
    kvHeads,
    headDim,
    valueDim,
    queryLength: positiveMultiple(q, heads * headDim, 'q', 'heads*headDim'),
    keyLength: positiveMultiple(k, kvHeads * headDim, 'k', `${kv}*headDim`),
  };
  requireLength(v, kvHeads * shape.keyLength * valueDim, 'v', `${kv}*keyLength*valueDim`);
  const returnWeights = boolean(options.returnWeights, 'returnWeights');
  const returnScores = boolean(options.returnScores, 'returnScores');
  const lengths = lengthsOf({ q, k, v });
  const resolved = computeOptions(options, shape, { wantsMatrices: returnWeights || returnScores });
  requireIntact({ q, k, v }, lengths);
  return { shape, q, k, v, options: resolved, returnWeights, returnScores, finite: { q, k, v } };
}

/**
 * attentionBackward(q, k, v, dOutput, options) -> checkAttention()'s problem plus dOutput, which
 * must be shaped like the output, [heads, Nq, valueDim], and finite. attention()'s options less
 * the returned matrices; every score but 'additive', whose gradient would belong to its weights.
 */
export function checkAttentionBackward(q, k, v, dOutput, rawOptions) {
  const options = optionsObject(
    rawOptions,
    'options',
    ATTENTION_KEYS.filter((key) => key !== 'returnWeights' && key !== 'returnScores'),
  );
  if (options.score === 'additive') {
    throw rangeError(
      'score',
      "attentionBackward supports 'scaled-dot', 'dot' and 'cosine'; the additive score's " +
        'gradient also belongs to its weights, which it does not compute',
    );
  }
  const problem = checkAttention(q, k, v, options);
  const unsupported = LOGIT_OPTIONS.find((name) => problem.options[name] !== undefined);
  if (unsupported !== undefined) {
    throw typeError(
      unsupported,
      'attentionBackward differentiates the scaled scores, the temperature and the mask; it ' +
        'does not support this option',
    );
  }
  const { heads, queryLength, valueDim } = problem.shape;
  requireLength(
    float32Array(dOutput, 'dOutput'),
    heads * queryLength * valueDim,
    'dOutput',
    'heads*queryLength*valueDim',
  );
  requireFinite(dOutput, 'dOutput');
  return { ...problem, dOutput };
}

/**
 * multiHead(x, weights, options): widths not given are read off the weight matrices
 * (wQuery is [modelDim, heads*headDim], wKey [keyModelDim, ...], wOut [heads*valueDim, outDim]).
 */
export function checkMultiHead(rawX, rawWeights, rawOptions) {
  const options = optionsObject(rawOptions, 'options', MULTI_HEAD_KEYS);
  const x = float32Array(rawX, 'x');
  if (rawWeights === null || typeof rawWeights !== 'object' || Array.isArray(rawWeights)) {
    throw typeError('weights', `must be an object of Float32Arrays, got ${describe(rawWeights)}`);
  }
  // `additive` is allowed and left alone, so projectionWeights()' result passes as it is.
  const given = optionsObject(rawWeights, 'weights', [...WEIGHT_KEYS, 'additive']);
  const weights = {};
  for (const key of WEIGHT_KEYS) {
    if (given[key] !== undefined || !key.startsWith('b')) {
      weights[key] = float32Array(given[key], key);
    }
  }
  if (options.heads === undefined) throw typeError('heads', 'is required');
  if (options.headDim === undefined) throw typeError('headDim', 'is required');
  const heads = size(options.heads, 'heads');
  const kvHeads = kvHeadsOption(options.kvHeads, heads);
  const headDim = size(options.headDim, 'headDim');
  const valueDim = optionalSize(options.valueDim, 'valueDim', headDim);
  const hd = heads * headDim;
  const hdv = heads * valueDim;
  const kvd = kvHeads * headDim;
  const kvdv = kvHeads * valueDim;
  const kv = options.kvHeads === undefined ? 'heads' : 'kvHeads'; // as the caller wrote it
  const source = options.source === undefined ? undefined : float32Array(options.source, 'source');
  if (source === undefined && options.keyModelDim !== undefined)
    size(options.keyModelDim, 'keyModelDim');

  const modelDim = optionalSize(
    options.modelDim,
    'modelDim',
    positiveMultiple(weights.wQuery, hd, 'wQuery', 'heads*headDim'),
  );
  let keyModelDim = modelDim;
  if (source) {
    keyModelDim = optionalSize(
      options.keyModelDim,
      'keyModelDim',
      positiveMultiple(weights.wKey, kvd, 'wKey', `${kv}*headDim`),
    );
  } else if (options.keyModelDim !== undefined && options.keyModelDim !== modelDim) {
    throw typeError('keyModelDim', 'differs from modelDim but no source was given');
  }
  const outDim = optionalSize(
    options.outDim,
    'outDim',
    positiveMultiple(weights.wOut, hdv, 'wOut', 'heads*valueDim'),
  );
  const queryLength = positiveMultiple(x, modelDim, 'x', 'modelDim');
  const keyLength = source
    ? positiveMultiple(source, keyModelDim, 'source', 'keyModelDim')
    : queryLength;
  const shape = {
    heads,
    kvHeads,
    headDim,
    valueDim,
    queryLength,
    keyLength,
    modelDim,
    keyModelDim,
    outDim,
  };

  requireLength(weights.wQuery, modelDim * hd, 'wQuery', 'modelDim*heads*headDim');
  requireLength(weights.wKey, keyModelDim * kvd, 'wKey', `keyModelDim*${kv}*headDim`);
  requireLength(weights.wValue, keyModelDim * kvdv, 'wValue', `keyModelDim*${kv}*valueDim`);
  requireLength(weights.wOut, hdv * outDim, 'wOut', 'heads*valueDim*outDim');
  const tensors = {
    x,
    wQuery: weights.wQuery,
    wKey: weights.wKey,
    wValue: weights.wValue,
    wOut: weights.wOut,
  };
  if (source) tensors.source = source;
  for (const [key, expected, formula] of [
    ['bQuery', hd, 'heads*headDim'],
    ['bKey', kvd, `${kv}*headDim`],
    ['bValue', kvdv, `${kv}*valueDim`],
    ['bOut', outDim, 'outDim'],
  ]) {
    if (weights[key] === undefined) continue;
    requireLength(weights[key], expected, key, formula);
    tensors[key] = weights[key];
  }
  const returnWeights = boolean(options.returnWeights, 'returnWeights');
  const returnScores = boolean(options.returnScores, 'returnScores');
  const returnProjections = boolean(options.returnProjections, 'returnProjections');
  const lengths = lengthsOf(tensors);
  const resolved = computeOptions(options, shape, { wantsMatrices: returnWeights || returnScores });
  requireIntact(tensors, lengths);
  // Checked here, not left to the backend as attention()'s are: the core names these tensors
  // differently (x_query, w_query, ...), and they are small next to attention()'s q, k and v.
  for (const [key, tensor] of Object.entries(tensors)) requireFinite(tensor, key);
  return {
    shape,
    tensors,
    options: resolved,
    returnWeights,
    returnScores,
    returnProjections,
    finite: {},
  };
}

/** maskMatrix({ heads, queryLength, keyLength, head, ...mask options }). */
export function checkMaskMatrix(rawOptions) {
  const options = optionsObject(rawOptions, 'options', [
    'heads',
    'queryLength',
    'keyLength',
    'head',
    ...MASK_OPTIONS,
  ]);
  const shape = {
    heads: optionalSize(options.heads, 'heads', 1),
    queryLength: size(options.queryLength, 'queryLength'),
    keyLength: size(options.keyLength, 'keyLength'),
    headDim: 1,
    valueDim: 1,
  };
  const head = integer(orDefault(options.head, 0), 'head', 0, shape.heads - 1);
  return { shape, head, options: maskOptions(options, shape) };
}

/**
 * workingSetBytes({ heads, queryLength, keyLength, headDim, valueDim, strategy, score,
 * additive }).
 */
export function checkWorkingSet(rawOptions) {
  const options = optionsObject(rawOptions, 'options', [
    'heads',
    'queryLength',
    'keyLength',
    'headDim',
    'valueDim',
    'strategy',
    'score',
    'additive',
  ]);
  const headDim = size(options.headDim, 'headDim');
  const shape = {
    heads: optionalSize(options.heads, 'heads', 1),
    queryLength: size(options.queryLength, 'queryLength'),
    keyLength: size(options.keyLength, 'keyLength'),
    headDim,
    valueDim: optionalSize(options.valueDim, 'valueDim', headDim),
  };
  // 'auto' without weights runs streaming, which is what attention() would pick.
  const strategy = oneOf(options.strategy, 'strategy', STRATEGIES, DEFAULT_STRATEGY);
  const score = oneOf(options.score, 'score', SCORES, DEFAULT_SCORE);
  // Only the additive score's hidden size counts; the rest of `additive` is checked when given
  // to attention(), not here, where no weights are needed.
  let additiveHidden;
  if (options.additive !== undefined) {
    const a = optionsObject(options.additive, 'additive', ADDITIVE_KEYS);
    const hidden = size(a.hidden, 'additive.hidden');
    if (score === 'additive') additiveHidden = hidden;
  }
  return { shape, strategy: strategy === 'auto' ? 'streaming' : strategy, score, additiveHidden };
}

/** allocate({ heads, kvHeads, queryLength, keyLength, headDim, valueDim }). */
export function checkBufferShape(rawShape) {
  if (rawShape === undefined) throw typeError('shape', 'is required');
  const s = optionsObject(rawShape, 'shape', [
    'heads',
    'kvHeads',
    'queryLength',
    'keyLength',
    'headDim',
    'valueDim',
  ]);
  const headDim = size(s.headDim, 'headDim');
  const heads = optionalSize(s.heads, 'heads', 1);
  return {
    heads,
    kvHeads: kvHeadsOption(s.kvHeads, heads),
    queryLength: size(s.queryLength, 'queryLength'),
    keyLength: size(s.keyLength, 'keyLength'),
    headDim,
    valueDim: optionalSize(s.valueDim, 'valueDim', headDim),
  };
}

const CACHED_ATTENTION_KEYS = ATTENTION_KEYS.filter(
  (key) => !['heads', 'kvHeads', 'headDim', 'valueDim'].includes(key),
);

/**
 * kvCache.attend(q, options) -> checkAttention()'s problem less k and v, which the cache holds:
 * `cache` is its { heads (query heads), kvHeads, headDim, valueDim, keyLength (its length) } and
 * its `capacity`. q is [heads, Nq, headDim]; queryOffset defaults to keyLength - Nq (0 when Nq is
 * larger), so the queries are the last Nq positions, as in decoding. A window is a model's, fixed
 * while the cache fills: it may reach past the positions held so far (up to the capacity), and
 * is then cut to them, which leaves the same keys visible.
 */
export function checkCachedAttention(rawQ, rawOptions, { capacity, ...cache }) {
  const options = optionsObject(rawOptions, 'options', CACHED_ATTENTION_KEYS);
  const q = float32Array(rawQ, 'q');
  const { heads, headDim, keyLength } = cache;
  const queryLength = positiveMultiple(q, heads * headDim, 'q', 'queryHeads*headDim');
  const shape = { ...cache, queryLength };
  if (options.queryOffset === undefined) options.queryOffset = Math.max(0, keyLength - queryLength);
  if (options.window !== undefined && Number.isInteger(options.queryOffset)) {
    const longest = Math.max(queryLength + options.queryOffset, keyLength);
    const window = windowOption(options.window, Math.max(capacity, longest));
    for (const key of Object.keys(window)) window[key] = Math.min(window[key], longest);
    options.window = window;
  }
  const returnWeights = boolean(options.returnWeights, 'returnWeights');
  const returnScores = boolean(options.returnScores, 'returnScores');
  const lengths = lengthsOf({ q });
  const resolved = computeOptions(options, shape, { wantsMatrices: returnWeights || returnScores });
  requireIntact({ q }, lengths);
  return { shape, q, options: resolved, returnWeights, returnScores, finite: { q } };
}

/** buffers.run(options): attention options without shape or returned matrices. */
export function checkRun(rawOptions, shape) {
  const options = optionsObject(rawOptions, 'options', RUN_KEYS);
  return computeOptions(options, shape, { wantsMatrices: false });
}

const POWER_PREFERENCES = ['high-performance', 'low-power'];
const STORAGE_TYPES = ['f32', 'f16'];

/**
 * createAttention({ webgpu }): { gpu, device, powerPreference, minFlops, allowSoftwareAdapter,
 * storage, subgroups, maxBufferBytes }, all optional.
 */
export function checkWebGpuOptions(rawOptions) {
  const o = optionsObject(rawOptions, 'webgpu', [
    'gpu',
    'device',
    'powerPreference',
    'minFlops',
    'allowSoftwareAdapter',
    'storage',
    'subgroups',
    'maxBufferBytes',
  ]);
  const checked = {};
  for (const key of ['gpu', 'device']) {
    if (o[key] === undefined) continue;
    if (o[key] === null || typeof o[key] !== 'object') {
      throw typeError(
        `webgpu.${key}`,
        `must be a ${key === 'gpu' ? 'GPU' : 'GPUDevice'} object, got ${describe(o[key])}`,
      );
    }
    checked[key] = o[key];
  }
  if (o.powerPreference !== undefined) {
    checked.powerPreference = oneOf(o.powerPreference, 'webgpu.powerPreference', POWER_PREFERENCES);
  }
  if (o.minFlops !== undefined) {
    if (typeof o.minFlops !== 'number')
      throw typeError('webgpu.minFlops', `must be a number, got ${describe(o.minFlops)}`);
    if (!(o.minFlops >= 0))
      throw rangeError('webgpu.minFlops', `must be a non-negative number, got ${o.minFlops}`);
    checked.minFlops = o.minFlops;
  }
  if (o.allowSoftwareAdapter !== undefined) {
    checked.allowSoftwareAdapter = boolean(o.allowSoftwareAdapter, 'webgpu.allowSoftwareAdapter');
  }
  if (o.storage !== undefined) checked.storage = oneOf(o.storage, 'webgpu.storage', STORAGE_TYPES);
  if (o.subgroups !== undefined) checked.subgroups = boolean(o.subgroups, 'webgpu.subgroups');
  if (o.maxBufferBytes !== undefined) {
    checked.maxBufferBytes = integer(
      o.maxBufferBytes,
      'webgpu.maxBufferBytes',
      1024,
      Number.MAX_SAFE_INTEGER,
    );
  }
  return checked;
}
