// Argument checks, done in full before wasm memory is touched.
//
// Each check* function turns what a user passed into a normalized "problem" (explicit shape,
// typed arrays, every option resolved) that any backend can run without re-validating, or throws
// a TypeError / RangeError whose message starts with the argument name (see errors.js).
// The core checks everything again; these checks exist so that mistakes are reported in
// JavaScript's names and before any copying.

import { attnlensError, describe } from './errors.js';

// Largest size accepted for one dimension; products are bounded by real array lengths or by
// wasm memory (a failed allocation raises an 'out_of_memory' RangeError).
const MAX_SIZE = 2 ** 31 - 1;

const SCORES = ['scaled-dot', 'dot', 'cosine', 'additive'];
const STRATEGIES = ['auto', 'materialized', 'streaming'];
const SPARSE_PATTERNS = ['strided', 'fixed'];

const MASK_KEYS = ['causal', 'window', 'sparse', 'globalTokens', 'keyLengths', 'keyValid', 'mask'];
const ATTENTION_KEYS = [
  'heads',
  'headDim',
  'valueDim',
  'score',
  'scale',
  'temperature',
  'strategy',
  'additive',
  'returnWeights',
  'returnScores',
  ...MASK_KEYS,
];
const MULTI_HEAD_KEYS = [
  ...ATTENTION_KEYS,
  'modelDim',
  'keyModelDim',
  'outDim',
  'source',
  'returnProjections',
];
const RUN_KEYS = ATTENTION_KEYS.filter(
  (key) => !['heads', 'headDim', 'valueDim', 'returnWeights', 'returnScores'].includes(key),
);

const typeError = (name, detail) => attnlensError('invalid_argument', name, detail);
const rangeError = (name, detail) => attnlensError('out_of_range', name, detail);
const shapeError = (name, detail) => attnlensError('shape_mismatch', name, detail);

// ---- primitives -------------------------------------------------------------------------------

function optionsObject(value, name, allowedKeys) {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw typeError(name, `must be an object, got ${describe(value)}`);
  }
  // A misspelt option ('casual') would otherwise be ignored silently.
  for (const key of Object.keys(value)) {
    if (!allowedKeys.includes(key)) {
      throw typeError(name, `unknown option '${key}' (known: ${allowedKeys.join(', ')})`);
    }
  }
  return value;
}

function integer(value, name, min, max) {
  if (typeof value !== 'number')
    throw typeError(name, `must be an integer, got ${describe(value)}`);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw rangeError(name, `must be an integer between ${min} and ${max}, got ${value}`);
  }
  return value;
}

const size = (value, name) => integer(value, name, 1, MAX_SIZE);

function optionalSize(value, name, fallback) {
  return value === undefined ? fallback : size(value, name);
}

function boolean(value, name) {
  if (value === undefined) return false;
  if (typeof value !== 'boolean')
    throw typeError(name, `must be a boolean, got ${describe(value)}`);
  return value;
}

function oneOf(value, name, allowed, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') throw typeError(name, `must be a string, got ${describe(value)}`);
  if (!allowed.includes(value)) {
    throw rangeError(
      name,
      `must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got '${value}'`,
    );
  }
  return value;
}

