// The textual mask notation, one grammar for every place a mask is written as text: the demo's
// URL and controls, the widget's `mask` attribute and the CLI's --mask. Parts are joined by "+"
// and must all hold, e.g. "causal+local:2", "dilated:2:2", "strided:3+tokens:0,5":
//
//   global          no restriction (the default; also written "full")
//   causal          a query sees itself and earlier keys only
//   local:W         keys within W positions on either side (also "window:W")
//   dilated:W:D     every D-th key, W steps to either side
//   strided:S       Sparse Transformer strided: |i - j| < S or (i - j) divisible by S
//   fixed:S:C       Sparse Transformer fixed: same block of S, or the last C of every block
//   tokens:a,b,...  positions that see and are seen by everything (also "global-tokens:a,b")
//   align:W         monotonic alignment window for cross-attention: target i sees the source
//                   keys within W of its proportional position round(i * (Ns - 1) / (Nt - 1));
//                   with equal lengths it is local:W
//   pad:a,b,...     key padding: keys at these positions are seen by no query
//   patch:K         a picture's 2-D local window (also "window2d:K"): each patch sees the K x K
//                   patches around it on the patch grid (K odd); the class token and register
//                   tokens stay global, seeing and seen by every token, as in the windowed ViTs
//                   (Swin, ViTDet); only a vision model's run(image) has a grid to apply it to
//   topk:K          dynamic sparsity: each query keeps only its K highest-scoring visible keys
//   lsh:B:R:S       hashed (Reformer-style) attention: a query keeps the keys that share one of
//                   its B hash buckets in one of R rounds, hashes drawn from seed S
//
// Numbers are written in digits; one left out takes its default (defaultMask(): "local" is
// "local:2", "patch" is "patch:3"). At most one of local, dilated, strided, fixed, align and
// patch can be given; position lists add up. top-k and LSH choose keys by their scores or hashes,
// so they combine with every pattern (and with each other) and apply between two texts as well.
// Cross-attention queries and keys come from different texts, so positions in one say nothing
// about the other: maskForMode() keeps only what applies there (align, pad, topk, lsh).
// Whatever parseMask() accepts, formatMask() writes back so that it parses to the same mask.

import { attnlensError } from './errors.js';

/** The patterns a mask chooses between (besides being causal and having global tokens). */
export const MASK_PATTERNS = ['global', 'local', 'dilated', 'strided', 'fixed', 'align', 'patch'];

/** The patterns that make sense between two texts (cross-attention). */
export const CROSS_MASK_PATTERNS = ['global', 'align'];

// Each part's numbers: the mask field each one sets and the least value it may take.
const PARTS = new Map([
  ['global', []],
  ['causal', []],
  ['local', [['window', 0]]],
  [
    'dilated',
    [
      ['window', 0],
      ['dilation', 1],
    ],
  ],
  ['strided', [['stride', 1]]],
  [
    'fixed',
    [
      ['stride', 1],
      ['summary', 1],
    ],
  ],
  ['align', [['window', 0]]],
  ['patch', [['patchWindow', 1]]],
  ['tokens', null], // a list of positions
  ['pad', null],
  ['topk', [['topK', 1]]],
  [
    'lsh',
    [
      ['buckets', 2],
      ['rounds', 1],
      ['hashSeed', 0],
    ],
  ],
]);
// Parts that choose keys by score or hash: at most one of each, combined with any pattern.
const SELECTIONS = ['topk', 'lsh'];
// What a selection holds when its part is absent (so the demo's sliders keep their last value).
const SELECTION_OFF = { topK: 0, buckets: 0 };
// The values a selection part takes when written without numbers ("topk", "lsh").
const SELECTION_DEFAULTS = { topK: 3, buckets: 4, rounds: 1, hashSeed: 0 };
// The mask field each list of positions fills, and what the positions are called in messages.
const LISTS = new Map([
  ['tokens', ['globalTokens', 'global token']],
  ['pad', ['paddedKeys', 'padded key']],
]);
const ALIASES = new Map([
  ['full', 'global'],
  ['window', 'local'],
  ['global-tokens', 'tokens'],
  ['window2d', 'patch'],
]);

