// The compute thread's real-model side: describe a model before it downloads, load it (progress
// and cancel), run it on the page's text with the model's own masks and with the reader's mask
// surgery, and open up one layer for the explain panel. Imported on demand (../compute-worker.js),
// so the playground never loads attnlens/models; the model lives here, never on the main thread.
import { labelHeads } from '../../src/interpret/head-labels.js';
import { layerVisibility } from '../../src/interpret/layer-masks.js';
import { aggregateGroups, tokenLabels, wordGroups } from '../../src/interpret/words.js';
import { tokenize } from '../../src/text/tokenize.js';
import { engine } from '../compute-core.js';
import { translateWith } from './translate-compute.js';

// The page shows at most this many tokens of a text, and fewer where every layer's and head's
// N x N float32 weights, which all cross to the page, would pass PAGE_ATTENTION_BYTES: GPT-2
// small's 12 x 12 heads reach 1,024 tokens (604 MB), a model with more heads stops sooner. The
// views draw long texts from pooled tiles (src/views/tiles.js).
export const PAGE_MODEL_TOKENS = 1024;
const PAGE_ATTENTION_BYTES = 640 * 2 ** 20;

/** How many tokens of a text the page runs and shows for this model (info: model.info). */
export function pageTokenLimit(info) {
  const byMemory = Math.floor(Math.sqrt(PAGE_ATTENTION_BYTES / (4 * info.layers * info.heads)));
  return Math.max(1, Math.min(PAGE_MODEL_TOKENS, info.maxPositions, byMemory));
}
const TOP_K = 10;
// Progress reaches the page at most this often (a download reports every 64 KiB chunk).
const PROGRESS_MS = 60;

const models = import('../../src/models/index.js');
let current = null; // { key, model, scores }

// The source loadModel takes: a Hub id (+ revision) or the File objects the reader picked.
function sourceOf({ source }) {
  return source.kind === 'files' ? source.files : source.id;
}

function loadOptions({ source, hubUrl }) {
  const options = {};
  if (source.kind === 'hub') {
    if (source.revision) options.revision = source.revision;
    if (hubUrl) options.hubUrl = hubUrl;
  }
  return options;
}

/** params: { source: { kind: 'hub', id, revision? } | { kind: 'files', files }, hubUrl, dtype } */
export async function describeModel(params) {
  const { describeModel: describe } = await models;
  return describe(sourceOf(params), {
    ...loadOptions(params),
    dtype: params.dtype ?? 'f32',
  });
}

/** Loads the model `params.key` names (describeModel's params); the previous one is freed. */
export async function loadModel(params, options) {
  if (current?.key === params.key) return infoOf(current);
  current?.model.dispose();
  current = null;
  const model = await openModel(params, options);
  current = { key: params.key, model };
  return infoOf(current);
}

/**
 * A model from describeModel's params, on its own engine (model.dispose() frees it whole), with
 * its download's progress thinned out; shared with the second model of a comparison.
 */
export async function openModel(params, { signal, progress }) {
  const { loadModel: load } = await models;
  let last = 0;
  return load(sourceOf(params), {
    ...loadOptions(params),
    dtype: params.dtype ?? 'f32',
    // Long texts on a hardware GPU run the forward there (the result is wasm's, within 1e-5);
    // without one, or on a software adapter, everything stays on wasm. info.backend says which.
    backend: 'auto',
    signal,
    onProgress: (event) => {
      const now = Date.now();
      const done = event.total !== null && event.loaded === event.total;
      if (now - last < PROGRESS_MS && !done) return;
      last = now;
      progress(event);
    },
  });
}

export function infoOf({ key, model }) {
  return {
    key,
    ...model.info,
    fromCache: model.source.fromCache,
    bundled: model.source.kind === 'bundled',
    // vision models have no tokenizer (and run pictures, runPictureModel)
    maskToken: model.tokenizer?.special.mask?.text ?? null,
    // the token the sinks plot names beside the first: BOS, or [CLS] for bidirectional models
    bosToken: model.tokenizer?.special[model.info.causal ? 'bos' : 'cls']?.text ?? null,
  };
}

/**
 * params: { key, pixels: { data, width, height } (RGBA), mask?: a mask surgery in the mask
 * notation (patch:K) }: picture-compute.js runPicture.
 */
