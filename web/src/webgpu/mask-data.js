// The mask of a checked problem as the GPU reads it: scalar settings go into the kernels'
// uniforms (MASK_FIELDS), per-head and per-position data into one u32 storage buffer.
//
// Buffer sections (each present only when the option is given; its offset in words is the
// matching *At field, ABSENT otherwise):
//   keyLengths  one word per head
//   keyValid    one bit per key
//   custom      one bit per (query, key), row-major
//   globals     prefix counts of global positions: globals[p] = number of global tokens < p,
//               longest + 1 words, so "any global in [b, e)" is one subtraction (as in
//               src/attention/mask.cpp's count_global)
//   slopes      ALiBi's slope of each head, one f32 (its bits) per head (logit-terms.js)
//   queryBuckets, keyBuckets  hashed attention's bucket of every query [H][Nq][rounds] and key
//               [Hkv][Nk][rounds] (lsh-buckets.js); lshRounds is 0 without hashing
//
// Positions are compared as in include/attnlens/mask.h: key j at j, query i at i + queryOffset
// (custom masks and key padding are indexed by i and j themselves).

import { slopesOf } from './logit-terms.js';
import { lshWords, writeLshBuckets } from './lsh-buckets.js';

export const ABSENT = 0xffffffff;

export const MASK_FIELDS = [
  'causal',
  'windowed',
  'windowBefore',
  'windowAfter',
  'dilation',
  'beforeSpan',
  'afterSpan',
  'sparse',
  'stride',
  'summary',
  'keyLengthsAt',
  'keyValidAt',
  'customAt',
  'globalsAt',
  'slopesAt',
  'lshRounds',
  'queryBucketsAt',
  'keyBucketsAt',
  'kvGroup', // query heads per K/V head: query head h compares buckets with K/V head h / kvGroup
  'queryOffset',
  'longest',
  'restrictsNothing',
];

const SPARSE_CODES = { none: 0, strided: 1, fixed: 2 };
// Window reach in positions (before * dilation) can exceed 32 bits; any value at or above the
// longest sequence means "reaches everything", so clamping to 2^31 - 1 changes nothing.
const MAX_SPAN = 2 ** 31 - 1;

function packBits(flags, words, at) {
  for (let i = 0; i < flags.length; i++) {
    if (flags[i]) words[at + (i >>> 5)] |= 1 << (i & 31);
  }
}

/**
 * @param {object} options checked options (checks.js): causal, window, sparse, globalTokens,
 *   keyLengths, keyValid, mask, queryOffset, alibi, alibiSlopes, lsh
 * @param {{ heads: number, kvHeads: number, queryLength: number, keyLength: number,
 *   headDim: number }} shape
 * @param {{ q: Float32Array, k: Float32Array }} [tensors] the inputs, which lsh hashes
 * @returns {{ fields: object, words: Uint32Array }}
 */
export function maskData(options, shape, tensors) {
  const { heads, kvHeads, queryLength, keyLength } = shape;
  const queryOffset = options.queryOffset ?? 0;
  const longest = Math.max(queryLength + queryOffset, keyLength);
  const slopes = slopesOf(options, heads);
  const { window, sparse, globalTokens, keyLengths, keyValid, mask: custom } = options;
  const fields = {
    causal: options.causal ? 1 : 0,
    windowed: window ? 1 : 0,
    windowBefore: window?.before ?? 0,
    windowAfter: window?.after ?? 0,
    dilation: window?.dilation ?? 1,
    beforeSpan: window ? Math.min(window.before * window.dilation, MAX_SPAN) : 0,
    afterSpan: window ? Math.min(window.after * window.dilation, MAX_SPAN) : 0,
    sparse: SPARSE_CODES[sparse?.pattern ?? 'none'],
    stride: sparse?.stride ?? 1,
    summary: sparse?.summary ?? 1,
    keyLengthsAt: ABSENT,
    keyValidAt: ABSENT,
    customAt: ABSENT,
    globalsAt: ABSENT,
    slopesAt: ABSENT,
    lshRounds: options.lsh?.rounds ?? 0,
    queryBucketsAt: ABSENT,
    keyBucketsAt: ABSENT,
    kvGroup: heads / kvHeads,
    queryOffset,
    longest,
    // The same test as MaskSpec::is_global(): global tokens alone restrict nothing.
    restrictsNothing:
      !options.causal && !window && !sparse && !keyLengths && !keyValid && !custom && !options.lsh
        ? 1
        : 0,
  };

  let length = 0;
  const reserve = (field, words) => {
    fields[field] = length;
    length += words;
  };
  if (keyLengths) reserve('keyLengthsAt', heads);
  if (keyValid) reserve('keyValidAt', Math.ceil(keyLength / 32));
  if (custom) reserve('customAt', Math.ceil((queryLength * keyLength) / 32));
  if (globalTokens?.length) reserve('globalsAt', longest + 1);
  if (slopes) reserve('slopesAt', heads);
  const buckets = options.lsh ? lshWords(options.lsh, shape) : null;
  if (buckets) {
    reserve('queryBucketsAt', buckets.queries);
    reserve('keyBucketsAt', buckets.keys);
  }

  // A storage binding cannot be empty: keep one word when no section is present.
  const words = new Uint32Array(Math.max(length, 1));
  if (keyLengths) words.set(keyLengths, fields.keyLengthsAt);
  if (keyValid) packBits(keyValid, words, fields.keyValidAt);
  if (custom) packBits(custom, words, fields.customAt);
  if (globalTokens?.length) {
    const flags = new Uint8Array(longest);
    for (const position of globalTokens) flags[position] = 1;
    let count = 0;
    for (let p = 0; p <= longest; p++) {
      words[fields.globalsAt + p] = count;
      if (p < longest) count += flags[p];
    }
  }
  if (buckets) {
    writeLshBuckets(words, fields.queryBucketsAt, tensors.q, tensors.k, shape, options.lsh);
  }
  if (slopes) words.set(new Uint32Array(Float32Array.from(slopes).buffer), fields.slopesAt);
  return { fields, words };
}