/** Every name a part may start with, aliases included. */
export const MASK_PART_NAMES = [...PARTS.keys(), ...ALIASES.keys()];

const SYNTAX =
  'global, causal, local:W, dilated:W:D, strided:S, fixed:S:C, align:W, patch:K, tokens:i,j, ' +
  'pad:i,j, topk:K or lsh:B:R:S';

/** The selection parts' values when written without numbers: topk is topk:3, lsh is lsh:4:1:0. */
export const DEFAULT_SELECTION = Object.freeze({ ...SELECTION_DEFAULTS });

export function defaultMask() {
  return {
    pattern: 'global',
    causal: false,
    window: 2,
    dilation: 2,
    stride: 3,
    summary: 1,
    patchWindow: 3,
    globalTokens: [],
    paddedKeys: [],
    ...SELECTION_OFF, // topK and buckets 0: no top-k, no LSH
    rounds: SELECTION_DEFAULTS.rounds,
    hashSeed: SELECTION_DEFAULTS.hashSeed,
  };
}

// A RangeError whose message names the part at fault ("mask: local:x: expected ...").
function partError(part, detail) {
  return attnlensError('out_of_range', 'mask', `${part}: ${detail}`, { part });
}

function count(text, field, min, part) {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min) {
    const kind = min > 0 ? 'a positive' : 'a non-negative';
    throw partError(part, `expected ${kind} integer for the ${field}, got "${text}"`);
  }
  return value;
}

/**
 * "causal+local:2" -> { pattern, causal, window, dilation, stride, summary, patchWindow,
 * globalTokens, paddedKeys, topK, buckets, rounds, hashSeed } (the position lists sorted, without
 * repeats; topK 0: no top-k, buckets 0: no LSH). Throws a RangeError (code
 * 'out_of_range', parameter 'mask', `part` the part at fault) whose message names the bad part.
 */
export function parseMask(text) {
  const mask = defaultMask();
  const lists = { globalTokens: new Set(), paddedKeys: new Set() };
  let patternPart = null;
  const selectionParts = new Map();
  const parts = String(text ?? '')
    .split('+')
    .map((p) => p.trim())
    .filter(Boolean);
  for (const part of parts) {
    const [written, ...values] = part.split(':');
    const name = ALIASES.get(written.toLowerCase()) ?? written.toLowerCase();
    if (!PARTS.has(name)) {
      throw attnlensError('out_of_range', 'mask', `unknown part "${part}" (expected ${SYNTAX})`, {
        part,
      });
    }
    if (LISTS.has(name)) {
      const [field, noun] = LISTS.get(name);
      const list = values.join(':').split(',').filter(Boolean);
      if (values.length > 1 || list.length === 0) {
        throw partError(part, `expected positions after "${written}:", e.g. ${written}:0,3`);
      }
      for (const position of list) lists[field].add(count(position, noun, 0, part));
      continue;
    }
    const fields = PARTS.get(name);
    if (values.length > fields.length) {
      const most = fields.length ? `at most ${fields.length}` : 'no';
      throw partError(
        part,
        `expected ${most} value${fields.length > 1 ? 's' : ''} after "${written}"`,
      );
    }
    if (SELECTIONS.includes(name)) {
      if (selectionParts.has(name)) {
        throw partError(part, `only one ${name} can be given (${selectionParts.get(name)} is one)`);
      }
      selectionParts.set(name, part);
      for (const [field] of fields) mask[field] = SELECTION_DEFAULTS[field];
    }
    fields.forEach(([field, min], i) => {
      if (values[i] !== undefined) mask[field] = count(values[i], field, min, part);
    });
    if (name === 'lsh' && mask.buckets % 2 !== 0) {
      throw partError(
        part,
        `the buckets must be even (a round picks one of B / 2 projections or its negative)`,
      );
    }
    if (name === 'patch' && mask.patchWindow % 2 === 0) {
      throw partError(
        part,
        `the window must be odd (K x K patches centred on each patch), got ${mask.patchWindow}`,
      );
    }
    if (name === 'causal') mask.causal = true;
    if (SELECTIONS.includes(name)) continue;
    if (name === 'global' || name === 'causal') continue;
    if (patternPart !== null) {
      throw partError(
        part,
        `only one local or dilated window or sparse pattern can be given (${patternPart} is one)`,
      );
    }
    patternPart = part;
    mask.pattern = name;
    if (name === 'fixed' && mask.summary > mask.stride) {
      throw partError(
        part,
        `the summary (${mask.summary}) must be at most the stride (${mask.stride})`,
      );
    }
  }
  for (const [field, set] of Object.entries(lists)) mask[field] = [...set].sort((a, b) => a - b);
  return mask;
}

