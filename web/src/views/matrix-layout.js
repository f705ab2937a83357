// Geometry and labels of a token-by-token matrix drawing, shared by the live heatmap, the small
// multiples and the PNG/SVG exports so all of them put labels in the same places. Beside the
// matrix go two optional summaries: a per-row statistic on the right (entropy) and a strip of
// per-column values underneath (the mean weight each key gets), painted in the matrix's colours
// so a column stripe in the matrix shows up as one bright cell in the strip.
import { inkOn } from './colormap.js';
import { shortLabel } from './dom.js';
import { DEFAULT_THEME, paintMatrix } from './matrix-paint.js';

export const LABEL_FONT_PX = 12;
const LABEL_GAP = 6;
const STATS_WIDTH = 64;
const STRIP_GAP = 6;

function measure(ctx, text, font) {
  ctx.font = font;
  return ctx.measureText(text).width;
}

// Where the matrix, its labels, the optional per-row statistic column and the optional per-column
// strip go. labelChars: how many characters a label keeps (shortLabel). Returns { left, top,
// cell, width, height, rotateColumns, rowStep, colStep, statsX, stripY, stripHeight, font }.
export function layoutMatrix(
  ctx,
  {
    rowTokens,
    colTokens,
    cell,
    rowStats,
    colStats,
    theme = DEFAULT_THEME,
    labels = true,
    fontPx = LABEL_FONT_PX,
    labelChars = 12,
  },
) {
  const font = `${fontPx}px ${theme.font}`;
  const rows = rowTokens.length;
  const cols = colTokens.length;
  const rowStep = labels ? Math.max(1, Math.ceil((fontPx + 2) / cell)) : 0;
  const colStep = rowStep;
  let left = 8;
  let top = 8;
  let rotateColumns = false;
  if (labels) {
    // Measured in the bold that paintLabels uses for the focused row and column, so the focused
    // label fits as well as the others.
    const bold = `600 ${font}`;
    const label = (t) => shortLabel(t.text, labelChars);
    const rowWidths = rowTokens.map((t) => measure(ctx, label(t), bold));
    const colWidths = colTokens.map((t) => measure(ctx, label(t), bold));
    const stripLabel = colStats ? measure(ctx, colStats.label, font) : 0;
    left = Math.min(150, Math.ceil(Math.max(0, stripLabel, ...rowWidths))) + LABEL_GAP + 4;
    const widestCol = Math.max(0, ...colWidths);
    rotateColumns = widestCol > cell * colStep - 2;
    top = rotateColumns
      ? Math.ceil(Math.min(150, widestCol) * Math.sin(Math.PI / 3)) + LABEL_GAP + 8
      : fontPx + LABEL_GAP + 6;
  }
  const statsX = left + cols * cell + 12;
  const width = Math.ceil(rowStats ? statsX + STATS_WIDTH : left + cols * cell + 8);
  const stripY = top + rows * cell + STRIP_GAP;
  const stripHeight = colStats ? Math.max(6, Math.min(cell, 20)) : 0;
  const height = Math.ceil(colStats ? stripY + stripHeight + 8 : top + rows * cell + 8);
  return {
    left,
    top,
    cell,
    width,
    height,
    rotateColumns,
    rowStep,
    colStep,
    statsX,
    stripY,
    stripHeight,
    font,
    fontPx,
    labelChars,
  };
}

// Draws labels (and highlights for the focused row/column) around a laid-out matrix.
export function paintLabels(ctx, layout, options) {
  paintRowLabels(ctx, layout, options);
  paintColumnLabels(ctx, layout, options);
}

// The query labels left of the rows (and the strip's label left of the strip).
export function paintRowLabels(
  ctx,
  layout,
  { rowTokens, focusRow = -1, lockedRow = -1, colStats, theme = DEFAULT_THEME },
) {
  const { left, top, cell, rowStep, font, labelChars } = layout;
  if (!rowStep) return;
  ctx.save();
  ctx.font = font;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'right';
  rowTokens.forEach((token, r) => {
    const emphasised = r === focusRow || r === lockedRow;
    if (r % rowStep && !emphasised) return;
    ctx.fillStyle = emphasised ? theme.focus : theme.ink;
    ctx.font = emphasised ? `600 ${font}` : font;
    ctx.fillText(shortLabel(token.text, labelChars), left - LABEL_GAP, top + (r + 0.5) * cell);
  });
  if (colStats && layout.stripHeight) {
    ctx.fillStyle = theme.muted;
    ctx.font = font;
    ctx.fillText(colStats.label, left - LABEL_GAP, layout.stripY + layout.stripHeight / 2);
  }
  ctx.restore();
}

