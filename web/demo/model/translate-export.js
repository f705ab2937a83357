// The Translate mode's exports: the shown alignment as a PNG or SVG matrix (the page's own
// drawing of exported matrices, src/views/export.js) and as JSON (tokens and weights, with the
// model, layer and head that produced them), and the whole translation as a snapshot
// (src/snapshot/: every layer and head; <attn-lens snapshot> draws it with no download).
import { translationRun, writeSnapshot } from '../../src/snapshot/write.js';
import { downloadBlob, matrixPNG, matrixSVG } from '../../src/views/export.js';
import { DEFAULT_THEME } from '../../src/views/matrix-paint.js';
import { el } from '../../src/views/dom.js';
import { t } from '../i18n.js';

const part = (index) => (index < 0 ? 'all' : index + 1);
const fileBase = (figure) => `attnlens-alignment-${part(figure.layer)}-${part(figure.head)}`;

// Exports use the light palette whatever the page shows: they end up in documents and slides.
const drawn = (figure) => ({ ...figure, mask: null, range: [0, 1], theme: DEFAULT_THEME });

/** The alignment as JSON: what was translated, by which head, and every weight. */
export function alignmentJSON(figure) {
  const tokens = (list) =>
    list.map(({ text, start, end, special }) => ({ text, start, end, special }));
  const cols = figure.colTokens.length;
  return JSON.stringify(
    {
      kind: 'attnlens-alignment',
      model: figure.model,
      source: figure.source,
      translation: figure.translation,
      layer: figure.layer < 0 ? 'mean' : figure.layer,
      head: figure.head < 0 ? 'mean' : figure.head,
      sourceTokens: tokens(figure.colTokens),
      targetTokens: tokens(figure.rowTokens),
      weights: figure.rowTokens.map((_, i) =>
        Array.from(figure.weights.subarray(i * cols, (i + 1) * cols), (w) => Number(w.toFixed(6))),
      ),
    },
    null,
    2,
  );
}

/**
 * A finished translation (translate-panel.js's run) as a snapshot of every layer and head.
 * info: the loaded model's; id, revision: where it came from (null for the reader's files).
 */
export function translationSnapshot(run, info, { id, revision }) {
  const all = (count) => Array.from({ length: count }, (_, i) => i);
  const translated = translationRun({
    model: { ...info, id, revision },
    text: run.text,
    source: run.source,
    encoderAttention: run.encoderAttention,
    steps: run.steps,
    translation: run.steps
      .filter((s) => !s.special)
      .map((s) => s.text)
      .join(''),
  });
  return writeSnapshot(translated, { layers: all(info.encoderLayers), heads: all(info.heads) });
}

/**
 * Four buttons and render() (their words; disabled until there is an alignment, the snapshot
 * until the translation is finished). getSnapshot(): the snapshot object, or null.
 */
export function alignmentExports(getFigure, getSnapshot) {
  const save = (kind) => async () => {
    const figure = getFigure();
    if (!figure) return;
    const base = fileBase(figure);
    if (kind === 'png') downloadBlob(await matrixPNG(drawn(figure)), `${base}.png`);
    if (kind === 'svg') {
      downloadBlob(new Blob([matrixSVG(drawn(figure))], { type: 'image/svg+xml' }), `${base}.svg`);
    }
    if (kind === 'json') {
      downloadBlob(new Blob([alignmentJSON(figure)], { type: 'application/json' }), `${base}.json`);
    }
    const snapshot = kind === 'snapshot' && getSnapshot();
    if (snapshot) {
      const text = JSON.stringify(snapshot);
      downloadBlob(new Blob([text], { type: 'application/json' }), 'attnlens-translation.json');
    }
  };
  const keys = {
    png: 'exportPng',
    svg: 'exportSvg',
    json: 'exportJson',
    snapshot: 'exportSnapshot',
  };
  const buttons = Object.keys(keys).map((kind) =>
    el('button', { type: 'button', id: `translate-export-${kind}`, onclick: save(kind) }),
  );
  return {
    buttons,
    render() {
      const none = !getFigure();
      buttons.forEach((button, i) => {
        button.textContent = t(Object.values(keys)[i]);
        button.disabled = none;
      });
      buttons[3].disabled = !getSnapshot.ready();
    },
  };
}
