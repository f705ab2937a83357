// What <attn-lens> shows of real models: a snapshot file (src/snapshot/: read and checked, no
// model, no compute, no download beyond the file itself), or a Hub model that the reader loads
// with a click on "Load model (size)", never on page load. Both come out in one form, the
// snapshot's, so the widget draws a live model and a snapshot of it the same way. The widget
// imports this module only when an element has a `snapshot` or `model` attribute.
import { readClampedInteger } from '../src/argument-checks.js';
import { attnlensError } from '../src/errors.js';
import { layerVisibility } from '../src/interpret/layer-masks.js';
import { tokenLabels } from '../src/interpret/words.js';
import { loadFailure } from '../src/models/load-failure.js';
import { readSnapshot, snapshotHead } from '../src/snapshot/read.js';
import { SNAPSHOT_LIMITS } from '../src/snapshot/format.js';
import { placeParams } from '../src/share-link.js';
import { isBundledModel } from '../src/models/files/bundled.js';
import { MAX_IMAGE_FILE_BYTES } from '../src/vision/image-input.js';
import { el, formatBytes } from '../src/views/dom.js';
import { translationLens, translationResult } from './widget-translation.js';

// A page script may point widgets at a Hub mirror (the browser tests' local Hub) by setting
// this global before the widget loads; no attribute and no address can.
const HUB_URL = typeof globalThis.ATTNLENS_HUB_URL === 'string' ? globalThis.ATTNLENS_HUB_URL : '';
const hubOptions = (revision) => ({
  ...(HUB_URL ? { hubUrl: HUB_URL } : {}),
  ...(revision ? { revision } : {}),
});

// How long a file the page names (a snapshot, a picture) may take to arrive, body included.
const FETCH_TIMEOUT_MS = 30000;

/**
 * The bytes at `url` (relative to the page), at most `cap` of them: a false or missing
 * Content-Length is read only up to the cap, and a server that stalls is cut off after
 * `timeoutMs` (FETCH_TIMEOUT_MS). Errors name `what` ('snapshot', 'image') as their parameter.
 */
export async function fetchCapped(url, { cap, what, signal, timeoutMs = FETCH_TIMEOUT_MS }) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const stop = () => controller.abort();
  signal?.addEventListener('abort', stop, { once: true });
  const tooLarge = () =>
    attnlensError('out_of_range', what, `${url} is larger than the cap of ${cap} bytes`);
  try {
    const response = await fetch(new URL(url, document.baseURI), { signal: controller.signal });
    if (!response.ok) {
      throw attnlensError('not_found', what, `${url} answered HTTP ${response.status}`);
    }
    if (Number(response.headers.get('content-length')) > cap) throw tooLarge();
    const reader = response.body.getReader();
    const chunks = [];
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > cap) {
        reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
    const bytes = new Uint8Array(total);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    return bytes;
  } catch (error) {
    if (!controller.signal.aborted || signal?.aborted) throw error;
    throw attnlensError('network', what, `${url} did not arrive within ${timeoutMs / 1000} s`);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', stop);
  }
}

/** The snapshot at `url` (relative to the page), read and checked. */
export async function fetchSnapshot(url, signal) {
  const bytes = await fetchCapped(url, { cap: SNAPSHOT_LIMITS.bytes, what: 'snapshot', signal });
  return readSnapshot(new TextDecoder().decode(bytes));
}

/** The download size of a Hub model (bytes, or null when unknown or offline). */
export async function modelDownloadBytes(id, revision) {
  const { listModelFiles } = await import('../src/models/index.js');
  try {
    return (await listModelFiles(id, hubOptions(revision))).downloadBytes;
  } catch {
    return null;
  }
}

// `${id}@${revision}` -> Promise of the model: one load for all the page's widgets.
const loaded = new Map();

/**
 * Loads a Hub model (once per page, on an engine of the models module of its own; `attention`,
 * the widgets' shared attention-only engine, draws the layers' masks) and runs it on `text`, as
 * a snapshot.
 */
