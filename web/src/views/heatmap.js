// The interactive heatmap: a canvas of query rows x key columns that zooms (buttons, +/-,
// ctrl+wheel, pinch), follows the pointer with a tooltip, and is fully usable from the keyboard:
// arrow keys move a focus cell, Home/End and PageUp/PageDown jump, Enter locks the query row.
// What the focus cell holds is announced through a live region. Zoomed in and scrolled, the
// token labels stay on the visible edges (sticky), so a cell far from the corner still says
// which query and key it belongs to.
import { el, formatWeight, shortLabel, tokenLabel } from './dom.js';
import {
  LABEL_FONT_PX,
  layoutMatrix,
  paintColumnLabels,
  paintColumnStrip,
  paintLabels,
  paintRowLabels,
  paintRowStats,
} from './matrix-layout.js';
import { DEFAULT_THEME, matrixImage, paintMatrix, readTheme, visibleMax } from './matrix-paint.js';

const MIN_CELL = 3;
const MAX_CELL = 72;
const MAX_CANVAS_CSS = 12000;
const MAX_BACKING_PIXELS = 36e6;
// Fitting a matrix into the height of its scroll box never shrinks cells below this: it is the
// smallest cell that still gets a label on every row (LABEL_FONT_PX + 2), and a text too long
// for it scrolls instead.
const MIN_FIT_CELL = LABEL_FONT_PX + 2;

export class Heatmap {
  // options: { label, onSelect(row, col), onFocus(row, col), describe(row, col) -> string,
  //            strings: { masked, leftOut, zoomHint } }
  constructor(host, options = {}) {
    this.host = host;
    this.options = options;
    this.data = null;
    this.zoom = 1;
    this.focus = { row: 0, col: 0 };
    this.lockedRow = -1;
    this.hover = null;
    host.classList.add('al-heatmap');
    this.canvas = el('canvas', {
      tabindex: 0,
      role: 'application',
      'aria-roledescription': options.roleDescription ?? 'heatmap',
      'aria-label': options.label ?? 'attention heatmap',
      class: 'al-heatmap-canvas',
    });
    this.scroller = el('div', { class: 'al-heatmap-scroll' }, this.canvas);
    this.tooltip = el('div', { class: 'al-tooltip', 'aria-hidden': 'true', hidden: true });
    this.live = el('div', { class: 'al-sr-only', 'aria-live': 'polite', 'aria-atomic': 'true' });
    host.replaceChildren(this.scroller, this.tooltip, this.live);
    this.#bindEvents();
    this.resizeObserver = new ResizeObserver(() => this.render());
    this.resizeObserver.observe(this.scroller);
  }

  // data: { rowTokens, colTokens, weights (row-major), mask (0/1 or null), leftOut? (1 where
  //         top-k or LSH dropped a key the mask allowed: hatched like masked cells, named apart),
  //         scale, range?, rowStats?: { values, max, label },
  //         colStats?: { values, label } (in weight units) }
  setData(data) {
    this.data = data;
    const rows = data.rowTokens.length;
    const cols = data.colTokens.length;
    this.focus.row = Math.min(this.focus.row, rows - 1);
    this.focus.col = Math.min(this.focus.col, cols - 1);
    if (this.lockedRow >= rows) this.lockedRow = -1;
    this.render();
  }

  setLockedRow(row) {
    this.lockedRow = row;
    if (row >= 0) this.focus.row = row;
    this.render();
  }

  setZoom(zoom) {
    this.zoom = Math.min(8, Math.max(0.25, zoom));
    this.render();
    this.#scrollFocusIntoView();
  }

  zoomBy(factor) {
    this.setZoom(this.zoom * factor);
  }

  // Cell size in CSS pixels. At zoom 1 the matrix fits the container's width and, when the rows
  // can stay legible, its max-height too, so a short text shows whole without scrolling.
  cellSize() {
    const { rowTokens, colTokens } = this.data;
    const ctx = this.canvas.getContext('2d');
    // Bold, as layoutMatrix measures.
    ctx.font = `600 ${LABEL_FONT_PX}px ${this.theme?.font ?? DEFAULT_THEME.font}`;
    let labels = 0;
    for (const token of rowTokens)
      labels = Math.max(labels, ctx.measureText(shortLabel(token.text)).width);
    const reserved = Math.min(150, labels) + 24 + (this.data.rowStats ? 76 : 0);
    const available = Math.max(120, this.scroller.clientWidth - reserved);
    const widthFit = Math.min(52, Math.max(MIN_CELL, Math.floor(available / colTokens.length)));
    const fit = this.#heightFit(ctx, widthFit);
    const cell = Math.min(MAX_CELL, Math.max(MIN_CELL, fit * this.zoom));
    const limit = MAX_CANVAS_CSS / Math.max(rowTokens.length, colTokens.length);
    return Math.max(MIN_CELL, Math.min(cell, limit));
  }