// The key labels above the columns, rotated when they are wider than a column.
export function paintColumnLabels(
  ctx,
  layout,
  { colTokens, focusCol = -1, theme = DEFAULT_THEME },
) {
  const { left, top, cell, colStep, rotateColumns, font, fontPx, labelChars } = layout;
  if (!colStep) return;
  ctx.save();
  ctx.font = font;
  ctx.textBaseline = 'middle';
  colTokens.forEach((token, c) => {
    const emphasised = c === focusCol;
    if (c % colStep && !emphasised) return;
    ctx.fillStyle = emphasised ? theme.focus : theme.ink;
    ctx.font = emphasised ? `600 ${font}` : font;
    const x = left + (c + 0.5) * cell;
    const label = shortLabel(token.text, labelChars);
    if (rotateColumns) {
      ctx.save();
      ctx.translate(x, top - LABEL_GAP);
      ctx.rotate(-Math.PI / 3);
      ctx.textAlign = 'left';
      ctx.fillText(label, 0, 0);
      ctx.restore();
    } else {
      ctx.textAlign = 'center';
      ctx.fillText(label, x, top - LABEL_GAP - fontPx / 2);
    }
  });
  ctx.restore();
}

// The per-column strip under the matrix, in the matrix's colours and range; a value that is not
// a number (a key no query may see) is hatched like a masked cell.
export function paintColumnStrip(ctx, layout, { colStats, scale, range, theme = DEFAULT_THEME }) {
  if (!colStats || !layout.stripHeight) return;
  const cols = colStats.values.length;
  paintMatrix(ctx, {
    rows: 1,
    cols,
    weights: colStats.values,
    mask: Uint8Array.from(colStats.values, (value) => Number.isFinite(value)),
    scale,
    range,
    x: layout.left,
    y: layout.stripY,
    cellW: layout.cell,
    cellH: layout.stripHeight,
    theme,
    gap: 1,
  });
  // Wide cells carry their value too, in the ink that reads on the cell's colour.
  if (layout.cell < 34 || layout.stripHeight < 14) return;
  const [lo, hi] = range;
  ctx.save();
  ctx.font = `10.5px ${theme.font}`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  colStats.values.forEach((value, c) => {
    if (!Number.isFinite(value)) return;
    ctx.fillStyle = inkOn(scale, (value - lo) / (hi - lo || 1));
    const text = value.toFixed(2).replace(/^0\./, '.');
    ctx.fillText(
      text,
      layout.left + (c + 0.5) * layout.cell,
      layout.stripY + layout.stripHeight / 2,
    );
  });
  ctx.restore();
}

// Per-row statistic (entropy in bits) as small bars right of the matrix.
export function paintRowStats(ctx, layout, { rowStats, rows, theme = DEFAULT_THEME }) {
  if (!rowStats) return;
  const { top, cell, statsX, font } = layout;
  const barWidth = 26;
  ctx.save();
  ctx.font = font;
  ctx.fillStyle = theme.muted;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'bottom';
  ctx.fillText(rowStats.label, statsX, top - 4);
  ctx.textBaseline = 'middle';
  for (let r = 0; r < rows; r++) {
    const value = rowStats.values[r];
    const fraction = rowStats.max > 0 ? Math.min(1, value / rowStats.max) : 0;
    const y = top + r * cell;
    const barHeight = Math.max(1, Math.min(10, cell * 0.5));
    ctx.fillStyle = theme.masked;
    ctx.fillRect(statsX, y + (cell - barHeight) / 2, barWidth, barHeight);
    ctx.fillStyle = theme.muted;
    ctx.fillRect(statsX, y + (cell - barHeight) / 2, barWidth * fraction, barHeight);
    if (cell >= 14) {
      ctx.fillStyle = theme.ink;
      ctx.fillText(value.toFixed(2), statsX + barWidth + 5, y + cell / 2);
    }
  }
  ctx.restore();
}

// A complete static drawing (for PNG export and thumbnails): background, labels, cells, stats.
export function paintMatrixFigure(
  ctx,
  layout,
  {
    rowTokens,
    colTokens,
    weights,
    mask,
    scale,
    range,
    rowStats,
    colStats,
    theme = DEFAULT_THEME,
    background = true,
  },
) {
  if (background) {
    ctx.fillStyle = theme.background;
    ctx.fillRect(0, 0, layout.width, layout.height);
  }
  paintMatrix(ctx, {
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
  });
  paintLabels(ctx, layout, { rowTokens, colTokens, colStats, theme });
  paintRowStats(ctx, layout, { rowStats, rows: rowTokens.length, theme });
  paintColumnStrip(ctx, layout, { colStats, scale, range, theme });
}
