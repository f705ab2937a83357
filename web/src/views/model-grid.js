// The model view: every layer x head of a real model as a small heatmap, with the label it
// earns under it: its job on the model's probe (head scores: induction, previous token, sink)
// when it has one, else what its weights do most on this text (head labels). Each thumbnail is
// a button that opens the head; the grid is one tab stop whose arrow keys move along a layer
// (left, right) and across layers (up, down). The measures behind a label show in a line above
// the grid for the head under the pointer or with the keyboard focus (and in each button's
// name). Thumbnails are drawn each to its own largest weight: they show patterns, not levels.
// A long text's thumbnails are max-pooled tiles (tiles.js), one tile pixel per canvas pixel,
// pooled once per result and painted once per size, scale and theme; the pointer over a
// thumbnail names the true queries and keys under it and the strongest weight among them.
import { el } from './dom.js';
import { paintMatrix, readTheme, visibleMax } from './matrix-paint.js';
import { markTabStop, rovingGrid } from './roving.js';
import { poolMatrix } from './tiles.js';

const MIN_THUMB = 34;
const MAX_THUMB = 96;
const ROW_HEADER = 64;

export class ModelGrid {
  // options: { onSelect(layer, head),
  //   strings: { layer(l), label(name), describe(l, h, label, score),
  //     region?(l, h, { queries: [first, last], keys: [first, last], query, key, weight }) } }
  constructor(host, options) {
    this.host = host;
    this.options = options;
    host.classList.add('al-model-grid');
    this.detail = el('p', { class: 'al-model-detail' });
    // Under the pointer in a thumbnail: which true queries and keys that pixel stands for.
    this.region = el('div', { class: 'al-tooltip al-model-region', 'aria-hidden': 'true' });
    this.region.hidden = true;
    // The line above the grid follows the pointer, else the focused head, else the selected one.
    const show = (cell) => {
      this.detail.textContent = cell?.dataset.describe ?? this.#selectedText();
    };
    host.addEventListener('pointerover', (event) => show(event.target.closest('.al-model-cell')));
    host.addEventListener('pointermove', (event) => this.#showRegion(event));
    host.addEventListener('pointerleave', () => {
      this.region.hidden = true;
      show(host.contains(document.activeElement) ? document.activeElement : null);
    });
    host.addEventListener('focusin', (event) => show(event.target.closest('.al-model-cell')));
    host.addEventListener('focusout', () => show(null));
    rovingGrid(host, {
      selector: '.al-model-cell',
      columns: () => this.data?.heads ?? 1,
    });
    this.resizeObserver = new ResizeObserver(() => {
      if (host.clientWidth !== this.width) this.render();
    });
    this.resizeObserver.observe(host);
  }

  // data: { layers, heads, n (rows = cols), attention [layers, heads, n, n],
  //   visible [layers, n, n],
  //   labels [layer][head] ({ label, measures }) on this text,
  //   scores: null (not measured yet) or the probe's head scores, layer by layer
  //     ({ induction, previousToken, sink, label }),
  //   selected: { layer, head }, scale }
  setData(data) {
    this.data = data;
    this.render();
  }

  render() {
    if (!this.data || !this.host.isConnected) return;
    const {
      layers,
      heads,
      n,
      attention,
      visible,
      labels,
      scores = null,
      selected,
      scale,
    } = this.data;
    const strings = this.options.strings;
    this.width = this.host.clientWidth;
    const available = (this.width || 800) - ROW_HEADER - heads * 6;
    const thumb = Math.max(MIN_THUMB, Math.min(MAX_THUMB, Math.floor(available / heads)));
    const ratio = window.devicePixelRatio || 1;
    const theme = readTheme(this.host);
    const focused = this.host.contains(document.activeElement)
      ? document.activeElement.dataset.cell
      : null;
    const thumbnails = this.#thumbnails(thumb, ratio, theme);
    const cells = [];
    const rows = [];
    for (let l = 0; l < layers; l++) {
      const row = [el('span', { class: 'al-model-layer', text: strings.layer(l) })];
      for (let h = 0; h < heads; h++) {
        const canvas = thumbnails.canvas(l, h);
        const score = scores?.[l * heads + h] ?? null;
        // The probe's label says what the head is for; this text's says what it does here.
        const label = score?.label ?? labels[l][h].label;
        const isSelected = l === selected.layer && h === selected.head;
        const describe = strings.describe(l, h, labels[l][h], score);
        const cell = el(
          'button',
          {
            type: 'button',
            class: `al-model-cell${isSelected ? ' is-selected' : ''}`,
            'aria-pressed': String(isSelected),
            'aria-label': describe,
            title: describe,
            dataset: {
              cell: `${l}:${h}`,
              layer: l,
              head: h,
              label: label ?? '',
              probe: score?.label ? 'true' : 'false',
              describe,
            },
            onclick: () => this.options.onSelect(l, h),
          },
          canvas,
          el('span', { class: 'al-model-tag', 'aria-hidden': 'true', text: strings.label(label) }),
        );
        cells.push(cell);
        row.push(cell);
      }
      rows.push(
        el('div', { class: 'al-model-row', role: 'group', 'aria-label': strings.layer(l) }, row),
      );
    }
    this.host.style.setProperty('--al-thumb', `${thumb}px`);
    this.host.replaceChildren(
      this.detail,
      this.region,
      el(
        'div',
        { class: 'al-model-heads', 'aria-hidden': 'true' },
        el('span'),
        Array.from({ length: heads }, (_, h) => el('span', { text: String(h + 1) })),
      ),
      ...rows,
    );
    const index = selected.layer * heads + selected.head;
    markTabStop(cells, index);
    if (focused) this.host.querySelector(`[data-cell="${focused}"]`)?.focus();
    const shown = this.host.querySelector('.al-model-cell:hover') ?? this.#focusedCell();
    this.detail.textContent = shown?.dataset.describe ?? this.#selectedText();
  }

  // The pooled tiles of this result at this many pixels a side (kept while the arrays and the
  // size stay), and their painted canvases (kept while the scale and theme stay too): a render
  // that only moves the selection paints nothing.
  #thumbnails(thumb, ratio, theme) {
    const { heads, n, attention, visible, scale } = this.data;
    const pixels = Math.round(thumb * ratio);
    const tiles = this.tiles;
    if (tiles?.attention !== attention || tiles.visible !== visible || tiles.pixels !== pixels) {
      this.tiles = { attention, visible, pixels, n, list: [] };
    }
    const paintKey = `${thumb}|${ratio}|${scale}|${JSON.stringify(theme)}`;
    if (this.painted?.tiles !== this.tiles || this.painted.key !== paintKey) {
      this.painted = { tiles: this.tiles, key: paintKey, list: [] };
    }
    const size = n * n;
    const tileOf = (l, h) => {
      const k = l * heads + h;
      this.tiles.list[k] ??= poolMatrix(
        attention.subarray(k * size, (k + 1) * size),
        visible.subarray(l * size, (l + 1) * size),
        { rows: n, cols: n, size: pixels },
      );
      return this.tiles.list[k];
    };
    const canvas = (l, h) => {
      const k = l * heads + h;
      if (this.painted.list[k]) return this.painted.list[k];
      const tile = tileOf(l, h);
      const made = el('canvas', { 'aria-hidden': 'true' });
      made.width = pixels;
      made.height = pixels;
      made.style.width = `${thumb}px`;
      made.style.height = `${thumb}px`;
      const ctx = made.getContext('2d');
      ctx.scale(ratio, ratio);
      // The tile's largest weight is the head's: max-pooling keeps the colour range.
      paintMatrix(ctx, {
        rows: tile.rows,
        cols: tile.cols,
        weights: tile.values,
        mask: tile.visible,
        scale,
        range: [0, visibleMax(tile.values, tile.visible) || 1],
        cellW: thumb / tile.cols,
        cellH: thumb / tile.rows,
        theme,
      });
      this.painted.list[k] = made;
      return made;
    };
    return { canvas, tile: tileOf };
  }