export async function runModel({ id, revision, text, picture, attention, onProgress }) {
  const key = `${id}@${revision ?? ''}`;
  if (!loaded.has(key)) {
    const { loadModel } = await import('../src/models/index.js');
    const promise = loadModel(id, { ...hubOptions(revision), onProgress });
    loaded.set(key, promise);
    promise.catch(() => loaded.delete(key));
  }
  const model = await loaded.get(key);
  // A vision model shows where its heads look in the picture (widget-picture.js).
  if (model.info.vision || picture) {
    const { pictureLens } = await import('./widget-picture.js');
    return pictureLens(model, { id, revision, picture });
  }
  // An encoder-decoder (Marian) translates: its alignment is what it shows.
  if (model.info.encoderLayers !== undefined) return translationLens(model, { id, revision, text });
  const run = await model.run(text, { truncate: true });
  const { info } = model;
  const n = run.tokens.length;
  const visible = layerVisibility(attention, info.layerMasks, n);
  const flat = new Uint8Array(info.layers * n * n);
  visible.forEach((mask, l) => flat.set(mask, l * n * n));
  const all = (count) => Array.from({ length: count }, (_, i) => i);
  return {
    model: { id, revision: revision ?? 'main', ...info },
    text,
    pair: null,
    tokens: tokenLabels(run.tokens, [text]),
    layers: all(info.layers),
    heads: all(info.heads),
    n,
    attention: run.attention,
    visible: flat,
    masks: { surgery: null, surgeryLayer: null, layerMasks: info.layerMasks },
    predictions: run.predictions,
    selected: { layer: 0, head: 0 },
    backend: info.backend,
  };
}

/**
 * The heads of `layer` in a lens (a snapshot, or a model's run in that form) as the widget's
 * views take them: [{ weights, mask }] and the model's head index of each.
 */
export function lensLayer(lens, layer) {
  return {
    indices: lens.heads,
    heads: lens.heads.map((head) => snapshotHead(lens, layer, head)),
    mask: lens.masks.layerMasks[lens.layers.indexOf(layer)],
  };
}

/**
 * What one element shows: its snapshot, or its model's run once the reader pressed Load. Kept
 * while the element's attributes name the same thing.
 */
export class LensLoader {
  // parts: the element's header, view and status; t(key, values) its strings; engine() the
  // page's shared engine; onLoadClick() after the reader pressed Load.
  constructor(parts, { t, engine, onLoadClick }) {
    Object.assign(this, { parts, t, engine, onLoadClick });
    this.key = '';
    this.lens = null;
    this.clickedFor = null; // the model the reader pressed Load for: another one asks again
  }

  /** The lens `element`'s attributes name; null while a model waits for its Load click. */
  async lensFor(element, isCurrent) {
    const snapshot = element.getAttribute('snapshot');
    const id = element.getAttribute('model');
    const revision = element.getAttribute('revision') || undefined;
    const text = element.getAttribute('text') ?? element.textContent.trim();
    const image = element.getAttribute('image');
    const input = image !== null ? `image:${image}` : text;
    const key = snapshot !== null ? `snapshot:${snapshot}` : `model:${id}@${revision}:${input}`;
    if (key === this.key) return this.lens;
    const { parts, t } = this;
    if (snapshot !== null) {
      parts.status.textContent = t('widgetLoading');
      return this.#keep(key, await fetchSnapshot(snapshot), isCurrent);
    }
    const model = `${id}@${revision}`;
    // A model attnlens carries downloads nothing from elsewhere: it runs without a Load click.
    if (this.clickedFor !== model && !isBundledModel(id)) {
      await offerLoad(parts, {
        modelId: id,
        revision,
        t,
        onClick: () => {
          this.clickedFor = model;
          this.onLoadClick();
        },
      });
      return null;
    }
    // The picture first: a bad one is refused before the model downloads.
    let picture = null;
    if (image !== null) {
      parts.status.textContent = t('widgetImageLoading', { image });
      const { fetchPicture } = await import('./widget-picture.js');
      picture = await fetchPicture(image, (url) =>
        fetchCapped(url, { cap: MAX_IMAGE_FILE_BYTES, what: 'image' }),
      );
      if (!isCurrent()) return null;
    }
    parts.status.textContent = t('widgetModelLoading', { model: id, done: '' });
    const lens = await runModel({
      id,
      revision,
      text,
      picture,
      attention: await this.engine(),
      onProgress: ({ totalLoaded, totalBytes }) => {
        if (!isCurrent()) return;
        const done = totalBytes ? `${Math.round((totalLoaded / totalBytes) * 100)}%` : '';
        parts.status.textContent = t('widgetModelLoading', { model: id, done });
      },
    });
    return this.#keep(key, lens, isCurrent);
  }

  #keep(key, lens, isCurrent) {
    if (!isCurrent()) return lens;
    this.key = key;
    this.lens = lens;
    this.parts.status.textContent = '';
    return lens;
  }
}

