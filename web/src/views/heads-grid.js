// Small multiples: one thumbnail heatmap per head, each a button that selects ("enlarges") that
// head. Every head uses the same colour range so heads compare fairly.
import { el } from './dom.js';
import { paintMatrix, readTheme, visibleMax } from './matrix-paint.js';

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

  // data: { heads: [{ weights, mask }], rows, cols, scale, selected,
  //   entropies? (mean bits per head) }
  setData(data) {
    this.data = data;
    this.render();
  }

  render() {
    if (!this.data || !this.host.isConnected) return;
    const { heads, rows, cols, scale, selected } = this.data;
    const theme = readTheme(this.host);
    this.width = this.host.clientWidth;
    const available = this.width || 600;
    const columns = Math.min(heads.length, Math.max(1, Math.floor(available / 150)));
    const size = Math.max(72, Math.min(220, Math.floor(available / columns) - TILE_CHROME));
    let max = 0;
    for (const head of heads) max = Math.max(max, visibleMax(head.weights, head.mask));
    const buttons = heads.map((head, h) => {
      const canvas = el('canvas', { 'aria-hidden': 'true' });
      const cell = size / Math.max(rows, cols);
      const ratio = window.devicePixelRatio || 1;
      canvas.width = Math.round(cols * cell * ratio);
      canvas.height = Math.round(rows * cell * ratio);
      canvas.style.width = `${cols * cell}px`;
      canvas.style.height = `${rows * cell}px`;
      const ctx = canvas.getContext('2d');
      ctx.scale(ratio, ratio);
      paintMatrix(ctx, {
        rows,
        cols,
        weights: head.weights,
        mask: head.mask,
        scale,
        range: [0, max || 1],
        cellW: cell,
        cellH: cell,
        theme,
      });
      const label = this.options.headLabel ? this.options.headLabel(h) : `head ${h + 1}`;
      const detail = this.data.entropies ? ` · H̄ ${this.data.entropies[h].toFixed(2)}` : '';
      return el(
        'button',
        {
          type: 'button',
          class: 'al-head-tile',
          'aria-pressed': String(h === selected),
          'aria-label': label,
          dataset: { head: h },
          onclick: () => this.options.onSelect?.(h),
        },
        el('span', { class: 'al-head-frame', style: `width:${size}px;height:${size}px` }, canvas),
        el('span', { class: 'al-head-caption' }, el('strong', { text: label }), detail),
      );
    });
    this.host.replaceChildren(...buttons);
  }

  destroy() {
    this.resizeObserver.disconnect();
  }
}
