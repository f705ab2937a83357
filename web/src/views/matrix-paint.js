// Paints a weight matrix into a 2-D canvas context: one pixel per cell in an offscreen image,
// scaled up without smoothing (fast for hundreds of tokens), masked cells hatched so "not allowed
// to look" never reads as "looked and found nothing".
import { DEFAULT_SCALE, colorAt } from './colormap.js';

export const DEFAULT_THEME = {
  background: '#fbfaf7',
  ink: '#1d1b18',
  muted: '#6f6a60',
  masked: '#ebe7de',
  hatch: '#c9c2b4',
  grid: 'rgba(255,255,255,0.55)',
  focus: '#ff5a36',
  font:
    'system-ui, "Segoe UI", Roboto, "Noto Sans", "PingFang SC", "Hiragino Sans GB", ' +
    '"Microsoft YaHei", "WenQuanYi Micro Hei", sans-serif',
};

// Theme colours come from CSS custom properties on `element` (--al-masked, --al-ink, ...), so the
// canvas follows the page's light/dark palette.
export function readTheme(element) {
  const theme = { ...DEFAULT_THEME };
  if (!element || typeof getComputedStyle !== 'function') return theme;
  const style = getComputedStyle(element);
  for (const key of Object.keys(theme)) {
    const value = style.getPropertyValue(`--al-${key}`).trim();
    if (value) theme[key] = value;
  }
  return theme;
}

// Largest visible weight (the top of the colour range); 0 when everything is masked.
export function visibleMax(weights, mask) {
  let max = 0;
  for (let i = 0; i < weights.length; i++) {
    if ((!mask || mask[i]) && weights[i] > max) max = weights[i];
  }
  return max;
}

// One cell's worth of hatching (three diagonals, half a cell apart), so the pattern repeats
// exactly once per cell and every masked cell looks the same.
function hatchPattern(ctx, theme, size) {
  const tile = makeCanvas(size, size);
  const t = tile.getContext('2d');
  t.fillStyle = theme.masked;
  t.fillRect(0, 0, size, size);
  t.strokeStyle = theme.hatch;
  t.lineWidth = Math.max(1, size / 16);
  t.beginPath();
  for (const offset of [0.5, 1, 1.5]) {
    t.moveTo(Math.max(0, offset - 1) * size, Math.min(1, offset) * size);
    t.lineTo(Math.min(1, offset) * size, Math.max(0, offset - 1) * size);
  }
  t.stroke();
  return ctx.createPattern(tile, 'repeat');
}

// A canvas for offscreen work in both documents and workers.
export function makeCanvas(width, height) {
  if (typeof document !== 'undefined') {
    const canvas = document.createElement('canvas');
    canvas.width = width;
    canvas.height = height;
    return canvas;
  }
  return new OffscreenCanvas(width, height);
}

// The cells of a rows x cols matrix as an image of one pixel per cell, masked cells in the
// masked colour: what paintMatrix scales up. A view that repaints the same matrix (pointer
// moves, zoom steps) keeps it and passes it back as paintMatrix's `image`.
export function matrixImage({ rows, cols, weights, mask, scale = DEFAULT_SCALE, range, theme }) {
  const [lo, hi] = range ?? [0, visibleMax(weights, mask) || 1];
  const span = hi - lo || 1;
  const image = new ImageData(cols, rows);
  const px = image.data;
  const maskedRgb = parseColor((theme ?? DEFAULT_THEME).masked);
  let anyMasked = false;
  for (let i = 0; i < rows * cols; i++) {
    const o = i * 4;
    if (mask && !mask[i]) {
      anyMasked = true;
      px[o] = maskedRgb[0];
      px[o + 1] = maskedRgb[1];
      px[o + 2] = maskedRgb[2];
    } else {
      const [r, g, b] = colorAt(scale, (weights[i] - lo) / span);
      px[o] = r;
      px[o + 1] = g;
      px[o + 2] = b;
    }
    px[o + 3] = 255;
  }
  const canvas = makeCanvas(cols, rows);
  canvas.getContext('2d').putImageData(image, 0, 0);
  return { canvas, anyMasked };
}

