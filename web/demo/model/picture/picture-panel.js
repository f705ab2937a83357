// The page's Picture mode, for a loaded vision model (ViT, DINO, DINOv2): the reader brings a
// picture (drop, file, the bundled sample, the camera), the compute thread runs the model on it
// (picture-compute.js), and this draws where the heads look: the shown head's class-token map
// over the picture, a patch's own map when one is focused, rollout beside the last layer's raw
// map, every layer x head as a small overlay, and the heads' mean attention distances. With
// the mask surgery on (picture-surgery.js) the views show the run under the window, and the
// surgery's block puts its map and labels beside full attention's.
// Loaded by page.js the first time a vision model is open, so text pages never fetch it.
import { el } from '../../../src/views/dom.js';
import { downloadBlob } from '../../../src/views/export.js';
import { t } from '../../i18n.js';
import { distancePlot } from './distance-plot.js';
import { pictureDataUrl, pictureRun } from '../../../src/snapshot/picture.js';
import { writeSnapshot } from '../../../src/snapshot/write.js';
import {
  drawOverlay,
  modelView,
  pictureCanvas,
  snapshotPictureView,
} from '../../../src/views/picture-overlay.js';
import { headMap, layerMeanMap, patchAt, rolloutMap } from './picture-maps.js';
import { pictureControls, pictureSources } from './picture-parts.js';
import { readPicture, samplePicture } from './picture-source.js';
import { CameraFollower } from './picture-follow.js';
import { PictureSurgery } from './picture-surgery.js';

const MAIN_SIDE = 384; // CSS pixels the main overlay is drawn at (scaled down on a phone)
const PAIR_SIDE = 224;
const CELL_SIDE = 72;

