// Token embeddings that need no download: hashed character n-grams for content plus sinusoidal
// positions, bit-for-bit identical in every browser and in Node.
//
// Content (fastText-style "hashing trick"): the lower-cased token, wrapped in begin/end markers,
// contributes each of its character 2-, 3- and 4-grams and the whole token as features. Each
// feature hashes (with the seed) to one dimension and a sign, and adds +-1 there. Words that share
// many n-grams ("attend", "attention", "attended") therefore get similar vectors without any
// training, while unrelated words are nearly orthogonal (up to hash collisions, which a larger
// `dim` makes rarer). The content vector is scaled to norm sqrt(dim / 2).
//
// Position (Vaswani et al. 2017): PE[p, 2i] = sin(p * w_i), PE[p, 2i + 1] = cos(p * w_i) with
// w_i = 10000^(-2i / dim); its norm is also sqrt(dim / 2), so content and position carry equal
// energy by default. Without positions attention cannot tell word order (the demo can show that
// with positionScale: 0).
//
// Determinism: only integer hashing and exact IEEE operations (see exact-math.js) are used; the
// sums run in a fixed order in float64 and are rounded to float32 once, when stored.

import { FNV_PRIME, fmix32, hashBasis } from './hash.js';
import { exactCos, exactSin, exactRootOfUnitInterval } from './exact-math.js';
import { MAX_MODEL_DIM, MAX_SEED } from './limits.js';
import { finiteOption, integerOption, optionsObject, typeError } from '../argument-checks.js';
import { DEFAULT_SEED } from '../vocabulary.js';

const NGRAM_SIZES = [2, 3, 4];
const BEGIN = '\u0002';
const END = '\u0003';
const WHOLE_TOKEN = '\u0001';
const POSITION_BASE_SQUARED_INVERSE = 1e-8; // (10000^2)^-1: w_i = (10000^(-2/dim))^i

/**
 * The features of one token: its character n-grams (over code points) and the whole token.
 * This is the definition; writeContent() hashes the same strings without building them.
 */
export function tokenFeatures(text) {
  const chars = [BEGIN, ...text.toLowerCase(), END];
  const features = [WHOLE_TOKEN + text.toLowerCase()];
  for (const n of NGRAM_SIZES) {
    for (let i = 0; i + n <= chars.length; i++) features.push(chars.slice(i, i + n).join(''));
  }
  return features;
}

// Scratch for featureHashes(), grown to the longest token seen: the marked token's UTF-16 code
// units, and where each code point starts in them (one entry past the last, too).
let units = new Uint16Array(64);
let pointStarts = new Int32Array(65);

/**
 * Calls visit(hash) with hashString(feature, seed) for every feature of tokenFeatures(text), in
 * the same order, but without creating the feature strings (the costliest part of embed()):
 * FNV-1a reads code units one at a time, so hashing a slice of the marked token's code units
 * gives exactly the hash of the joined n-gram string.
 */
export function featureHashes(text, seed, visit) {
  const lower = text.toLowerCase();
  const basis = hashBasis(seed);
  let h = Math.imul(basis ^ WHOLE_TOKEN.charCodeAt(0), FNV_PRIME);
  for (let i = 0; i < lower.length; i++) h = Math.imul(h ^ lower.charCodeAt(i), FNV_PRIME);
  visit(fmix32(h));

  const length = lower.length + 2;
  if (units.length < length) {
    units = new Uint16Array(2 * length);
    pointStarts = new Int32Array(2 * length + 1);
  }
  units[0] = BEGIN.charCodeAt(0);
  for (let i = 0; i < lower.length; i++) units[i + 1] = lower.charCodeAt(i);
  units[length - 1] = END.charCodeAt(0);
  // Code points as the string iterator ([...text]) splits them: a high surrogate followed by a
  // low one is one code point; any other unit (a lone surrogate too) is one on its own.
  let points = 0;
  for (let u = 0; u < length; points++) {
    pointStarts[points] = u;
    const pair =
      units[u] >= 0xd800 &&
      units[u] <= 0xdbff &&
      u + 1 < length &&
      units[u + 1] >= 0xdc00 &&
      units[u + 1] <= 0xdfff;
    u += pair ? 2 : 1;
  }
  pointStarts[points] = length;

  for (const n of NGRAM_SIZES) {
    for (let i = 0; i + n <= points; i++) {
      h = basis;
      for (let u = pointStarts[i]; u < pointStarts[i + n]; u++)
        h = Math.imul(h ^ units[u], FNV_PRIME);
      visit(fmix32(h));
    }
  }
}

let contentScratch = new Float64Array(64);