function float32Array(value, name) {
  if (!(value instanceof Float32Array)) {
    throw typeError(name, `must be a Float32Array, got ${describe(value)}`);
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

function finiteTensor(value, name) {
  requireFinite(float32Array(value, name), name);
  return value;
}

function requireLength(array, expected, name, formula) {
  if (array.length !== expected) {
    throw shapeError(name, `expected ${formula} = ${expected} elements, got ${array.length}`);
  }
}

// length / unit as a positive integer, or a shape error explaining the unit.
function positiveMultiple(array, unit, name, unitText) {
  if (array.length === 0 || array.length % unit !== 0) {
    throw shapeError(
      name,
      `length ${array.length} is not a positive multiple of ${unitText} = ${unit}`,
    );
  }
  return array.length / unit;
}

// Uint8Array, or an array of booleans / numbers, as 0/1 flags of the given length.
function flags(value, name, expected, formula) {
  let out;
  if (value instanceof Uint8Array) {
    out = value;
  } else if (Array.isArray(value)) {
    out = new Uint8Array(value.length);
    value.forEach((x, i) => {
      if (typeof x !== 'boolean' && typeof x !== 'number') {
        throw typeError(name, `${name}[${i}] must be a boolean or a number, got ${describe(x)}`);
      }
      out[i] = x ? 1 : 0;
    });
  } else {
    throw typeError(name, `must be a Uint8Array or an array of booleans, got ${describe(value)}`);
  }
  requireLength(out, expected, name, formula);
  return out;
}

function integerList(value, name, min, max) {
  if (!Array.isArray(value) && !(ArrayBuffer.isView(value) && !(value instanceof DataView))) {
    throw typeError(name, `must be an array of integers, got ${describe(value)}`);
  }
  return Array.from(value, (x, i) => integer(x, `${name}[${i}]`, min, max));
}

// ---- options shared by every call -------------------------------------------------------------

/** The mask options against a shape: the formula of include/attnlens/mask.h. */
function maskOptions(options, { heads, queryLength, keyLength }) {
  const longest = Math.max(queryLength, keyLength);
  const mask = { causal: boolean(options.causal, 'causal') };
  if (options.window !== undefined) {
    const w = options.window;
    if (typeof w === 'number') {
      mask.window = { before: integer(w, 'window', 0, longest), after: w, dilation: 1 };
    } else {
      optionsObject(w, 'window', ['before', 'after', 'dilation']);
      mask.window = {
        before: integer(w.before ?? 0, 'window.before', 0, longest),
        after: integer(w.after ?? 0, 'window.after', 0, longest),
        dilation: integer(w.dilation ?? 1, 'window.dilation', 1, longest),
      };
    }
  }
  if (options.sparse !== undefined) {
    const s = optionsObject(options.sparse, 'sparse', ['pattern', 'stride', 'summary']);
    if (s.pattern === undefined)
      throw typeError('sparse.pattern', "is required ('strided' or 'fixed')");
    const pattern = oneOf(s.pattern, 'sparse.pattern', SPARSE_PATTERNS);
    if (s.stride === undefined) throw typeError('sparse.stride', 'is required');
    const stride = integer(s.stride, 'sparse.stride', 1, longest);
    const summary = pattern === 'fixed' ? integer(s.summary ?? 1, 'sparse.summary', 1, stride) : 1;
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
  const score = oneOf(options.score, 'score', SCORES, 'scaled-dot');
  const resolved = { score, ...maskOptions(options, shape) };
  if (options.scale !== undefined) {
    if (typeof options.scale !== 'number')
      throw typeError('scale', `must be a number, got ${describe(options.scale)}`);
    if (!Number.isFinite(options.scale))
      throw rangeError('scale', `must be finite, got ${options.scale}`);
    resolved.scale = options.scale;
  }
  const t = options.temperature ?? 1;
  if (typeof t !== 'number') throw typeError('temperature', `must be a number, got ${describe(t)}`);
  if (!(t > 0) || !Number.isFinite(t)) {
    throw rangeError('temperature', `must be a positive finite number, got ${t}`);
  }
  resolved.temperature = t;
  resolved.strategy = oneOf(options.strategy, 'strategy', STRATEGIES, 'auto');
  if (resolved.strategy === 'streaming' && wantsMatrices) {
    throw typeError(
      'strategy',
      'the streaming strategy never forms the weight matrix; use ' +
        "'materialized' or 'auto' to get weights or scores",
    );
  }
  if (score === 'additive') resolved.additive = additiveWeights(options.additive, shape);
  return resolved;
}

function additiveWeights(value, { heads, headDim }) {
  if (value === undefined) {
    throw typeError('additive', "score 'additive' needs { hidden, wQuery, wKey, v }");
  }
  const a = optionsObject(value, 'additive', ['hidden', 'wQuery', 'wKey', 'v']);
  const hidden = size(a.hidden, 'additive.hidden');
  const weights = { hidden };
  for (const [key, expected, formula] of [
    ['wQuery', heads * hidden * headDim, 'heads*hidden*headDim'],
    ['wKey', heads * hidden * headDim, 'heads*hidden*headDim'],
    ['v', heads * hidden, 'heads*hidden'],
  ]) {
    const name = `additive.${key}`;
    requireLength(float32Array(a[key], name), expected, name, formula);
    requireFinite(a[key], name);
    weights[key] = a[key];
  }
  return weights;
}

// ---- one function per call --------------------------------------------------------------------

/**
 * attention(q, k, v, options) -> { shape, q, k, v, options, returnWeights, returnScores }.
 * Nq and Nk follow from the lengths: q is [heads, Nq, headDim], k [heads, Nk, headDim].
 */
export function checkAttention(q, k, v, rawOptions) {
  const options = optionsObject(rawOptions, 'options', ATTENTION_KEYS);
  float32Array(q, 'q');
  float32Array(k, 'k');
  float32Array(v, 'v');
  if (options.heads === undefined) throw typeError('heads', 'is required');
  if (options.headDim === undefined) throw typeError('headDim', 'is required');
  const heads = size(options.heads, 'heads');
  const headDim = size(options.headDim, 'headDim');
  const valueDim = optionalSize(options.valueDim, 'valueDim', headDim);
  const shape = {
    heads,
    headDim,
    valueDim,
    queryLength: positiveMultiple(q, heads * headDim, 'q', 'heads*headDim'),
    keyLength: positiveMultiple(k, heads * headDim, 'k', 'heads*headDim'),
  };
  requireLength(v, heads * shape.keyLength * valueDim, 'v', 'heads*keyLength*valueDim');
  const returnWeights = boolean(options.returnWeights, 'returnWeights');
  const returnScores = boolean(options.returnScores, 'returnScores');
  const resolved = computeOptions(options, shape, { wantsMatrices: returnWeights || returnScores });
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
export function checkMultiHead(x, rawWeights, rawOptions) {
  const options = optionsObject(rawOptions, 'options', MULTI_HEAD_KEYS);
  float32Array(x, 'x');
  // Only the matrices below are read; other properties are ignored, so a weights object that
  // carries more (text/weights.js adds the additive-score weights) can be passed as it is.
  if (rawWeights === null || typeof rawWeights !== 'object') {
    throw typeError('weights', `must be an object of Float32Arrays, got ${describe(rawWeights)}`);
  }
  const weights = rawWeights;
  for (const key of ['wQuery', 'wKey', 'wValue', 'wOut']) float32Array(weights[key], key);
  if (options.heads === undefined) throw typeError('heads', 'is required');
  if (options.headDim === undefined) throw typeError('headDim', 'is required');
  const heads = size(options.heads, 'heads');
  const headDim = size(options.headDim, 'headDim');
  const valueDim = optionalSize(options.valueDim, 'valueDim', headDim);
  const hd = heads * headDim;
  const hdv = heads * valueDim;
  const source = options.source === undefined ? undefined : float32Array(options.source, 'source');

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
      positiveMultiple(weights.wKey, hd, 'wKey', 'heads*headDim'),
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
  const shape = { heads, headDim, valueDim, queryLength, keyLength, modelDim, keyModelDim, outDim };

  requireLength(weights.wQuery, modelDim * hd, 'wQuery', 'modelDim*heads*headDim');
  requireLength(weights.wKey, keyModelDim * hd, 'wKey', 'keyModelDim*heads*headDim');
  requireLength(weights.wValue, keyModelDim * hdv, 'wValue', 'keyModelDim*heads*valueDim');
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
    ['bKey', hd, 'heads*headDim'],
    ['bValue', hdv, 'heads*valueDim'],
    ['bOut', outDim, 'outDim'],
  ]) {
    if (weights[key] === undefined) continue;
    requireLength(float32Array(weights[key], key), expected, key, formula);
    tensors[key] = weights[key];
  }
  const returnWeights = boolean(options.returnWeights, 'returnWeights');
  const returnScores = boolean(options.returnScores, 'returnScores');
  const returnProjections = boolean(options.returnProjections, 'returnProjections');
  const resolved = computeOptions(options, shape, { wantsMatrices: returnWeights || returnScores });
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
    ...MASK_KEYS,
  ]);
  const shape = {
    heads: optionalSize(options.heads, 'heads', 1),
    queryLength: size(options.queryLength, 'queryLength'),
    keyLength: size(options.keyLength, 'keyLength'),
    headDim: 1,
    valueDim: 1,
  };
  const head = integer(options.head ?? 0, 'head', 0, shape.heads - 1);
  return { shape, head, options: maskOptions(options, shape) };
}