export class PicturePanel {
  /** @param {{ client, getInfo: () => object | null }} parts */
  constructor(parts) {
    this.parts = parts;
    this.run = null; // full attention's run
    this.masked = null; // the surgery's run, when it is on and has run
    this.view = null; // the picture as the model saw it (a canvas)
    this.state = { layer: 0, head: 0, opacity: 0.75, focus: -1 };
    this.status = el('p', { class: 'hint picture-status', role: 'status' });
    this.follower = new CameraFollower(
      (video) => this.#take(video, true),
      ({ fps, shown, dropped }) => {
        this.status.textContent = t('pictureFollowing', { fps: fps.toFixed(1), shown, dropped });
        this.element.dataset.followFps = fps.toFixed(2);
      },
    );
    this.sources = pictureSources(
      (source) => this.#take(source),
      (error) => this.#fail(error),
      this.follower,
    );
    this.controls = pictureControls(this.state, {
      changed: () => this.render(),
      exportPng: () => this.#exportPng(),
      exportJson: () => this.#exportJson(),
      exportSnapshot: () => this.#exportSnapshot(),
    });
    this.main = el('canvas', {
      class: 'picture-main',
      tabindex: 0,
      role: 'img',
      onclick: (event) => this.#clickPatch(event),
      onkeydown: (event) => this.#key(event),
    });
    this.surgery = new PictureSurgery(() => this.#runSurgery());
    this.caption = el('figcaption', { class: 'hint' });
    this.rollout = el('canvas', { class: 'picture-pair-map', role: 'img' });
    this.lastLayer = el('canvas', { class: 'picture-pair-map', role: 'img' });
    this.labels = el('ol', { class: 'picture-labels' });
    this.grid = el('div', { class: 'picture-grid' });
    this.distance = el('div', { class: 'picture-distance' });
    this.results = el(
      'div',
      { class: 'picture-results', hidden: true },
      this.labels,
      this.controls.element,
      el('figure', { class: 'picture-figure' }, this.main, this.caption),
      (this.focusHint = el('p', { class: 'hint' }, t('pictureFocusHint'))),
      this.surgery.element,
      el(
        'div',
        { class: 'picture-pair' },
        el('figure', {}, this.rollout, el('figcaption', { text: t('pictureRollout') })),
        el('figure', {}, this.lastLayer, el('figcaption', { text: t('pictureLastLayer') })),
      ),
      el('h3', { text: t('pictureGridTitle') }),
      this.grid,
      (this.distanceTitle = el('h3', { text: t('pictureDistanceTitle') })),
      this.distance,
    );
    this.element = el(
      'section',
      { class: 'picture-mode card', id: 'picture-mode', 'aria-labelledby': 'picture-title' },
      el('h2', { id: 'picture-title', text: t('pictureTitle') }),
      el('p', { class: 'hint', text: t('pictureHint') }),
      this.sources.element,
      this.status,
      this.results,
    );
  }

  /**
   * Shown for the loaded model `info`: a model not seen yet runs the last picture again, or the
   * bundled sample, so a freshly loaded model shows something at once.
   */
  show(info) {
    if (this.key === info.key) return;
    this.key = info.key;
    this.run = null;
    this.masked = null;
    this.render();
    if (this.source) this.#take(this.source);
    else
      samplePicture().then(
        (blob) => this.#take(blob),
        (error) => this.#fail(error),
      );
  }

  // `live`: a frame of the followed camera (the follower reports the rate instead).
  async #take(source, live = false) {
    const info = this.parts.getInfo();
    if (!info) return;
    this.source = source instanceof Blob ? source : null; // a video frame is gone once taken
    if (!live) this.status.textContent = t('pictureRunning');
    try {
      const pixels = await readPicture(source);
      const picture = pictureCanvas(pixels);
      // The worker gets a copy: the page keeps its pixels to draw from.
      const run = await this.#request(info, pixels, null);
      if (!run || info.key !== this.parts.getInfo()?.key) return;
      this.run = run;
      this.masked = null;
      this.pixels = pixels;
      this.view = modelView(picture, run.input);
      this.state.layer = Math.min(this.state.layer, run.layers - 1);
      this.state.head = Math.min(this.state.head, run.heads - 1);
      if (!live) {
        this.state.focus = -1;
        this.status.textContent = t('pictureDone', {
          width: pixels.width,
          height: pixels.height,
          rows: run.grid.rows,
          columns: run.grid.columns,
        });
      }
      // A followed camera's frames keep their shape: the controls stay as the reader left them.
      const shape = `${run.layers} ${run.heads} ${run.grid.rows} ${run.grid.columns}`;
      if (!live || shape !== this.shape) {
        this.shape = shape;
        this.controls.setShape(run.layers, run.heads);
        this.surgery.setGrid(run.grid);
      }
      this.#renderOnce();
      this.render();
      count('pictureRuns');
      if (this.surgery.mask) await this.#runSurgery();
    } catch (error) {
      this.#fail(error);
    }
  }