/**
 * The content vector of `text` before scaling, in a scratch array (valid until the next call),
 * and the scale that gives it norm sqrt(dim / 2) (0 for an all-zero vector).
 */
function contentVector(text, dim, seed) {
  if (contentScratch.length < dim) contentScratch = new Float64Array(dim);
  const vector = contentScratch;
  vector.fill(0, 0, dim);
  featureHashes(text, seed, (h) => {
    // The low bits pick the dimension, the top bit the sign: independent parts of one hash.
    vector[h % dim] += h >>> 31 ? -1 : 1;
  });
  let squared = 0;
  for (let d = 0; d < dim; d++) squared += vector[d] * vector[d];
  return { vector, scale: squared > 0 ? Math.sqrt(dim / 2 / squared) : 0 };
}

const frequencyCache = new Map();

/** w_i = 10000^(-2i / dim) for i < ceil(dim / 2), from exact operations only. */
export function positionFrequencies(dim) {
  let frequencies = frequencyCache.get(dim);
  if (!frequencies) {
    const ratio = exactRootOfUnitInterval(POSITION_BASE_SQUARED_INVERSE, dim);
    frequencies = new Float64Array(Math.ceil(dim / 2));
    let w = 1;
    for (let i = 0; i < frequencies.length; i++) {
      frequencies[i] = w;
      w *= ratio;
    }
    frequencyCache.set(dim, frequencies);
  }
  return frequencies;
}

// Rows already computed, per width: the exact sine is costly (thousands of calls per text), and
// a demo recomputes on every keystroke with the same widths. Grows to the longest text seen.
const positionCache = new Map();

function positionEncoding64(length, dim) {
  const cached = positionCache.get(dim);
  if (cached && cached.length >= length * dim) return cached.subarray(0, length * dim);
  const rows = Math.max(length, cached ? (2 * cached.length) / dim : 64);
  const out = new Float64Array(rows * dim);
  const frequencies = positionFrequencies(dim);
  for (let p = 0; p < rows; p++) {
    for (let d = 0; d < dim; d++) {
      const angle = p * frequencies[d >> 1];
      out[p * dim + d] = d % 2 === 0 ? exactSin(angle) : exactCos(angle);
    }
  }
  positionCache.set(dim, out);
  return out.subarray(0, length * dim);
}

/**
 * The sinusoidal position encoding, Float32Array [length, dim] (row p is position p).
 * @param {number} length
 * @param {number} dim
 */
export function positionEncoding(length, dim) {
  return new Float32Array(positionEncoding64(length, dim));
}

function tokenText(token, index) {
  if (typeof token === 'string') return token;
  const text = token !== null && typeof token === 'object' ? token.text : undefined; // read once
  if (typeof text === 'string') return text;
  throw typeError(`tokens[${index}]`, 'must be a string or a { text } token');
}

/**
 * Deterministic embeddings of tokens.
 * @param {Array<string | { text: string }>} tokens from tokenize(), or plain strings
 * @param {{ dim?: number, seed?: number, positionScale?: number }} [options]
 *   dim: width, 1..MAX_MODEL_DIM (default 64); seed: uint32 (default 1) that selects the hash;
 *   positionScale: weight of the position encoding (default 1; 0 leaves content only)
 * @returns {Float32Array} [tokens.length, dim], row-major
 */
export function embed(tokens, options) {
  if (!Array.isArray(tokens)) throw typeError('tokens', 'must be an array');
  const opts = optionsObject(options, 'options', ['dim', 'seed', 'positionScale']);
  const dim = integerOption(opts.dim, 'dim', { min: 1, max: MAX_MODEL_DIM, fallback: 64 });
  const seed = integerOption(opts.seed, 'seed', { min: 0, max: MAX_SEED, fallback: DEFAULT_SEED });
  const positionScale = finiteOption(opts.positionScale, 'positionScale', { min: 0, fallback: 1 });
  const texts = tokens.map(tokenText);

  const out = new Float32Array(texts.length * dim);
  const positions = positionScale === 0 ? null : positionEncoding64(texts.length, dim);
  for (let row = 0; row < texts.length; row++) {
    const { vector, scale } = contentVector(texts[row], dim, seed);
    const offset = row * dim;
    // content * scale + positionScale * position in float64, rounded to float32 once when
    // stored: the same operations in the same order in every engine.
    if (positions) {
      for (let d = 0; d < dim; d++)
        out[offset + d] = vector[d] * scale + positionScale * positions[offset + d];
    } else {
      for (let d = 0; d < dim; d++) out[offset + d] = vector[d] * scale;
    }
  }
  return out;
}