export function formatMask(mask) {
  const parts = [];
  if (mask.causal) parts.push('causal');
  if (mask.pattern === 'local') parts.push(`local:${mask.window}`);
  if (mask.pattern === 'dilated') parts.push(`dilated:${mask.window}:${mask.dilation}`);
  if (mask.pattern === 'strided') parts.push(`strided:${mask.stride}`);
  if (mask.pattern === 'fixed') parts.push(`fixed:${mask.stride}:${mask.summary}`);
  if (mask.pattern === 'align') parts.push(`align:${mask.window}`);
  if (mask.pattern === 'patch') parts.push(`patch:${mask.patchWindow}`);
  if (mask.topK > 0) parts.push(`topk:${mask.topK}`);
  if (mask.buckets > 0) parts.push(`lsh:${mask.buckets}:${mask.rounds}:${mask.hashSeed}`);
  if (mask.globalTokens.length) parts.push(`tokens:${mask.globalTokens.join(',')}`);
  if (mask.paddedKeys.length) parts.push(`pad:${mask.paddedKeys.join(',')}`);
  return parts.join('+') || 'global';
}

/**
 * The mask that applies to `mode` ('self' or 'cross'). Cross-attention queries and keys are
 * positions in two different texts: causal, local, dilated and sparse patterns and global tokens
 * compare those positions as if they were one sequence (which no model does), so they are
 * dropped there and only the alignment window and key padding remain. In self-attention an
 * alignment window is a local window of the same width.
 */
export function maskForMode(mask, mode) {
  if (mode === 'cross') {
    return {
      ...mask,
      causal: false,
      pattern: CROSS_MASK_PATTERNS.includes(mask.pattern) ? mask.pattern : 'global',
      globalTokens: [],
    };
  }
  return mask.pattern === 'align' ? { ...mask, pattern: 'local' } : mask;
}

/** Which source key target query `row` of `rows` is aligned with, among `cols` keys. */
export function alignedKey(row, rows, cols) {
  return rows > 1 ? Math.round((row * (cols - 1)) / (rows - 1)) : Math.floor((cols - 1) / 2);
}

// The explicit [rows * cols] visibility matrix of align:W (every row sees its aligned key).
function alignmentMatrix(rows, cols, width) {
  const matrix = new Uint8Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const centre = alignedKey(r, rows, cols);
    const from = Math.max(0, centre - width);
    const to = Math.min(cols - 1, centre + width);
    matrix.fill(1, r * cols + from, r * cols + to + 1);
  }
  return matrix;
}

/**
 * The explicit [n * n] visibility matrix of patch:K over a picture's tokens: `first` tokens that
 * are not patches (the class token, the registers), then the `rows` x `columns` patches row by
 * row. A patch sees the patches at most (K - 1) / 2 rows and columns away; the first tokens see
 * and are seen by every token, and so are the positions in `globalTokens` (the engine ANDs a
 * custom matrix with everything else, so they are written into it here).
 */