  // The worker gets a copy of the pixels: the page keeps its own to draw from and run again.
  #request(info, pixels, mask) {
    return this.parts.client.request(
      mask ? 'model-picture-surgery' : 'model-picture',
      'modelPicture',
      {
        key: info.key,
        pixels: { ...pixels, data: pixels.data.slice() },
        mask,
      },
    );
  }

  // The surgery was turned on, off or resized: the same picture again under its window (or
  // back to full attention's run, kept).
  async #runSurgery() {
    const info = this.parts.getInfo();
    const mask = this.surgery.mask;
    const full = this.run;
    this.masked = null;
    if (!mask || !full || !info) {
      this.#renderOnce();
      this.render();
      return;
    }
    this.render();
    try {
      const run = await this.#request(info, this.pixels, mask);
      // A later picture, model or surgery supersedes this one.
      if (!run || this.run !== full || mask !== this.surgery.mask) return;
      this.masked = run;
      this.#renderOnce();
      this.render();
      count('pictureSurgeryRuns');
    } catch (error) {
      this.#fail(error);
    }
  }

  // The run the views show: the surgery's when there is one.
  get #shown() {
    return this.masked ?? this.run;
  }

  #fail(error) {
    this.status.textContent = t('pictureFailed', { message: error?.message ?? String(error) });
  }

  // What does not change with the layer, head or focus: labels, rollout, grid, distances.
  #renderOnce() {
    const run = this.#shown;
    const common = { grid: run.grid, patchSize: run.patchSize, opacity: 0.8 };
    this.labels.replaceChildren(
      ...(run.labels ?? []).map(({ label, p }) =>
        el('li', { text: t('pictureLabel', { label, p: (p * 100).toFixed(1) }) }),
      ),
    );
    this.labels.hidden = !run.labels;
    if (run.rollout) {
      size(this.rollout, this.view, PAIR_SIDE);
      drawOverlay(this.rollout, this.view, rolloutMap(run), common);
    }
    size(this.lastLayer, this.view, PAIR_SIDE);
    drawOverlay(this.lastLayer, this.view, layerMeanMap(run, run.layers - 1), common);
    this.rollout.setAttribute('aria-label', t('pictureRollout'));
    this.lastLayer.setAttribute('aria-label', t('pictureLastLayer'));
    this.#drawGrid(run, common);
    this.focusHint.hidden = Boolean(run.classAttention);
    this.rollout.parentElement.hidden = !run.rollout;
    this.distanceTitle.hidden = this.distance.hidden = !run.distance;
    if (!run.distance) return;
    const local = run.distance.labels.filter((label) => label === 'local').length;
    this.distance.replaceChildren(
      distancePlot(run.distance, run.layers, run.heads),
      el('p', {
        class: 'hint',
        text: t('pictureDistanceHint', {
          threshold: run.distance.threshold.toFixed(1),
          uniform: run.distance.uniform.toFixed(1),
          local,
          global: run.distance.labels.length - local,
        }),
      }),
    );
  }

  // Every layer x head as a small overlay, each a button that shows it big. The buttons are
  // kept while the shape is the same (a followed camera's frames), so only the maps redraw and
  // a focused cell keeps its focus.
  #drawGrid(run, common) {
    const names = run.names; // a snapshot's model layer and head numbers
    const key = JSON.stringify([run.layers, run.heads, names, this.view.width, this.view.height]);
    if (key !== this.gridKey) {
      this.gridKey = key;
      this.cells = [];
      this.grid.style.setProperty('--heads', run.heads);
      this.grid.replaceChildren();
      for (let layer = 0; layer < run.layers; layer++) {
        for (let head = 0; head < run.heads; head++) {
          const name = t('pictureGridCell', {
            layer: names?.layers[layer] ?? layer,
            head: names?.heads[head] ?? head,
          });
          const cell = el('canvas', { class: 'picture-cell' });
          size(cell, this.view, CELL_SIDE);
          const button = el(
            'button',
            { type: 'button', class: 'picture-cell-button', 'aria-label': name, title: name },
            cell,
          );
          button.addEventListener('click', () => {
            Object.assign(this.state, { layer, head });
            this.controls.sync();
            this.render();
            this.main.focus();
          });
          this.grid.append(button);
          this.cells.push(cell);
        }
      }
    }
    for (let layer = 0; layer < run.layers; layer++) {
      for (let head = 0; head < run.heads; head++) {
        const cell = this.cells[layer * run.heads + head];
        drawOverlay(cell, this.view, headMap(run, layer, head), common);
      }
    }
  }

  /** Draws what the layer, head, opacity and focus choose. */
  render() {
    const run = this.#shown;
    this.results.hidden = !run;
    if (!run) return;
    const { layer, head, opacity, focus } = this.state;
    const query = focus >= 0 ? 1 + run.registers + focus : 0;
    const pick = (r) => (head < 0 ? layerMeanMap(r, layer, query) : headMap(r, layer, head, query));
    const map = pick(run);
    this.surgery.render({
      full: this.run,
      masked: this.masked,
      view: this.view,
      pick,
      focus,
      size,
    });
    size(this.main, this.view, MAIN_SIDE);
    drawOverlay(this.main, this.view, map, {
      grid: run.grid,
      patchSize: run.patchSize,
      opacity,
      focus,
    });
    const names = run.names;
    const who =
      head < 0 ? t('pictureHeadMean') : t('pictureHeadN', { head: names?.heads[head] ?? head });
    const from =
      focus >= 0
        ? t('pictureFromPatch', {
            row: Math.floor(focus / run.grid.columns),
            column: focus % run.grid.columns,
          })
        : t('pictureFromClass');
    const k = run.mask?.replace('patch:', '');
    const surgery = k ? ` ${t('pictureSurgeryMasked', { k })}` : '';
    const layerName = names?.layers[layer] ?? layer;
    const caption = t('pictureMainCaption', { layer: layerName, who, from }) + surgery;
    this.caption.textContent = caption;
    this.main.setAttribute('aria-label', caption);
  }

  // A snapshot holds the class token's rows only: no patch to focus.
  #clickPatch(event) {
    if (!this.run || this.run.classAttention) return;
    const box = this.main.getBoundingClientRect();
    const scale = this.view.width / box.width;
    const patch = patchAt(
      this.run,
      (event.clientX - box.left) * scale,
      (event.clientY - box.top) * scale,
    );
    this.state.focus = patch === this.state.focus ? -1 : patch;
    this.render();
  }

  // Arrows move the focused patch (from the centre), Escape returns to the class token.
  #key(event) {
    if (!this.run || this.run.classAttention) return;
    const { rows, columns } = this.run.grid;
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    if (event.key === 'Escape') this.state.focus = -1;
    else if (moves[event.key]) {
      const at = this.state.focus >= 0 ? this.state.focus : (rows >> 1) * columns + (columns >> 1);
      const [dr, dc] = this.state.focus >= 0 ? moves[event.key] : [0, 0];
      const row = Math.min(rows - 1, Math.max(0, Math.floor(at / columns) + dr));
      const column = Math.min(columns - 1, Math.max(0, (at % columns) + dc));
      this.state.focus = row * columns + column;
    } else return;
    event.preventDefault();
    this.render();
  }

  #exportPng() {
    this.main.toBlob((blob) => blob && downloadBlob(blob, `${this.#fileBase()}.png`));
  }

  // The numbers behind every view: each head's class-token row over the patches, the rollout,
  // the distances and labels; the arrays as plain lists so any tool reads them.
  #exportJson() {
    const run = this.#shown;
    const info = this.parts.getInfo();
    const classRows = [];
    for (let layer = 0; layer < run.layers; layer++) {
      const heads = [];
      for (let head = 0; head < run.heads; head++)
        heads.push(Array.from(headMap(run, layer, head)));
      classRows.push(heads);
    }
    const json = {
      model: info?.key ?? null,
      grid: run.grid,
      patchSize: run.patchSize,
      registers: run.registers,
      input: run.input,
      mask: run.mask ?? 'global',
      labels: run.labels,
      classAttention: classRows,
      rollout: Array.from(rolloutMap(run)),
      distance: run.distance && {
        pixels: Array.from(run.distance.distances),
        uniform: run.distance.uniform,
        threshold: run.distance.threshold,
        labels: run.distance.labels,
      },
    };
    const blob = new Blob([JSON.stringify(json)], { type: 'application/json' });
    downloadBlob(blob, `${this.#fileBase()}.json`);
  }

  // The snapshot (src/snapshot/picture.js) of what the panel shows: the picture as the model saw
  // it and every layer's and head's class-token row; a snapshot shown is saved as it came.
  #exportSnapshot() {
    if (!this.run) return;
    const snapshot = this.snapshotText ?? JSON.stringify(this.#snapshot());
    const blob = new Blob([snapshot], { type: 'application/json' });
    downloadBlob(blob, `${this.#fileBase()}-snapshot.json`);
  }

  #snapshot() {
    const { run, state } = this;
    const info = this.parts.getInfo();
    // The Hub's id and revision from the session's key (hub:ID@REVISION:DTYPE); none for files.
    const hub = /^hub:([^@]+)@([^:]*):/.exec(info.key);
    const all = (count) => Array.from({ length: count }, (_, i) => i);
    return writeSnapshot(
      pictureRun({
        model: { ...info, id: hub?.[1] ?? null, revision: hub ? hub[2] || 'main' : null },
        run,
        image: pictureDataUrl(this.view),
        selected: { layer: state.layer, head: Math.max(0, state.head) },
      }),
      { layers: all(run.layers), heads: all(run.heads) },
    );
  }

  /**
   * Draws a picture's snapshot (read and checked, src/snapshot/read.js) with no model and no
   * compute: its class-token maps over its picture, its rollout and labels. `text` is the file.
   */
  async showSnapshot(lens, text) {
    this.#offerClose();
    const { picture, model, layers, heads, selected } = lens;
    this.view = await snapshotPictureView(picture);
    this.snapshotText = text;
    this.run = {
      ...picture,
      layers: layers.length,
      heads: heads.length,
      names: { layers, heads },
      distance: null,
    };
    Object.assign(this.state, {
      layer: layers.indexOf(selected.layer),
      head: heads.indexOf(selected.head),
      focus: -1,
    });
    this.sources.element.hidden = true;
    this.controls.element.querySelector('.picture-focus-clear').hidden = true;
    this.surgery.element.hidden = true; // a snapshot holds no model to run under a window
    this.status.textContent = t('pictureSnapshotShown', {
      model: model.id ?? model.modelType,
      date: lens.created.slice(0, 10),
    });
    this.controls.setShape(layers.length, heads.length, { layers, heads });
    this.#renderOnce();
    this.render();
    document.body.dataset.pictureSnapshots = String(
      Number(document.body.dataset.pictureSnapshots ?? 0) + 1,
    );
  }

  /** A snapshot that could not be opened: what went wrong, in words. */
  failSnapshot(error) {
    this.#offerClose();
    this.sources.element.hidden = true;
    this.status.textContent = t('pictureSnapshotFailed', { message: error?.message ?? error });
  }

  // A snapshot's panel stands apart from any model: the reader closes it.
  #offerClose() {
    if (this.closeButton) return;
    this.closeButton = el('button', {
      type: 'button',
      class: 'picture-snapshot-close',
      text: t('pictureSnapshotClose'),
      onclick: () => this.element.remove(),
    });
    this.status.after(this.closeButton);
  }

  #fileBase() {
    const { layer, head } = this.state;
    return `attnlens-picture-L${layer}-${head < 0 ? 'mean' : `H${head}`}`;
  }

  /** The camera's frames (and following them) stop when the panel hides. */
  hide() {
    this.sources.stopCamera();
  }
}

// One more run of `what` (pictureRuns, pictureSurgeryRuns) on the page, for tests to wait on.
function count(what) {
  document.body.dataset[what] = String(Number(document.body.dataset[what] ?? 0) + 1);
}

// A canvas sized to `side` CSS pixels on its longer side, in the picture's proportions, at the
// screen's pixel density.
function size(canvas, view, side) {
  const ratio = globalThis.devicePixelRatio || 1;
  const scale = side / Math.max(view.width, view.height);
  canvas.style.width = `${Math.round(view.width * scale)}px`;
  canvas.style.aspectRatio = `${view.width} / ${view.height}`;
  canvas.width = Math.round(view.width * scale * ratio);
  canvas.height = Math.round(view.height * scale * ratio);
}
