// Text in, attention out: tokenize, embed, project with seeded weights and run the engine's
// multi-head attention, returning everything a visualisation needs (per-head weights, raw scores,
// visibility masks, projections, timing).
//
// The layer is untrained: its weights come from a seed, so the patterns show what the mechanism
// does with the given masks, score function, temperature and heads (and how similar tokens score
// against each other), not what a trained model has learnt.

import { Attention, createAttention } from './attention.js';
import { MULTI_HEAD_KEYS } from './checks.js';
import { simdSupported } from './loader.js';
import { embed } from './text/embed.js';
import { tokenize } from './text/tokenize.js';
import { projectionShape, projectionWeights } from './text/weights.js';
import { optionsObject, rangeError, typeError } from './argument-checks.js';
import { describe } from './errors.js';
import { DEFAULT_HEAD_DIM, DEFAULT_HEADS, MASK_OPTIONS } from './vocabulary.js';

export { entropy, topAttended } from './row-stats.js';

// Options analyze() consumes itself; everything else goes to attn.multiHead() unchanged, so every
// mask, score function, temperature, scale and strategy of the engine is available.
const TEXT_OPTIONS = new Set([
  'attention',
  'granularity',
  'locale',
  'seed',
  'positionScale',
  'shareQueryKey',
  'additiveHidden',
]);
// multiHead() options that analyze() sets itself: passing them is a mistake, reported as such.
const SET_BY_ANALYZE = [
  'returnWeights',
  'returnScores',
  'returnProjections',
  'source',
  'keyModelDim',
];
const ANALYZE_OPTIONS = [
  ...TEXT_OPTIONS,
  ...MULTI_HEAD_KEYS.filter((key) => !SET_BY_ANALYZE.includes(key)),
];

let sharedAttention = null;

/**
 * The instance analyze() uses when none is passed: created on first use, then shared. It runs
 * the SIMD128 build, not relaxed SIMD (whose fused multiply-add rounds differently on CPUs with
 * and without FMA) nor WebGPU, so the same text gives the same bits in every engine with SIMD128
 * and in Node. Texts are small: the fastest flavour would not be noticeably faster.
 */
function defaultAttention() {
  if (!sharedAttention) {
    sharedAttention = createAttention({
      backend: simdSupported() ? 'wasm-simd' : 'wasm-scalar',
    }).catch((error) => {
      sharedAttention = null; // let a later call retry instead of caching the failure
      throw error;
    });
  }
  return sharedAttention;
}

function splitOptions(options) {
  const textOptions = {};
  const engineOptions = {};
  for (const [name, value] of Object.entries(options)) {
    if (TEXT_OPTIONS.has(name)) textOptions[name] = value;
    else engineOptions[name] = value;
  }
  return { textOptions, engineOptions };
}

/** The options of analyze() and analyzePair(), read once, every key known. */
function checkOptions(options) {
  const opts = optionsObject(options, 'options', ANALYZE_OPTIONS);
  if (opts.attention !== undefined && !(opts.attention instanceof Attention)) {
    throw typeError(
      'attention',
      `must be an instance from createAttention(), got ${describe(opts.attention)}`,
    );
  }
  return opts;
}

/** tokenize() with errors naming `name` instead of "text" (analyzePair has two texts). */
function tokenizeArgument(name, text, options) {
  let tokens;
  try {
    tokens = tokenize(text, { granularity: options.granularity, locale: options.locale });
  } catch (error) {
    if (name !== 'text' && error.parameter === 'text') {
      error.message = error.message.replace(/^text:/, `${name}:`);
      error.parameter = name;
    }
    throw error;
  }
  if (tokens.length === 0) {
    throw rangeError(name, 'contains no tokens (it is empty or only whitespace)');
  }
  return tokens;
}

// Regenerating weights on every slider move is wasted work: keep the last set. The key is the
// checked shape (plain numbers), so only options that passed the checks can match it.
let lastWeights = { key: '', weights: null };

function cachedProjectionWeights(params) {
  const shape = projectionShape(params);
  const key = JSON.stringify(shape);
  if (lastWeights.key !== key) lastWeights = { key, weights: projectionWeights(shape) };
  return { shape, weights: lastWeights.weights };
}