export function patchWindowMatrix({ rows, columns, first }, k, globalTokens = []) {
  const n = first + rows * columns;
  const reach = (k - 1) / 2;
  const matrix = new Uint8Array(n * n);
  const global = new Uint8Array(n);
  global.fill(1, 0, first);
  for (const p of globalTokens) if (p < n) global[p] = 1;
  for (let i = 0; i < n; i++) {
    const row = i * n;
    if (global[i]) {
      matrix.fill(1, row, row + n);
      continue;
    }
    for (let j = 0; j < n; j++) if (global[j]) matrix[row + j] = 1;
    const r = Math.floor((i - first) / columns);
    const c = (i - first) % columns;
    for (let kr = Math.max(0, r - reach); kr <= Math.min(rows - 1, r + reach); kr++) {
      const from = first + kr * columns + Math.max(0, c - reach);
      const to = first + kr * columns + Math.min(columns - 1, c + reach);
      matrix.fill(1, row + from, row + to + 1);
    }
  }
  return matrix;
}

/**
 * The attention options of a parsed mask. Given `queryLength` (and `keyLength` for
 * cross-attention), sizes are clamped to what the engine accepts for that many tokens (a window
 * wider than the text is the whole text) and positions past the end are dropped, so typing
 * shorter text never turns a mask into an error. Without lengths nothing is clamped: the engine
 * reports what does not fit (the CLI shows that as a usage error). An alignment window and key
 * padding are spelt out per position, so they need the lengths. A patch window needs `patches`,
 * the picture's { rows, columns, first } (see patchWindowMatrix()), and no lengths.
 */
export function maskOptions(mask, queryLength, keyLength = queryLength, patches = null) {
  if (mask.pattern === 'patch') {
    if (!patches) {
      throw partError(
        `patch:${mask.patchWindow}`,
        "needs a picture's patch grid (a vision model's run(image))",
      );
    }
    const n = patches.first + patches.rows * patches.columns;
    // The rest (causal, padding, top-k, LSH) as for any mask over the n tokens.
    const rest = maskOptions({ ...mask, pattern: 'global', globalTokens: [] }, n);
    return { mask: patchWindowMatrix(patches, mask.patchWindow, mask.globalTokens), ...rest };
  }
  const n = queryLength === undefined ? Infinity : Math.max(queryLength, keyLength);
  const options = {};
  if (mask.causal) options.causal = true;
  if (mask.pattern === 'local') {
    options.window = Math.min(mask.window, n); // the same number before and after, dilation 1
  } else if (mask.pattern === 'dilated') {
    options.window = {
      before: Math.min(mask.window, n),
      after: Math.min(mask.window, n),
      dilation: Math.min(mask.dilation, n),
    };
  } else if (mask.pattern === 'strided') {
    options.sparse = { pattern: 'strided', stride: Math.min(mask.stride, n) };
  } else if (mask.pattern === 'fixed') {
    const stride = Math.min(mask.stride, n);
    options.sparse = { pattern: 'fixed', stride, summary: Math.min(mask.summary, stride) };
  } else if (mask.pattern === 'align') {
    if (queryLength === undefined) {
      throw partError(`align:${mask.window}`, "needs the texts' lengths (the demo and the widget)");
    }
    options.mask = alignmentMatrix(queryLength, keyLength, Math.min(mask.window, n));
  }
  const tokens = mask.globalTokens.filter((p) => p < n);
  if (tokens.length) options.globalTokens = tokens;
  if (mask.topK > 0)
    options.topK = keyLength === undefined ? mask.topK : Math.min(mask.topK, keyLength);
  if (mask.buckets > 0) {
    options.lsh = { buckets: mask.buckets, rounds: mask.rounds, seed: mask.hashSeed };
  }
  if (mask.paddedKeys.length) {
    if (queryLength === undefined) {
      throw partError(`pad:${mask.paddedKeys.join(',')}`, "needs the texts' lengths");
    }
    const padded = mask.paddedKeys.filter((p) => p < keyLength);
    if (padded.length) {
      options.keyValid = new Uint8Array(keyLength).fill(1);
      for (const p of padded) options.keyValid[p] = 0;
    }
  }
  return options;
}