/** workingSetBytes({ heads, queryLength, keyLength, headDim, valueDim, strategy, score, additive }). */
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
  const strategy = oneOf(options.strategy, 'strategy', STRATEGIES, 'auto');
  const score = oneOf(options.score, 'score', SCORES, 'scaled-dot');
  let additiveHidden;
  if (score === 'additive' && options.additive !== undefined) {
    const a = optionsObject(options.additive, 'additive', ['hidden', 'wQuery', 'wKey', 'v']);
    additiveHidden = size(a.hidden, 'additive.hidden');
  }
  return { shape, strategy: strategy === 'auto' ? 'streaming' : strategy, score, additiveHidden };
}

/** allocate({ heads, queryLength, keyLength, headDim, valueDim }). */
export function checkBufferShape(rawShape) {
  if (rawShape === undefined) throw typeError('shape', 'is required');
  const s = optionsObject(rawShape, 'shape', [
    'heads',
    'queryLength',
    'keyLength',
    'headDim',
    'valueDim',
  ]);
  const headDim = size(s.headDim, 'headDim');
  return {
    heads: optionalSize(s.heads, 'heads', 1),
    queryLength: size(s.queryLength, 'queryLength'),
    keyLength: size(s.keyLength, 'keyLength'),
    headDim,
    valueDim: optionalSize(s.valueDim, 'valueDim', headDim),
  };
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
