// Seeded, untrained projection weights for the text demo: what a transformer layer looks like at
// initialisation, reproducible from one integer.
//
// Each matrix block is drawn from its own mulberry32 stream, keyed by (seed, matrix, head), so
// head h's query/key/value columns do not change when the head count or another head changes:
// adding a head in the demo leaves the patterns of the others as they were. Values are uniform in
// [-a, a] with Glorot/Xavier's a = sqrt(6 / (fanIn + fanOut)), which keeps the variance of the
// projected vectors near that of the inputs, so softmax logits are O(1) and patterns are neither
// one-hot nor flat at temperature 1.

import { hashString, mulberry32 } from './hash.js';
import { MAX_HEADS, MAX_MODEL_DIM, MAX_SEED } from './limits.js';
import {
  boolean,
  integerOption,
  optionsObject,
  rangeError,
  typeError,
} from '../argument-checks.js';
import { DEFAULT_SEED } from '../vocabulary.js';

const UINT32_RANGE = 4294967296;

/** A stream of uniform values in [-limit, limit) for one (seed, matrix, head). */
function uniformStream(seed, matrix, head, limit) {
  const next = mulberry32(hashString(`${matrix}/${head}`, seed));
  return () => (2 * (next() / UINT32_RANGE) - 1) * limit;
}

function xavierLimit(fanIn, fanOut) {
  return Math.sqrt(6 / (fanIn + fanOut));
}

/** Fills a contiguous block with the stream's values, in order. */
function fillBlock(block, next) {
  for (let i = 0; i < block.length; i++) block[i] = next();
}

/**
 * Fills the columns [head * width, (head + 1) * width) of a row-major [rows, totalWidth] matrix.
 */
function fillHeadColumns(matrix, rows, totalWidth, head, width, next) {
  for (let r = 0; r < rows; r++) {
    const rowStart = r * totalWidth + head * width;
    for (let c = 0; c < width; c++) matrix[rowStart + c] = next();
  }
}

/**
 * Seeded projection weights in the layout attn.multiHead() takes, plus the weights of the additive
 * (Bahdanau) score.
 *
 * @param {object} options
 * @param {number} options.heads H, 1..MAX_HEADS
 * @param {number} options.headDim D; H * D at most MAX_MODEL_DIM
 * @param {number} [options.valueDim] Dv, default D
 * @param {number} [options.modelDim] width of the query-side input, default H * D
 * @param {number} [options.keyModelDim] width of the key/value-side input, default modelDim
 * @param {number} [options.outDim] width of the output, default modelDim
 * @param {number} [options.additiveHidden] A of the additive score, default D
 * @param {number} [options.seed] uint32, default 1
 * @param {boolean} [options.shareQueryKey] use Wq as Wk too (needs keyModelDim == modelDim), so a
 *   query scores keys by similarity in one projected space; also shares the additive Wq/Wk
 * @returns {{ wQuery: Float32Array, wKey: Float32Array, wValue: Float32Array, wOut: Float32Array,
 *   additive: { hidden: number, wQuery: Float32Array, wKey: Float32Array, v: Float32Array } }}
 *   wQuery [modelDim, H*D], wKey [keyModelDim, H*D], wValue [keyModelDim, H*Dv],
 *   wOut [H*Dv, outDim], additive.wQuery/wKey [H, A, D], additive.v [H, A]
 */
export function projectionWeights(options) {
  return seededWeights(projectionShape(options));
}

const PROJECTION_OPTIONS = [
  'heads',
  'headDim',
  'valueDim',
  'modelDim',
  'keyModelDim',
  'outDim',
  'additiveHidden',
  'seed',
  'shareQueryKey',
];

/**
 * projectionWeights()' options checked and completed with their defaults: plain numbers and a
 * boolean, so the result also serves as a cache key for the weights it determines.
 */