// The Load button, whose label says how much it will download (from the Hub's listing; "size
// unknown" offline).
async function offerLoad(parts, { modelId, revision, t, onClick }) {
  parts.status.textContent = '';
  parts.header.replaceChildren(el('span', { class: 'count', text: modelId }));
  const button = el('button', {
    type: 'button',
    class: 'load-model',
    text: t('widgetLoadModelUnknown'),
    onclick: onClick,
  });
  parts.view.replaceChildren(button);
  const bytes = await modelDownloadBytes(modelId, revision);
  if (bytes !== null && button.isConnected) {
    button.textContent = t('widgetLoadModel', { size: formatBytes(bytes) });
  }
}

/**
 * A model (or its picture) that did not load: the model's name stays in the header, the status
 * says what happened in words (src/models/load-failure.js) and the view offers to try again.
 */
export function showFailure(parts, error, { model, t, onRetry }) {
  // The picture (image=) rather than the model: fetched, checked or decoded, it failed.
  const picture = /^image(\.|$)/.test(error?.parameter ?? '');
  const { reason, key, values } = picture ? { reason: 'image' } : loadFailure(error, model);
  parts.header.replaceChildren(el('span', { class: 'count', text: model }));
  parts.status.textContent = picture
    ? t('widgetImageFailed', { message: error.message })
    : t(key, values);
  parts.status.dataset.reason = reason;
  const retry = el('button', {
    type: 'button',
    class: 'load-model',
    text: t('modelRetry'),
    onclick: () => {
      delete parts.status.dataset.reason;
      parts.status.textContent = '';
      onRetry();
    },
  });
  parts.view.replaceChildren(retry);
}

/**
 * The widget's result for a lens: the heads of the layer asked (`layer`, `head`: the 1-based
 * attributes, else the lens's own choice), its tokens, the settings.
 */
export function lensResult(lens, { layer, head, settings, t }) {
  if (lens.translation) return translationResult(lens, { layer, head, settings, t });
  const asked = readClampedInteger(layer, 1, lens.model.layers, 0) - 1;
  const shown = lens.layers.includes(asked) ? asked : lens.selected.layer;
  const { indices, heads, mask } = lensLayer(lens, shown);
  const headAsked =
    head === null ? lens.selected.head : readClampedInteger(head, 1, lens.model.heads, 1) - 1;
  const tokens = lens.tokens.map(({ text, start, end }) => ({ text, start, end }));
  return {
    rowTokens: tokens,
    colTokens: tokens,
    heads,
    settings: { ...settings, head: Math.max(0, indices.indexOf(headAsked)) },
    cross: false,
    backend:
      lens.backend ??
      t('widgetSnapshotAbout', {
        model: lens.model.id ?? lens.model.modelType,
        date: lens.created?.slice(0, 10) ?? '',
      }),
    lens: { layer: shown, layers: lens.layers, indices, mask, model: lens.model },
  };
}

/** The header of a lens's view: the model, a layer picker (when it has several), head, mask. */
export function lensHeader({ lens }, head, { t, onLayer }) {
  const select = el(
    'select',
    { 'aria-label': t('widgetLayer'), onchange: (event) => onLayer(Number(event.target.value)) },
    lens.layers.map((l) =>
      el('option', { value: l, text: t('layerN', { n: l + 1 }), selected: l === lens.layer }),
    ),
  );
  return [
    el('span', { class: 'count', text: lens.model.id ?? lens.model.modelType }),
    lens.layers.length > 1 ? select : null,
    el('span', {
      text: t('widgetLayerHead', { layer: lens.layer + 1, head: lens.indices[head] + 1 }),
    }),
    el('code', { text: lens.mask }),
    lens.translation ? el('span', { class: 'translation', text: lens.translation }) : null,
  ];
}

/** The demo's address for a lens's view: its model (when it names one), text, layer and head. */
export function lensDemoLink(url, lens, { lens: shown, settings }) {
  if (!lens.model.id) return null;
  const params = url.searchParams;
  params.set('model', lens.model.id);
  if (lens.model.revision && lens.model.revision !== 'main') params.set('rev', lens.model.revision);
  params.set('text', lens.text);
  if (lens.pair) params.set('pair', lens.pair);
  params.set('layer', String(shown.layer + 1));
  params.set('head', String(shown.indices[settings.head] + 1));
  params.set('view', settings.view);
  const { search, hash } = placeParams(params);
  url.search = search;
  url.hash = hash;
  return url;
}
