// What <attn-lens> shows of real models: a snapshot file (src/snapshot/: read and checked, no
// model, no compute, no download beyond the file itself), or a Hub model that the reader loads
// with a click on "Load model (size)", never on page load. Both come out in one form, the
// snapshot's, so the widget draws a live model and a snapshot of it the same way. The widget
// imports this module only when an element has a `snapshot` or `model` attribute.
import { layerVisibility } from '../src/interpret/layer-masks.js';
import { tokenLabels } from '../src/interpret/words.js';
import { readSnapshot, snapshotHead } from '../src/snapshot/read.js';
import { SNAPSHOT_LIMITS } from '../src/snapshot/format.js';

// A page script may point widgets at a Hub mirror (the browser tests' local Hub) by setting
// this global before the widget loads; no attribute and no address can.
const HUB_URL = typeof globalThis.ATTNLENS_HUB_URL === 'string' ? globalThis.ATTNLENS_HUB_URL : '';
const hubOptions = (revision) => ({
  ...(HUB_URL ? { hubUrl: HUB_URL } : {}),
  ...(revision ? { revision } : {}),
});

/** The snapshot at `url` (relative to the page), read and checked. */
export async function fetchSnapshot(url, signal) {
  const response = await fetch(new URL(url, document.baseURI), { signal });
  if (!response.ok) throw new Error(`snapshot: ${url} answered HTTP ${response.status}`);
  const length = Number(response.headers.get('content-length'));
  if (length > SNAPSHOT_LIMITS.bytes) {
    throw new RangeError(
      `snapshot: ${url} is larger than the cap of ${SNAPSHOT_LIMITS.bytes} bytes`,
    );
  }
  return readSnapshot(await response.text());
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

/** Loads a Hub model on `attention` (once per page) and runs it on `text`, as a snapshot. */
export async function runModel({ id, revision, text, attention, onProgress }) {
  const key = `${id}@${revision ?? ''}`;
  if (!loaded.has(key)) {
    const { loadModel } = await import('../src/models/index.js');
    const promise = loadModel(id, { ...hubOptions(revision), attention, onProgress });
    loaded.set(key, promise);
    promise.catch(() => loaded.delete(key));
  }
  const model = await loaded.get(key);
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
