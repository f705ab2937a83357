// Small multiples: one thumbnail heatmap per head, each a button that selects ("enlarges") that
// head. Every head uses the same colour range so heads compare fairly (the caller's `range`, so
// a legend beside the grid can show it), and each thumbnail carries the token labels in small
// type, as many as fit.
import { el } from './dom.js';
import { layoutMatrix, paintMatrixFigure } from './matrix-layout.js';
import { readTheme, visibleMax } from './matrix-paint.js';

const THUMB_FONT_PX = 9;
const THUMB_LABEL_CHARS = 6;

// Width each tile adds around its thumbnail, plus the gap to the next one: room for the padding,
// border and gap of the demo's and the widget's stylesheets, so a row of tiles never wraps.
const TILE_CHROME = 30;

export class HeadsGrid {
  // options: { onSelect(head), headLabel(h) -> string }
  constructor(host, options = {}) {
    this.host = host;
    this.options = options;
    host.classList.add('al-heads');
    // Re-layout only when the width changes: rendering itself may change the height.
    this.resizeObserver = new ResizeObserver(() => {
      if (host.clientWidth !== this.width) this.render();
    });
    this.resizeObserver.observe(host);
  }

  // data: { heads: [{ weights, mask }], rowTokens, colTokens, scale, selected,
  //   range? ([lo, hi], default 0 to the largest visible weight of any head),
  //   entropies? (mean bits per head) }
  setData(data) {
    this.data = data;
    this.render();
  }

  render() {
    if (!this.data || !this.host.isConnected) return;
    const { heads, rowTokens, colTokens, scale, selected } = this.data;
    const rows = rowTokens.length;
    const cols = colTokens.length;
    const theme = readTheme(this.host);
    this.width = this.host.clientWidth;
    const available = this.width || 600;
    const columns = Math.min(heads.length, Math.max(1, Math.floor(available / 150)));
    const range = this.data.range ?? [0, sharedMax(heads) || 1];
    const measure = document.createElement('canvas').getContext('2d');
    const layoutFor = (cell) =>
      layoutMatrix(measure, {
        rowTokens,
        colTokens,
        cell,
        theme,
        fontPx: THUMB_FONT_PX,
        labelChars: THUMB_LABEL_CHARS,
      });
    // The labels' margins first (at a provisional size), then the cells get what is left.
    const margins = layoutFor(120 / Math.max(rows, cols));
    const tile = Math.floor(available / columns) - TILE_CHROME;
    const size = Math.max(56, Math.min(220, tile - margins.left - 8));
    const layout = layoutFor(size / Math.max(rows, cols));
    const ratio = window.devicePixelRatio || 1;
    const buttons = heads.map((head, h) => {
      const canvas = el('canvas', { 'aria-hidden': 'true' });
      canvas.width = Math.round(layout.width * ratio);
      canvas.height = Math.round(layout.height * ratio);
      canvas.style.width = `${layout.width}px`;
      canvas.style.height = `${layout.height}px`;
      const ctx = canvas.getContext('2d');
      ctx.scale(ratio, ratio);
      paintMatrixFigure(ctx, layout, {
        rowTokens,
        colTokens,
        weights: head.weights,
        mask: head.mask,
        scale,
        range,
        theme,
        background: false,
      });
      const label = this.options.headLabel ? this.options.headLabel(h) : `head ${h + 1}`;
      const detail = this.data.entropies ? ` · H̄ ${this.data.entropies[h].toFixed(2)}` : '';
      // The visible caption is the button's name (a separate aria-label would hide the entropy).
      return el(
        'button',
        {
          type: 'button',
          class: 'al-head-tile',
          'aria-pressed': String(h === selected),
          dataset: { head: h },
          onclick: () => this.options.onSelect?.(h),
        },
        el('span', { class: 'al-head-frame' }, canvas),
        el('span', { class: 'al-head-caption' }, el('strong', { text: label }), detail),
      );
    });
    this.host.replaceChildren(...buttons);
  }

  destroy() {
    this.resizeObserver.disconnect();
  }
}

// The largest visible weight of any head: the top of the shared colour range.
export function sharedMax(heads) {
  let max = 0;
  for (const head of heads) max = Math.max(max, visibleMax(head.weights, head.mask));
  return max;
}