// Paints rows x cols cells at (x, y), each cellW x cellH (canvas units).
// weights: row-major Float32Array; mask: row-major 0/1 array or null (all visible);
// range: [lo, hi] mapped to the ends of the colour scale; image: matrixImage's of the same
// arguments, when the caller kept it; view: the part of the ctx that shows ({ x, y, width,
// height }; default all), outside which the masked cells' hatching is left out.
export function paintMatrix(
  ctx,
  {
    rows,
    cols,
    weights,
    mask,
    scale = DEFAULT_SCALE,
    range,
    x = 0,
    y = 0,
    cellW,
    cellH,
    theme = DEFAULT_THEME,
    gap = 0,
    view = null,
    image = matrixImage({ rows, cols, weights, mask, scale, range, theme }),
  },
) {
  ctx.save();
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(image.canvas, x, y, cols * cellW, rows * cellH);
  if (image.anyMasked && cellW >= 6 && cellH >= 6)
    paintHatch(ctx, { rows, cols, mask, x, y, cellW, cellH, theme, view });
  if (gap > 0 && cellW >= 10 && cellH >= 10)
    paintGrid(ctx, { rows, cols, x, y, cellW, cellH, theme, gap });
  ctx.restore();
}

// Hatching over masked cells: the masked cells form a stencil, the pattern is drawn through it.
// Only the cells within `view` ({ x, y, width, height } in ctx units, default all): a zoomed
// 1,024-token matrix is 36 million pixels, and a layer that size costs a second per repaint.
function paintHatch(ctx, { rows, cols, mask, x, y, cellW, cellH, theme, view }) {
  const first = (at, origin, cell, count) =>
    view ? Math.max(0, Math.min(count, Math.floor((at - origin) / cell))) : 0;
  const last = (at, origin, cell, count) =>
    view ? Math.max(0, Math.min(count, Math.ceil((at - origin) / cell))) : count;
  const r0 = first(view?.y, y, cellH, rows);
  const r1 = last(view && view.y + view.height, y, cellH, rows);
  const c0 = first(view?.x, x, cellW, cols);
  const c1 = last(view && view.x + view.width, x, cellW, cols);
  if (r1 <= r0 || c1 <= c0) return;
  const left = Math.round(c0 * cellW);
  const top = Math.round(r0 * cellH);
  const width = Math.ceil(c1 * cellW) - left;
  const height = Math.ceil(r1 * cellH) - top;
  const layer = makeCanvas(width, height);
  const l = layer.getContext('2d');
  l.fillStyle = '#000';
  for (let r = r0; r < r1; r++) {
    let start = -1;
    for (let c = c0; c <= c1; c++) {
      const masked = c < c1 && !mask[r * cols + c];
      if (masked && start < 0) start = c;
      if (!masked && start >= 0) {
        l.fillRect(
          Math.round(start * cellW) - left,
          Math.round(r * cellH) - top,
          Math.round(c * cellW) - Math.round(start * cellW),
          Math.round((r + 1) * cellH) - Math.round(r * cellH),
        );
        start = -1;
      }
    }
  }
  l.globalCompositeOperation = 'source-in';
  l.fillStyle = hatchPattern(l, theme, Math.max(6, Math.round(Math.min(cellW, cellH))));
  l.fillRect(0, 0, width, height);
  ctx.drawImage(layer, x + left, y + top);
}

function paintGrid(ctx, { rows, cols, x, y, cellW, cellH, theme, gap }) {
  ctx.strokeStyle = theme.grid;
  ctx.lineWidth = gap;
  ctx.beginPath();
  for (let c = 1; c < cols; c++) {
    ctx.moveTo(x + c * cellW, y);
    ctx.lineTo(x + c * cellW, y + rows * cellH);
  }
  for (let r = 1; r < rows; r++) {
    ctx.moveTo(x, y + r * cellH);
    ctx.lineTo(x + cols * cellW, y + r * cellH);
  }
  ctx.stroke();
}

const COLOR_CACHE = new Map();
// '#rrggbb' | '#rgb' | 'rgb(r g b)' | 'rgb(r, g, b)' -> [r, g, b]
export function parseColor(color) {
  if (COLOR_CACHE.has(color)) return COLOR_CACHE.get(color);
  let rgb = [200, 200, 200];
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(color.trim());
  if (hex) {
    const h = hex[1].length === 3 ? [...hex[1]].map((c) => c + c).join('') : hex[1];
    rgb = [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16));
  } else {
    const numbers = color.match(/[\d.]+/g);
    if (numbers && numbers.length >= 3) rgb = numbers.slice(0, 3).map(Number);
  }
  COLOR_CACHE.set(color, rgb);
  return rgb;
}