  // The largest cell, at most `cell`, whose whole matrix fits the scroll box's max-height; never
  // below MIN_FIT_CELL (a long text scrolls instead).
  #heightFit(ctx, cell) {
    const maxHeight = Number.parseFloat(getComputedStyle(this.scroller).maxHeight);
    if (!Number.isFinite(maxHeight)) return cell;
    const { rowTokens, colTokens, rowStats, colStats } = this.data;
    const rows = rowTokens.length;
    let fitted = cell;
    // Narrower cells can tip the column labels into their rotated, taller form: fit again.
    for (let attempt = 0; attempt < 3 && fitted > MIN_FIT_CELL; attempt++) {
      const layout = layoutMatrix(ctx, {
        rowTokens,
        colTokens,
        cell: fitted,
        rowStats,
        colStats,
        theme: this.theme,
      });
      const margins = layout.height - rows * fitted;
      const next = Math.floor((maxHeight - margins) / rows);
      if (next >= fitted) break;
      fitted = Math.max(MIN_FIT_CELL, next);
    }
    return Math.min(cell, fitted);
  }

  render() {
    if (!this.data || !this.canvas.isConnected) return;
    const { rowTokens, colTokens, weights, mask, scale, rowStats, colStats } = this.data;
    const theme = readTheme(this.host);
    this.theme = theme;
    const ctx = this.canvas.getContext('2d');
    const layout = layoutMatrix(ctx, {
      rowTokens,
      colTokens,
      cell: this.cellSize(),
      rowStats,
      colStats,
      theme,
    });
    this.layout = layout;
    // Where the cells are, in CSS pixels from the canvas corner (for tests and overlays).
    Object.assign(this.canvas.dataset, { left: layout.left, top: layout.top, cell: layout.cell });
    const ratio = Math.min(
      window.devicePixelRatio || 1,
      Math.sqrt(MAX_BACKING_PIXELS / (layout.width * layout.height)),
    );
    this.canvas.width = Math.round(layout.width * ratio);
    this.canvas.height = Math.round(layout.height * ratio);
    this.canvas.style.width = `${layout.width}px`;
    this.canvas.style.height = `${layout.height}px`;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, layout.width, layout.height);
    const range = this.data.range ?? [0, visibleMax(weights, mask) || 1];
    paintMatrix(ctx, {
      image: this.#cellsImage(range, theme),
      rows: rowTokens.length,
      cols: colTokens.length,
      weights,
      mask,
      scale,
      range,
      x: layout.left,
      y: layout.top,
      cellW: layout.cell,
      cellH: layout.cell,
      theme,
      gap: 1,
      // The scroll handler renders again, so the hatching follows the visible part.
      view: {
        x: this.scroller.scrollLeft,
        y: this.scroller.scrollTop,
        width: this.scroller.clientWidth,
        height: this.scroller.clientHeight,
      },
    });
    const focusVisible = this.hasFocus || this.hover;
    const marked = this.hover ?? this.focus;
    const labels = {
      rowTokens,
      colTokens,
      colStats,
      theme,
      lockedRow: this.lockedRow,
      focusRow: focusVisible ? marked.row : this.lockedRow,
      focusCol: focusVisible ? marked.col : -1,
    };
    paintLabels(ctx, layout, labels);
    paintRowStats(ctx, layout, { rowStats, rows: rowTokens.length, theme });
    paintColumnStrip(ctx, layout, { colStats, scale, range, theme });
    this.#paintMarks(ctx, layout, theme, focusVisible ? marked : null);
    this.#paintStickyLabels(ctx, layout, labels);
  }

  // The matrix's cells, one pixel each, coloured once per weights, mask, scale, range and theme:
  // a pointer move or a zoom step at 1,024 tokens repaints from it instead of colouring a
  // million cells again.
  #cellsImage(range, theme) {
    const { rowTokens, colTokens, weights, mask, scale } = this.data;
    const key = [weights, mask, scale, range[0], range[1], theme.masked];
    const kept = this.cells;
    if (kept && kept.key.every((part, i) => part === key[i])) return kept.image;
    const rows = rowTokens.length;
    const cols = colTokens.length;
    const image = matrixImage({ rows, cols, weights, mask, scale, range, theme });
    this.cells = { key, image };
    return image;
  }

  // Once the matrix is scrolled, the labels are painted again along the visible top and left
  // edges, over a band of background, where the reader's eye looks for them.
  #paintStickyLabels(ctx, layout, labels) {
    const x = Math.min(this.scroller.scrollLeft, layout.width - layout.left);
    const y = Math.min(this.scroller.scrollTop, layout.height - layout.top);
    this.canvas.dataset.labelsTop = String(y);
    this.canvas.dataset.labelsLeft = String(x);
    ctx.save();
    ctx.fillStyle = labels.theme.background;
    if (y > 0) {
      ctx.fillRect(0, y, layout.width, layout.top);
      ctx.translate(0, y);
      paintColumnLabels(ctx, layout, labels);
      ctx.translate(0, -y);
    }
    if (x > 0) {
      ctx.fillRect(x, 0, layout.left, layout.height);
      ctx.translate(x, 0);
      paintRowLabels(ctx, layout, labels);
      ctx.translate(-x, 0);
    }
    if (x > 0 && y > 0) ctx.fillRect(x, y, layout.left, layout.top);
    ctx.restore();
  }

  #paintMarks(ctx, layout, theme, marked) {
    const { left, top, cell } = layout;
    const cols = this.data.colTokens.length;
    ctx.save();
    if (this.lockedRow >= 0) {
      ctx.strokeStyle = theme.focus;
      ctx.lineWidth = 2;
      ctx.strokeRect(left - 1, top + this.lockedRow * cell - 1, cols * cell + 2, cell + 2);
    }
    if (marked) {
      ctx.strokeStyle = theme.background;
      ctx.lineWidth = 4;
      ctx.strokeRect(left + marked.col * cell, top + marked.row * cell, cell, cell);
      ctx.strokeStyle = theme.ink;
      ctx.lineWidth = 2;
      ctx.strokeRect(left + marked.col * cell, top + marked.row * cell, cell, cell);
    }
    ctx.restore();
  }

  cellAt(clientX, clientY) {
    if (!this.layout) return null;
    const box = this.canvas.getBoundingClientRect();
    const x = clientX - box.left - this.layout.left;
    const y = clientY - box.top - this.layout.top;
    // Under the sticky labels there is a label, not a cell.
    if (clientX - box.left < this.scroller.scrollLeft + this.layout.left) return null;
    if (clientY - box.top < this.scroller.scrollTop + this.layout.top) return null;
    const col = Math.floor(x / this.layout.cell);
    const row = Math.floor(y / this.layout.cell);
    if (
      row < 0 ||
      col < 0 ||
      row >= this.data.rowTokens.length ||
      col >= this.data.colTokens.length
    )
      return null;
    return { row, col };
  }

  describe(row, col) {
    if (this.options.describe) return this.options.describe(row, col);
    const { rowTokens, colTokens, weights, mask, leftOut } = this.data;
    const i = row * colTokens.length + col;
    const strings = this.options.strings ?? {};
    const value =
      mask && !mask[i]
        ? leftOut?.[i]
          ? (strings.leftOut ?? 'left out')
          : (strings.masked ?? 'masked')
        : formatWeight(weights[i]);
    return `${tokenLabel(rowTokens[row].text)} → ${tokenLabel(colTokens[col].text)}: ${value}`;
  }

  #moveFocus(row, col, announce = true) {
    const rows = this.data.rowTokens.length;
    const cols = this.data.colTokens.length;
    this.focus = {
      row: Math.max(0, Math.min(rows - 1, row)),
      col: Math.max(0, Math.min(cols - 1, col)),
    };
    this.render();
    this.#scrollFocusIntoView();
    if (announce) this.live.textContent = this.describe(this.focus.row, this.focus.col);
    this.options.onFocus?.(this.focus.row, this.focus.col);
  }

  #scrollFocusIntoView() {
    if (!this.layout) return;
    const { left, top, cell } = this.layout;
    const x = left + this.focus.col * cell;
    const y = top + this.focus.row * cell;
    const s = this.scroller;
    if (x < s.scrollLeft + left) s.scrollLeft = Math.max(0, x - left);
    else if (x + cell > s.scrollLeft + s.clientWidth) s.scrollLeft = x + cell - s.clientWidth + 8;
    if (y < s.scrollTop + top) s.scrollTop = Math.max(0, y - top);
    else if (y + cell > s.scrollTop + s.clientHeight) s.scrollTop = y + cell - s.clientHeight + 8;
  }

  #showTooltip(cell, clientX, clientY) {
    if (!cell) {
      this.tooltip.hidden = true;
      return;
    }
    this.tooltip.textContent = this.describe(cell.row, cell.col);
    this.tooltip.hidden = false;
    const host = this.host.getBoundingClientRect();
    const x = Math.min(clientX - host.left + 14, host.width - this.tooltip.offsetWidth - 4);
    this.tooltip.style.transform = `translate(${Math.max(0, x)}px, ${clientY - host.top + 16}px)`;
  }

  #bindEvents() {
    const c = this.canvas;
    this.scroller.addEventListener(
      'scroll',
      () => {
        if (this.scrollFrame) return;
        this.scrollFrame = requestAnimationFrame(() => {
          this.scrollFrame = 0;
          this.render();
        });
      },
      { passive: true },
    );
    c.addEventListener('pointermove', (event) => {
      if (!this.data || this.pinch) return;
      const cell = this.cellAt(event.clientX, event.clientY);
      const changed = cell?.row !== this.hover?.row || cell?.col !== this.hover?.col;
      this.hover = cell;
      if (event.pointerType === 'mouse') this.#showTooltip(cell, event.clientX, event.clientY);
      if (changed) this.render();
    });
    c.addEventListener('pointerleave', () => {
      this.hover = null;
      this.tooltip.hidden = true;
      this.render();
    });
    c.addEventListener('click', (event) => {
      if (!this.data) return;
      const cell = this.cellAt(event.clientX, event.clientY);
      if (!cell) return;
      this.focus = cell;
      this.options.onSelect?.(cell.row, cell.col);
      if (event.pointerType && event.pointerType !== 'mouse')
        this.#showTooltip(cell, event.clientX, event.clientY);
      this.live.textContent = this.describe(cell.row, cell.col);
      this.render();
    });
    c.addEventListener('focus', () => {
      this.hasFocus = true;
      this.render();
    });
    c.addEventListener('blur', () => {
      this.hasFocus = false;
      this.render();
    });
    c.addEventListener('keydown', (event) => this.#onKey(event));
    c.addEventListener(
      'wheel',
      (event) => {
        if (!event.ctrlKey && !event.metaKey) return;
        event.preventDefault();
        this.zoomBy(event.deltaY < 0 ? 1.15 : 1 / 1.15);
      },
      { passive: false },
    );
    this.#bindPinch();
  }

  #onKey(event) {
    if (!this.data) return;
    const { row, col } = this.focus;
    const page = Math.max(
      1,
      Math.floor(this.scroller.clientHeight / (this.layout?.cell || 20)) - 1,
    );
    const moves = {
      ArrowUp: [row - 1, col],
      ArrowDown: [row + 1, col],
      ArrowLeft: [row, col - 1],
      ArrowRight: [row, col + 1],
      Home: event.ctrlKey ? [0, 0] : [row, 0],
      End: event.ctrlKey ? [Infinity, Infinity] : [row, Infinity],
      PageUp: [row - page, col],
      PageDown: [row + page, col],
    };
    if (moves[event.key]) {
      event.preventDefault();
      this.#moveFocus(...moves[event.key]);
    } else if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      this.options.onSelect?.(row, col);
      this.live.textContent = this.describe(row, col);
    } else if (event.key === '+' || event.key === '=') {
      event.preventDefault();
      this.zoomBy(1.25);
    } else if (event.key === '-' || event.key === '_') {
      event.preventDefault();
      this.zoomBy(0.8);
    } else if (event.key === '0') {
      event.preventDefault();
      this.setZoom(1);
    }
  }

  // Two-finger pinch zooms; one finger keeps scrolling the container natively.
  #bindPinch() {
    const points = new Map();
    const distance = () => {
      const [a, b] = [...points.values()];
      return Math.hypot(a.x - b.x, a.y - b.y);
    };
    this.canvas.addEventListener('pointerdown', (event) => {
      if (event.pointerType !== 'touch') return;
      points.set(event.pointerId, { x: event.clientX, y: event.clientY });
      if (points.size === 2) this.pinch = { start: distance(), zoom: this.zoom };
    });
    this.canvas.addEventListener('pointermove', (event) => {
      if (!points.has(event.pointerId)) return;
      points.set(event.pointerId, { x: event.clientX, y: event.clientY });
      if (this.pinch && points.size === 2)
        this.setZoom(this.pinch.zoom * (distance() / this.pinch.start));
    });
    const end = (event) => {
      points.delete(event.pointerId);
      if (points.size < 2) this.pinch = null;
    };
    this.canvas.addEventListener('pointerup', end);
    this.canvas.addEventListener('pointercancel', end);
  }

  destroy() {
    this.resizeObserver.disconnect();
  }
}