/** Everything shared by analyze() and analyzePair(): weights, engine call, per-head split. */
async function runLayer(queryTokens, keyTokens, options, crossAttention, started) {
  const { textOptions, engineOptions } = splitOptions(options);
  const params = {
    heads: engineOptions.heads === undefined ? DEFAULT_HEADS : engineOptions.heads,
    headDim: engineOptions.headDim === undefined ? DEFAULT_HEAD_DIM : engineOptions.headDim,
    valueDim: engineOptions.valueDim,
    modelDim: engineOptions.modelDim,
    outDim: engineOptions.outDim,
    additiveHidden: textOptions.additiveHidden,
    seed: textOptions.seed,
    shareQueryKey: textOptions.shareQueryKey,
  };
  // Checks every size and the seed, and fills in their defaults.
  const { shape: dims, weights } = cachedProjectionWeights(params);
  const { heads, headDim, valueDim, modelDim } = dims;
  const embedOptions = {
    dim: modelDim,
    seed: textOptions.seed,
    positionScale: textOptions.positionScale,
  };

  const attn =
    textOptions.attention === undefined ? await defaultAttention() : textOptions.attention;
  const queryEmbeddings = embed(queryTokens, embedOptions);
  const keyEmbeddings = crossAttention ? embed(keyTokens, embedOptions) : queryEmbeddings;
  const layerOptions = {
    ...engineOptions,
    heads,
    headDim,
    valueDim,
    modelDim,
    returnWeights: true,
    returnScores: true,
    returnProjections: true,
  };
  if (crossAttention) {
    layerOptions.source = keyEmbeddings;
    layerOptions.keyModelDim = modelDim;
  }
  if (layerOptions.score === 'additive' && layerOptions.additive === undefined) {
    layerOptions.additive = weights.additive;
  }

  const engineStarted = performance.now();
  const { wQuery, wKey, wValue, wOut } = weights;
  const result = await attn.multiHead(
    queryEmbeddings,
    { wQuery, wKey, wValue, wOut },
    layerOptions,
  );
  const engineMs = performance.now() - engineStarted;

  const queryLength = queryTokens.length;
  const keyLength = keyTokens.length;
  const maskOptions = {};
  for (const name of MASK_OPTIONS) {
    if (engineOptions[name] !== undefined) maskOptions[name] = engineOptions[name];
  }
  const cells = queryLength * keyLength;
  const perHead = [];
  let mask = null;
  for (let h = 0; h < heads; h++) {
    // Only key lengths differ per head; otherwise every head shares one mask (asked for once).
    // Without mask options every key is visible (mask.h): no engine call is needed for that.
    if (h === 0 && Object.keys(maskOptions).length === 0) {
      mask = new Uint8Array(cells).fill(1);
    } else if (h === 0 || maskOptions.keyLengths !== undefined) {
      mask = await attn.maskMatrix({ heads, queryLength, keyLength, head: h, ...maskOptions });
    }
    perHead.push({
      weights: result.weights.subarray(h * cells, (h + 1) * cells),
      scores: result.scores.subarray(h * cells, (h + 1) * cells),
      mask,
    });
  }

  return {
    heads: perHead,
    output: result.output,
    q: result.q,
    k: result.k,
    v: result.v,
    embeddings: { query: queryEmbeddings, key: keyEmbeddings },
    timing: { ms: engineMs, totalMs: performance.now() - started },
    backend: result.stats.backend, // what ran this call (auto may pick per size)
    stats: result.stats,
    shape: {
      heads,
      queryLength,
      keyLength,
      headDim,
      valueDim,
      modelDim,
      outDim: dims.outDim,
    },
  };
}

/**
 * Self-attention over the tokens of one text.
 *
 * @param {string} text at most MAX_TEXT_LENGTH characters and MAX_TOKENS tokens
 * @param {object} [options] granularity, locale, seed, positionScale, shareQueryKey,
 *   additiveHidden, attention (an instance from createAttention(); default: one shared
 *   'wasm-simd' instance, see defaultAttention()),
 *   heads (default 4), headDim (default 16), valueDim, modelDim (default heads * headDim), outDim,
 *   and every option of attn.multiHead() (masks, score, scale, temperature, strategy, ...)
 * Heads share one mask array unless `keyLengths` makes their masks differ.
 * @returns {Promise<object>} { tokens, heads: [{ weights [N*N], scores [N*N], mask [N*N] }],
 *   output [N, outDim], q, k, v [H, N, D|Dv], embeddings: { query, key } [N, modelDim],
 *   timing: { ms (engine call), totalMs (whole analysis) }, backend, stats, shape }
 */
export async function analyze(text, options) {
  const started = performance.now();
  const opts = checkOptions(options);
  const tokens = tokenizeArgument('text', text, opts);
  const layer = await runLayer(tokens, tokens, opts, false, started);
  return { tokens, ...layer };
}

/**
 * Cross-attention alignment between two texts: each target token is a query attending to the
 * source tokens (keys and values), as a decoder attends to its encoder in translation.
 *
 * @param {string} source the attended text (keys/values); same caps as analyze()
 * @param {string} target the attending text (queries)
 * @param {object} [options] as for analyze(); both texts share embeddings and weights
 * @returns {Promise<object>} { sourceTokens, targetTokens, heads: [{ weights [Nt*Ns],
 *   scores [Nt*Ns], mask [Nt*Ns] }], output [Nt, outDim], q [H, Nt, D], k [H, Ns, D],
 *   v [H, Ns, Dv], embeddings: { query, key }, timing, backend, stats, shape }
 */
export async function analyzePair(source, target, options) {
  const started = performance.now();
  const opts = checkOptions(options);
  const sourceTokens = tokenizeArgument('source', source, opts);
  const targetTokens = tokenizeArgument('target', target, opts);
  const layer = await runLayer(targetTokens, sourceTokens, opts, true, started);
  return { sourceTokens, targetTokens, ...layer };
}