export async function runPictureModel({ key, pixels, mask = null }) {
  const model = live(key);
  if (!model.info.vision) throw new TypeError('model: this model does not take pictures');
  const { runPicture } = await import('./picture-compute.js');
  return runPicture(model, pixels, mask);
}

export function live(key) {
  if (!current || current.key !== key) throw new Error('model: the model is not loaded');
  return current.model;
}

/**
 * Every head's scores on the model's probe (Model.headScores: random ordinary tokens repeated
 * twice), measured once per loaded model: a property of the model, not of the text. The page
 * asks after its first run, so the text's views never wait for it.
 * params: { key } @returns {{ key, heads }}
 */
export async function scoreHeads({ key }) {
  const entry = current;
  if (!entry || entry.key !== key) throw new Error('model: the model is not loaded');
  entry.scores ??= (await entry.model.headScores()).heads;
  return { key, heads: entry.scores };
}

// The text cut to the page's tokens (pageTokenLimit; a pair is kept whole and must fit).
export function fitText(model, text, pair) {
  const limit = pageTokenLimit(model.info);
  const encode = (t) => model.tokenizer.encode(t, pair ? { pair } : {});
  let { tokens } = encode(text);
  const total = tokens.length;
  let cut = text;
  while (tokens.length > limit) {
    const words = tokens.filter((token) => token.segment === 0 && !token.special);
    const keep = words[Math.max(0, words.length - (tokens.length - limit) - 1)];
    if (!keep || keep.end >= cut.length) break;
    cut = cut.slice(0, keep.end);
    ({ tokens } = encode(cut));
  }
  const shown = Math.min(tokens.length, limit);
  return { text: cut, truncated: total > shown ? { shown, total } : null };
}

// Each layer's masks for a surgery ({ mask, layer }: one layer, or every layer when null).
function masksFor(info, surgery) {
  if (!surgery) return info.layerMasks;
  return info.layerMasks.map((own, l) =>
    surgery.layer === null || surgery.layer === l ? surgery.mask : own,
  );
}

async function visibility(masks, n) {
  return layerVisibility(await engine(), masks, n);
}

// One run of the model on the page's text: every layer's weights and visibility, head labels
// from them, predictions.
export async function runOnce(model, text, pair, masks) {
  const info = model.info;
  // truncate: a pair too long for the model keeps its first positions (fitText cut the text).
  const result = await model.run(text, {
    pair: pair || undefined,
    topK: TOP_K,
    masks,
    truncate: true,
    sinks: true,
  });
  const n = result.tokens.length;
  const visible = await visibility(masks, n);
  const special = result.tokens.map((token) => token.special);
  return {
    tokens: result.tokens,
    attention: result.attention,
    visible,
    labels: labelHeads(result.attention, { ...info, n, masks: visible, special }),
    predictions: result.predictions,
    layerMasks: masks,
    sinks: result.sinks,
  };
}

// A run as the page draws it: over words when `groups` are given; the layers' visibility in one
// array [layers, rows, rows].
function forPage(run, groups, info) {
  const n = run.tokens.length;
  const { attention, layerVisible } = groups
    ? aggregateRun(run.attention, run.visible, groups, info, n)
    : { attention: run.attention, layerVisible: run.visible };
  const size = groups ? groups.length ** 2 : n * n;
  const visible = new Uint8Array(info.layers * size);
  layerVisible.forEach((mask, l) => visible.set(mask, l * size));
  const { labels, predictions, layerMasks } = run;
  // The sinks are shares of tokens: over words there are none (the view says so).
  const sinks = groups ? null : run.sinks;
  return { attention, visible, labels, predictions, layerMasks, sinks };
}

function aggregateRun(attention, visible, groups, { layers, heads }, n) {
  const members = groups.map((group) => group.tokens);
  const g = groups.length;
  const out = new Float32Array(layers * heads * g * g);
  const layerVisible = [];
  for (let l = 0; l < layers; l++) {
    for (let h = 0; h < heads; h++) {
      const at = (l * heads + h) * n * n;
      const word = aggregateGroups(attention.subarray(at, at + n * n), {
        rowGroups: members,
        colGroups: members,
        cols: n,
        mask: visible[l],
      });
      out.set(word.weights, (l * heads + h) * g * g);
      if (h === 0) layerVisible.push(word.mask);
    }
  }
  return { attention: out, layerVisible };
}

