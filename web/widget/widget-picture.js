// What <attn-lens> shows of a vision transformer (ViT, DeiT, DINO, DINOv2): the picture as the
// model saw it with a head's class-token attention over it (layer, head or the heads' mean,
// opacity) or the class token's attention rollout across every layer (Abnar and Zuidema 2020,
// view="rollout"), and a classifier's top labels. A live run goes through the snapshot's own
// writer and reader (src/snapshot/picture.js), so a model's view and a snapshot of it are one
// form, and the reader can export it. Loaded only for an element with `image` or a picture
// snapshot, so the widget's base bundle carries none of it.
import { readClampedInteger } from '../src/argument-checks.js';
import { attnlensError } from '../src/errors.js';
import { attentionRollout } from '../src/interpret/rollout.js';
import { pictureDataUrl, pictureRun } from '../src/snapshot/picture.js';
import { readSnapshot } from '../src/snapshot/read.js';
import { writeSnapshot } from '../src/snapshot/write.js';
import { el } from '../src/views/dom.js';
import { downloadBlob } from '../src/views/export.js';
import {
  drawOverlay,
  modelView,
  pictureCanvas,
  snapshotPictureView,
} from '../src/views/picture-overlay.js';
import { readImageRgba } from '../src/vision/image-input.js';

const TOP_LABELS = 5;
const MAIN_SIDE = 384; // CSS pixels of the picture's longer side, at most

const PICTURE_CSS = `
.picture { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
.picture canvas { display: block; max-width: 100%; height: auto; border-radius: 6px; }
.picture-labels { margin: 0; padding-left: 1.4em; font-size: 13px; }
.picture-labels li { margin: 2px 0; }
.header label { display: inline-flex; gap: 4px; align-items: center; font-size: 12px; }
.header input[type="range"] { width: 90px; }
.footer .export {
  font: inherit; font-size: 12px; border: 1px solid var(--line-strong); background: var(--paper);
  color: var(--al-ink); border-radius: 6px; padding: 1px 8px; cursor: pointer;
}
`;

let sheet = null;
function adoptPictureStyles(root) {
  if ('adoptedStyleSheets' in root && typeof CSSStyleSheet === 'function') {
    sheet ??= new CSSStyleSheet();
    if (!sheet.cssRules.length) sheet.replaceSync(PICTURE_CSS);
    if (!root.adoptedStyleSheets.includes(sheet)) {
      root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
    }
  } else if (!root.querySelector('style.picture-styles')) {
    root.append(el('style', { class: 'picture-styles', text: PICTURE_CSS }));
  }
}

/**
 * The picture at `url`: its bytes from `fetchBytes` (capped, with a timeout), its header checked
 * and its size bounded before it is decoded (src/vision/image-input.js). RGBA pixels.
 */
export async function fetchPicture(url, fetchBytes) {
  const bytes = await fetchBytes(url);
  return readImageRgba(new Blob([bytes]), 'image');
}

/** Runs a loaded vision model on `picture` (RGBA pixels): the lens, in the snapshot's form. */
export async function pictureLens(model, { id, revision, picture }) {
  const { info } = model;
  if (!info.vision) {
    throw attnlensError('invalid_argument', 'image', `${id} reads text, not pictures`);
  }
  if (!picture) {
    throw attnlensError(
      'invalid_argument',
      'image',
      `${id} is a vision model: give the widget a picture (image="cat.jpg")`,
    );
  }
  const topK = Math.min(TOP_LABELS, model.labels?.length ?? TOP_LABELS);
  const run = await model.run(picture, info.predicts ? { topK } : {});
  const shape = { layers: info.layers, heads: info.heads, n: run.tokens };
  const rollout = attentionRollout(run.attention, shape, { rows: [0] });
  const image = pictureDataUrl(modelView(pictureCanvas(picture), run.input));
  const all = (count) => Array.from({ length: count }, (_, i) => i);
  const snapshot = writeSnapshot(
    pictureRun({
      model: { id, revision: revision ?? 'main', ...info },
      run: { ...run, rollout },
      image,
    }),
    { layers: all(info.layers), heads: all(info.heads) },
  );
  return { ...readSnapshot(snapshot), backend: info.backend, snapshot };
}

/** A picture lens's view in the element's parts: header controls, the overlay, the labels. */
export class PictureView {
  constructor(parts, root, { t }) {
    adoptPictureStyles(root);
    Object.assign(this, { parts, t });
    this.kind = 'picture';
    this.lens = null;
    this.view = null;
    this.state = { layer: 0, head: 0, opacity: 0.75, view: 'heads' };
    this.asked = null; // the `layer`, `head` and `view` attributes the state last followed
    this.canvas = el('canvas', { role: 'img' });
    this.labels = el('ol', { class: 'picture-labels' });
  }

  /**
   * Shows `lens`; `layer` and `head` are the element's 1-based attributes (or null), `view`
   * its view attribute: "rollout" opens on the rollout where the lens has one.
   */
  async show(lens, { layer, head, view = null }) {
    if (lens !== this.lens) {
      this.view = await snapshotPictureView(lens.picture);
      this.lens = lens;
      this.asked = null;
    }
    const asked = `${layer}/${head}/${view}`;
    if (asked !== this.asked) {
      this.asked = asked;
      const { model, layers, heads, selected } = lens;
      const l = readClampedInteger(layer, 1, model.layers, selected.layer + 1) - 1;
      const h = readClampedInteger(head, 1, model.heads, selected.head + 1) - 1;
      this.state.layer = layers.includes(l) ? l : selected.layer;
      this.state.head = heads.includes(h) ? h : selected.head;
      this.state.view = view === 'rollout' && lens.picture.rollout ? 'rollout' : 'heads';
    }
    this.#build();
    this.render();
  }

