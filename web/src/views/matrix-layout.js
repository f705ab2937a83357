// Geometry and labels of a token-by-token matrix drawing, shared by the live heatmap, the small
// multiples and the PNG/SVG exports so all of them put labels in the same places.
import { shortLabel } from './dom.js';
import { DEFAULT_THEME, paintMatrix } from './matrix-paint.js';

export const LABEL_FONT_PX = 12;
const LABEL_GAP = 6;
const STATS_WIDTH = 64;

function measure(ctx, text, font) {
  ctx.font = font;
  return ctx.measureText(text).width;
}

// Where the matrix, its labels and the optional per-row statistic column go.
// Returns { left, top, cell, width, height, rotateColumns, rowStep, colStep, statsX }.
export function layoutMatrix(
  ctx,
  { rowTokens, colTokens, cell, rowStats, theme = DEFAULT_THEME, labels = true },
) {
  const font = `${LABEL_FONT_PX}px ${theme.font}`;
  const rows = rowTokens.length;
  const cols = colTokens.length;
  const rowStep = labels ? Math.max(1, Math.ceil((LABEL_FONT_PX + 2) / cell)) : 0;
  const colStep = rowStep;
  let left = 8;
  let top = 8;
  let rotateColumns = false;
  if (labels) {
    // Measured in the bold that paintLabels uses for the focused row and column, so the focused
    // label fits as well as the others.
    const bold = `600 ${font}`;
    const rowWidths = rowTokens.map((t) => measure(ctx, shortLabel(t.text), bold));
    const colWidths = colTokens.map((t) => measure(ctx, shortLabel(t.text), bold));
    left = Math.min(150, Math.ceil(Math.max(0, ...rowWidths))) + LABEL_GAP + 4;
    const widestCol = Math.max(0, ...colWidths);
    rotateColumns = widestCol > cell * colStep - 2;
    top = rotateColumns
      ? Math.ceil(Math.min(150, widestCol) * Math.sin(Math.PI / 3)) + LABEL_GAP + 8
      : LABEL_FONT_PX + LABEL_GAP + 6;
  }
  const statsX = left + cols * cell + 12;
  const width = Math.ceil(rowStats ? statsX + STATS_WIDTH : left + cols * cell + 8);
  const height = Math.ceil(top + rows * cell + 8);
  return { left, top, cell, width, height, rotateColumns, rowStep, colStep, statsX, font };
}

// Draws labels (and highlights for the focused row/column) around a laid-out matrix.
export function paintLabels(
  ctx,
  layout,
  { rowTokens, colTokens, focusRow = -1, focusCol = -1, lockedRow = -1, theme = DEFAULT_THEME },
) {
  const { left, top, cell, rowStep, colStep, rotateColumns, font } = layout;
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
    ctx.fillText(shortLabel(token.text), left - LABEL_GAP, top + (r + 0.5) * cell);
  });
  colTokens.forEach((token, c) => {
    const emphasised = c === focusCol;
    if (c % colStep && !emphasised) return;
    ctx.fillStyle = emphasised ? theme.focus : theme.ink;
    ctx.font = emphasised ? `600 ${font}` : font;
    const x = left + (c + 0.5) * cell;
    if (rotateColumns) {
      ctx.save();
      ctx.translate(x, top - LABEL_GAP);
      ctx.rotate(-Math.PI / 3);
      ctx.textAlign = 'left';
      ctx.fillText(shortLabel(token.text), 0, 0);
      ctx.restore();
    } else {
      ctx.textAlign = 'center';
      ctx.fillText(shortLabel(token.text), x, top - LABEL_GAP - LABEL_FONT_PX / 2);
    }
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
  paintLabels(ctx, layout, { rowTokens, colTokens, theme });
  paintRowStats(ctx, layout, { rowStats, rows: rowTokens.length, theme });
}