/**
 * params: { key, text, pair, surgery: { mask, layer } | null, words: boolean }
 * @returns the run with the model's own masks (`own`) and, with a surgery, with it (`surgery`),
 *   over the page's tokens or words (`rows`), plus the model tokens and truncation
 */
export async function runModel(params) {
  return runOn(live(params.key), params);
}

/** runModel on a given model (the page's, or the second of a comparison). */
export async function runOn(model, params) {
  const pair = model.info.causal ? '' : params.pair;
  const fitted = fitText(model, params.text, pair);
  const started = performance.now();
  const own = await runOnce(model, fitted.text, pair, model.info.layerMasks);
  const surgery = params.surgery
    ? await runOnce(model, fitted.text, pair, masksFor(model.info, params.surgery))
    : null;
  return pageResult(
    model,
    { ...fitted, key: params.key, pair, own, surgery, words: params.words },
    started,
  );
}

/**
 * A run (runOnce's form: tokens with their spans in `text`, attention, visible, labels,
 * predictions, layerMasks; the surgery's beside it or null) as the page draws it: over tokens
 * or words (`rows`). Shared with the Continue mode's growing sequence (continue-compute.js).
 */
export function pageResult(model, { key, text, pair, truncated, own, surgery, words }, started) {
  const texts = [text, pair];
  const groups = words
    ? wordGroups(
        own.tokens,
        texts.map((t) => (t ? tokenize(t, { granularity: 'word' }) : [])),
      )
    : null;
  const tokens = tokenLabels(own.tokens, texts);
  const rows = groups
    ? groups.map((group) => ({
        text: group.special
          ? tokens[group.tokens[0]].text
          : texts[group.segment].slice(group.start, group.end),
        start: group.start,
        end: group.end,
        special: group.special,
        segment: group.segment,
        pieces: group.tokens.map((i) => tokens[i].text),
      }))
    : tokens;
  return {
    kind: 'model',
    key,
    text,
    pair: pair || null,
    truncated,
    tokens,
    rows,
    words: Boolean(groups),
    own: forPage(own, groups, model.info),
    surgery: surgery && forPage(surgery, groups, model.info),
    ms: performance.now() - started,
  };
}

/**
 * One layer opened up for the explain panel, on the model's tokens: its q, k, v, the raw q.k of
 * every head, the weights and mask (with the surgery when there is one: what the reader sees).
 * params: runModel's plus { layer }
 */
export async function explainLayer(params) {
  const model = live(params.key);
  const info = model.info;
  const pair = info.causal ? '' : params.pair;
  const { text } = fitText(model, params.text, pair);
  const masks = masksFor(info, params.surgery);
  const run = await model.run(text, {
    pair: pair || undefined,
    masks,
    projections: params.layer,
    truncate: true,
  });
  const n = run.tokens.length;
  const { q, k, v, scale, headDim } = run.projections;
  const [mask] = await visibility([masks[params.layer]], n);
  const heads = [];
  for (let h = 0; h < info.heads; h++) {
    const scores = new Float32Array(n * n);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        let dot = 0;
        for (let c = 0; c < headDim; c++) {
          dot += q[(h * n + i) * headDim + c] * k[(h * n + j) * headDim + c];
        }
        scores[i * n + j] = dot;
      }
    }
    const at = (params.layer * info.heads + h) * n * n;
    heads.push({ scores, weights: run.attention.slice(at, at + n * n) });
  }
  return {
    key: params.key,
    layer: params.layer,
    scale,
    headDim,
    q: q.slice(),
    k: k.slice(),
    v: v.slice(),
    heads,
    mask,
    tokens: tokenLabels(run.tokens, [text, pair]),
  };
}

/** The loaded Marian's translation of params.text, streamed (translate-compute.js). */
export function translateText(params, context) {
  return translateWith(live(params.key), params, context);
}

/**
 * The loaded causal model's continuation of params.text, streamed with the matrix growing
 * (continue-compute.js: loaded with the first continuation).
 */
export async function continueText(params, context) {
  const { continueWith } = await import('./continue-compute.js');
  return continueWith(live(params.key), params, context);
}

/** Frees the loaded model (the reader went back to the untrained layer). */
export function releaseModel() {
  current?.model.dispose();
  current = null;
  return null;
}
