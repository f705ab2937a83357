// The words attnlens's options take, and their defaults, written once. The argument checks, the
// text helpers, the CLI, the demo and the widget all import them from here, so a new score or
// granularity is added in one place. The words the wasm core also knows (scores, strategies,
// sparse patterns) are its call block's codes, generated from bindings/call_block.h into
// call-block-layout.js and into index.d.ts's unions (web/scripts/block-layouts.mjs).
//
// Colour scale names live with the scales themselves (views/colormap.js: SCALE_NAMES), and the
// mask notation's patterns with the notation (mask-notation.js: MASK_PATTERNS).

import { CALL_BLOCK_LAYOUT } from './call-block-layout.js';

/** Score functions, as `options.score` names them (the call block's score codes, in order). */
export const SCORES = CALL_BLOCK_LAYOUT.scores;
export const DEFAULT_SCORE = 'scaled-dot';

/** Kernel strategies: 'auto' picks streaming unless weights or scores are asked for. */
export const STRATEGIES = CALL_BLOCK_LAYOUT.strategies;
export const DEFAULT_STRATEGY = 'auto';

/** The options that restrict which keys a query sees (they combine: all must hold). */
export const MASK_OPTIONS = [
  'causal',
  'window',
  'sparse',
  'globalTokens',
  'keyLengths',
  'keyValid',
  'mask',
  'queryOffset',
];

/**
 * The options between the score and the softmax (include/attnlens/attention.h): soft cap, bias,
 * ALiBi, top-k and hashed attention. Both backends run them (WebGPU: webgpu/logit-terms.js,
 * top-k and lsh-buckets.js; a call it cannot run, as topK with the streaming strategy, goes to
 * wasm with the reason), and attentionBackward() refuses them.
 */
export const LOGIT_OPTIONS = ['softcap', 'bias', 'alibi', 'alibiSlopes', 'topK', 'lsh'];

/** Sparse Transformer patterns of `options.sparse.pattern` (code 0, 'none', is no pattern). */
export const SPARSE_PATTERNS = Object.freeze(
  CALL_BLOCK_LAYOUT.sparsePatterns.filter((name) => name !== 'none'),
);

/** How tokenize() splits text. */
export const GRANULARITIES = ['word', 'char', 'subword'];
export const DEFAULT_GRANULARITY = 'word';

/** Text-to-attention defaults: analyze(), the CLI, the demo's compute thread, the widget. */
export const DEFAULT_HEADS = 4;
export const DEFAULT_HEAD_DIM = 16;
export const DEFAULT_SEED = 1;
export const DEFAULT_TEMPERATURE = 1;

/** Views drawn as a picture (canvas or SVG), in the widget and the demo. */
export const GRAPHIC_VIEWS = ['matrix', 'lines', 'heads'];
/** Every view of the demo: the pictures and the numbers table. */
export const VIEWS = [...GRAPHIC_VIEWS, 'numbers'];
export const DEFAULT_VIEW = 'matrix';

/** Most heads the demo and the widget offer: the head picker and the thumbnails stay legible. */
export const MAX_PAGE_HEADS = 8;
