// The model view: every layer x head of a real model as a small heatmap, with the label it
// earns under it: its job on the model's probe (head scores: induction, previous token, sink)
// when it has one, else what its weights do most on this text (head labels). Each thumbnail is
// a button that opens the head; the grid is one tab stop whose arrow keys move along a layer
// (left, right) and across layers (up, down). The measures behind a label show in a line above
// the grid for the head under the pointer or with the keyboard focus (and in each button's
// name). Thumbnails are drawn each to its own largest weight: they show patterns, not levels.
import { el } from './dom.js';
import { paintMatrix, readTheme, visibleMax } from './matrix-paint.js';
import { markTabStop, rovingGrid } from './roving.js';

const MIN_THUMB = 34;
const MAX_THUMB = 96;
const ROW_HEADER = 64;

export class ModelGrid {
  // options: { onSelect(layer, head),
  //   strings: { layer(l), label(name), describe(l, h, label, score) } }
  constructor(host, options) {
    this.host = host;
    this.options = options;
    host.classList.add('al-model-grid');
    this.detail = el('p', { class: 'al-model-detail' });
    // The line above the grid follows the pointer, else the focused head, else the selected one.
    const show = (cell) => {
      this.detail.textContent = cell?.dataset.describe ?? this.#selectedText();
    };
    host.addEventListener('pointerover', (event) => show(event.target.closest('.al-model-cell')));
    host.addEventListener('pointerleave', () =>
      show(host.contains(document.activeElement) ? document.activeElement : null),
    );
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
    const size = n * n;
    const focused = this.host.contains(document.activeElement)
      ? document.activeElement.dataset.cell
      : null;
    const cells = [];
    const rows = [];
    for (let l = 0; l < layers; l++) {
      const mask = visible.subarray(l * size, (l + 1) * size);
      const row = [el('span', { class: 'al-model-layer', text: strings.layer(l) })];
      for (let h = 0; h < heads; h++) {
        const weights = attention.subarray((l * heads + h) * size, (l * heads + h + 1) * size);
        const canvas = el('canvas', { 'aria-hidden': 'true' });
        canvas.width = Math.round(thumb * ratio);
        canvas.height = Math.round(thumb * ratio);
        canvas.style.width = `${thumb}px`;
        canvas.style.height = `${thumb}px`;
        const ctx = canvas.getContext('2d');
        ctx.scale(ratio, ratio);
        paintMatrix(ctx, {
          rows: n,
          cols: n,
          weights,
          mask,
          scale,
          range: [0, visibleMax(weights, mask) || 1],
          cellW: thumb / n,
          cellH: thumb / n,
          theme,
        });
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