  #showRegion(event) {
    const text = this.#regionAt(event);
    this.region.hidden = !text;
    if (!text) return;
    this.region.textContent = text;
    const box = this.host.getBoundingClientRect();
    const x = event.clientX - box.left + this.host.scrollLeft + 14;
    const left = Math.min(x, this.host.scrollWidth - this.region.offsetWidth - 4);
    const top = event.clientY - box.top + this.host.scrollTop + 16;
    this.region.style.transform = `translate(${Math.max(0, left)}px, ${top}px)`;
  }

  // What the pointer is over in a thumbnail: the queries and keys of that tile cell, in true
  // token indices, and the strongest visible weight among them.
  #regionAt(event) {
    const region = this.options.strings.region;
    const canvas = event.target instanceof HTMLCanvasElement ? event.target : null;
    const cell = canvas?.closest('.al-model-cell');
    if (!region || !cell || !this.tiles?.list) return null;
    const l = Number(cell.dataset.layer);
    const h = Number(cell.dataset.head);
    const tile = this.tiles.list[l * this.data.heads + h];
    const box = canvas.getBoundingClientRect();
    if (!tile || box.width <= 0 || box.height <= 0) return null;
    const clamp = (v, count) => Math.max(0, Math.min(count - 1, Math.floor(v * count)));
    const r = clamp((event.clientY - box.top) / box.height, tile.rows);
    const c = clamp((event.clientX - box.left) / box.width, tile.cols);
    const at = tile.at[r * tile.cols + c];
    const { n } = this.tiles;
    return region(l, h, {
      queries: [tile.rowEdges[r], tile.rowEdges[r + 1] - 1],
      keys: [tile.colEdges[c], tile.colEdges[c + 1] - 1],
      query: at < 0 ? -1 : Math.floor(at / n),
      key: at < 0 ? -1 : at % n,
      weight: at < 0 ? null : tile.values[r * tile.cols + c],
    });
  }

  #focusedCell() {
    const active = document.activeElement;
    return this.host.contains(active) && active.classList.contains('al-model-cell') ? active : null;
  }

  #selectedText() {
    return this.host.querySelector('.al-model-cell.is-selected')?.dataset.describe ?? '';
  }

  destroy() {
    this.resizeObserver.disconnect();
  }
}