export function projectionShape(options) {
  const opts = optionsObject(options, 'options', PROJECTION_OPTIONS);
  const heads = integerOption(opts.heads, 'heads', { min: 1, max: MAX_HEADS, fallback: undefined });
  if (heads === undefined) throw typeError('heads', 'is required');
  const maxHeadDim = Math.floor(MAX_MODEL_DIM / heads);
  const headDim = integerOption(opts.headDim, 'headDim', {
    min: 1,
    max: maxHeadDim,
    fallback: undefined,
  });
  if (headDim === undefined) throw typeError('headDim', 'is required');
  const valueDim = integerOption(opts.valueDim, 'valueDim', {
    min: 1,
    max: maxHeadDim,
    fallback: headDim,
  });
  const dimRange = { min: 1, max: MAX_MODEL_DIM };
  const modelDim = integerOption(opts.modelDim, 'modelDim', {
    ...dimRange,
    fallback: heads * headDim,
  });
  const keyModelDim = integerOption(opts.keyModelDim, 'keyModelDim', {
    ...dimRange,
    fallback: modelDim,
  });
  const outDim = integerOption(opts.outDim, 'outDim', { ...dimRange, fallback: modelDim });
  const hidden = integerOption(opts.additiveHidden, 'additiveHidden', {
    ...dimRange,
    fallback: headDim,
  });
  const seed = integerOption(opts.seed, 'seed', { min: 0, max: MAX_SEED, fallback: DEFAULT_SEED });
  const shareQueryKey = boolean(opts.shareQueryKey, 'shareQueryKey', false);
  if (shareQueryKey && keyModelDim !== modelDim) {
    throw rangeError(
      'shareQueryKey',
      `needs keyModelDim (${keyModelDim}) equal to modelDim (${modelDim})`,
    );
  }
  return {
    heads,
    headDim,
    valueDim,
    modelDim,
    keyModelDim,
    outDim,
    additiveHidden: hidden,
    seed,
    shareQueryKey,
  };
}

function seededWeights(shape) {
  const { heads, headDim, valueDim, modelDim, keyModelDim, outDim, seed, shareQueryKey } = shape;
  const hidden = shape.additiveHidden;
  const wQuery = new Float32Array(modelDim * heads * headDim);
  const wKey = shareQueryKey ? wQuery : new Float32Array(keyModelDim * heads * headDim);
  const wValue = new Float32Array(keyModelDim * heads * valueDim);
  const wOut = new Float32Array(heads * valueDim * outDim);
  const additive = {
    hidden,
    wQuery: new Float32Array(heads * hidden * headDim),
    wKey: null,
    v: new Float32Array(heads * hidden),
  };
  additive.wKey = shareQueryKey ? additive.wQuery : new Float32Array(heads * hidden * headDim);

  for (let h = 0; h < heads; h++) {
    const qLimit = xavierLimit(modelDim, headDim);
    fillHeadColumns(
      wQuery,
      modelDim,
      heads * headDim,
      h,
      headDim,
      uniformStream(seed, 'query', h, qLimit),
    );
    if (!shareQueryKey) {
      const kLimit = xavierLimit(keyModelDim, headDim);
      fillHeadColumns(
        wKey,
        keyModelDim,
        heads * headDim,
        h,
        headDim,
        uniformStream(seed, 'key', h, kLimit),
      );
    }
    const vLimit = xavierLimit(keyModelDim, valueDim);
    fillHeadColumns(
      wValue,
      keyModelDim,
      heads * valueDim,
      h,
      valueDim,
      uniformStream(seed, 'value', h, vLimit),
    );

    // Rows [h * Dv, (h + 1) * Dv) of Wo read head h's output.
    fillBlock(
      wOut.subarray(h * valueDim * outDim, (h + 1) * valueDim * outDim),
      uniformStream(seed, 'out', h, xavierLimit(heads * valueDim, outDim)),
    );

    const aLimit = xavierLimit(headDim, hidden);
    const headBlock = (m) => m.subarray(h * hidden * headDim, (h + 1) * hidden * headDim);
    fillBlock(headBlock(additive.wQuery), uniformStream(seed, 'additive-query', h, aLimit));
    if (!shareQueryKey) {
      fillBlock(headBlock(additive.wKey), uniformStream(seed, 'additive-key', h, aLimit));
    }
    fillBlock(
      additive.v.subarray(h * hidden, (h + 1) * hidden),
      uniformStream(seed, 'additive-v', h, xavierLimit(hidden, 1)),
    );
  }
  return { wQuery, wKey, wValue, wOut, additive };
}