  #build() {
    const { parts, t, lens, state } = this;
    const { model, layers, heads, picture } = lens;
    // Options' values are numbers (layers, heads) or names (views), as `value` is.
    const select = (label, options, value, set) =>
      el(
        'select',
        {
          'aria-label': label,
          onchange: ({ target }) =>
            set(typeof value === 'number' ? Number(target.value) : target.value),
        },
        options.map(([v, text]) => el('option', { value: v, text, selected: v === value })),
      );
    const opacity = el('input', {
      type: 'range',
      min: 0,
      max: 100,
      value: Math.round(state.opacity * 100),
      oninput: (event) => {
        state.opacity = Number(event.target.value) / 100;
        this.render();
      },
    });
    const layerSelect = select(
      t('widgetLayer'),
      layers.map((l) => [l, t('layerN', { n: l + 1 })]),
      state.layer,
      (v) => {
        state.layer = v;
        this.render();
      },
    );
    const headSelect = select(
      t('widgetHead'),
      [[-1, t('widgetHeadMean')], ...heads.map((h) => [h, t('headN', { n: h + 1 })])],
      state.head,
      (v) => {
        state.head = v;
        this.render();
      },
    );
    // Rollout is one map over every layer and head: the layer and head do not apply to it.
    const viewSelect = picture.rollout
      ? select(
          t('widgetPictureView'),
          [
            ['heads', t('widgetPictureHeads')],
            ['rollout', t('widgetPictureRollout')],
          ],
          state.view,
          (v) => {
            state.view = v;
            this.render();
          },
        )
      : null;
    this.selects = { layer: layerSelect, head: headSelect };
    parts.header.replaceChildren(
      ...[
        el('span', { class: 'count', text: model.id ?? model.modelType }),
        viewSelect,
        layerSelect,
        headSelect,
        el('label', {}, el('span', { text: t('widgetOpacity') }), opacity),
      ].filter(Boolean),
    );
    this.labels.replaceChildren(
      ...(picture.labels ?? []).map(({ label, p }) =>
        el('li', { text: `${label} · ${(p * 100).toFixed(1)}%` }),
      ),
    );
    this.labels.hidden = !picture.labels;
    this.labels.setAttribute('aria-label', t('widgetTopLabels'));
    parts.status.textContent = '';
    parts.table.replaceChildren();
    parts.view.replaceChildren(el('div', { class: 'picture' }, this.canvas, this.labels));
    const backend =
      lens.backend ??
      t('widgetSnapshotAbout', {
        model: model.id ?? model.modelType,
        date: lens.created?.slice(0, 10) ?? '',
      });
    parts.footer.replaceChildren(
      ...[
        lens.snapshot
          ? el('button', {
              type: 'button',
              class: 'export',
              text: t('widgetExportSnapshot'),
              onclick: () => this.#export(),
            })
          : null,
        el('span', { class: 'backend', text: `attnlens · ${backend}` }),
      ].filter(Boolean),
    );
  }

  /**
   * One weight per patch: the shown head's class-token row, the layer's mean over heads, or the
   * class token's rollout (as the writer computed it from the full maps: src/snapshot/picture.js).
   */
  map() {
    const { picture, layers, heads } = this.lens;
    const { layer, head } = this.state;
    if (this.state.view === 'rollout') return picture.rollout;
    const patches = picture.patches;
    const a = layers.indexOf(layer);
    const row = (b) => {
      const at = (a * heads.length + b) * patches;
      return picture.classAttention.subarray(at, at + patches);
    };
    if (head >= 0) return row(heads.indexOf(head));
    const mean = new Float32Array(patches);
    heads.forEach((_, b) => row(b).forEach((w, p) => (mean[p] += w / heads.length)));
    return mean;
  }

  render() {
    const { canvas, view, lens, state, t } = this;
    const ratio = globalThis.devicePixelRatio || 1;
    const scale = MAIN_SIDE / Math.max(view.width, view.height);
    canvas.width = Math.round(view.width * scale * ratio);
    canvas.height = Math.round(view.height * scale * ratio);
    canvas.style.width = `${Math.round(view.width * scale)}px`;
    const { grid, patchSize } = lens.picture;
    drawOverlay(canvas, view, this.map(), { grid, patchSize, opacity: state.opacity });
    const rollout = state.view === 'rollout';
    const who = state.head < 0 ? t('widgetHeadMean') : t('headN', { n: state.head + 1 });
    canvas.setAttribute(
      'aria-label',
      rollout
        ? t('widgetPictureRolloutLabel', { layers: lens.model.layers })
        : t('widgetPictureLabel', { layer: state.layer + 1, who }),
    );
    canvas.dataset.layer = String(state.layer);
    canvas.dataset.head = String(state.head);
    canvas.dataset.view = state.view;
    this.selects.layer.disabled = this.selects.head.disabled = rollout;
  }

  // The snapshot opens on the layer and head shown now (the first head for the heads' mean).
  #export() {
    const { model } = this.lens;
    const name = (model.id ?? model.modelType).replace(/[^\w.-]+/g, '-');
    const selected = { layer: this.state.layer, head: Math.max(0, this.state.head) };
    const snapshot = { ...this.lens.snapshot, selected };
    const blob = new Blob([JSON.stringify(snapshot)], { type: 'application/json' });
    downloadBlob(blob, `attnlens-picture-${name}.json`);
  }

  destroy() {
    this.parts.view.replaceChildren();
  }
}
