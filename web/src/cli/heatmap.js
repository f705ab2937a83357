// An attention matrix as terminal text: one row per query, one two-column cell per key, coloured
// with viridis (colour-blind safe, and its lightness rises steadily, so it also reads in
// greyscale). Without colour, shade characters carry the same ramp.
//
// Colour modes: 'truecolor' (24-bit background escapes), '256' (nearest xterm-256 colour) and
// 'none' (plain text). Masked cells (keys the query may not see) show a dot in every mode, so
// "masked" and "visible with weight ~0" stay distinguishable.

import { colorAt } from '../views/colormap.js';
import { entropy, topAttended } from '../row-stats.js';
import { displayWidth, fitToWidth, graphemes, graphemeWidth, sanitize } from './terminal-text.js';

export const COLOR_MODES = ['truecolor', '256', 'none'];

const CELL_WIDTH = 2;
const MAX_LABEL_WIDTH = 14;
const MAX_HEADER_ROWS = 6;
const SHADES = ['░', '▒', '▓', '█'];
const MASKED_CELL = ' ·';
const RESET = '\x1b[0m';
const CUBE_LEVELS = [0, 95, 135, 175, 215, 255];

function nearestIndex(levels, value) {
  let best = 0;
  for (let i = 1; i < levels.length; i++) {
    if (Math.abs(levels[i] - value) < Math.abs(levels[best] - value)) best = i;
  }
  return best;
}

/** The xterm-256 palette index closest to an RGB colour (6x6x6 cube or the 24 greys). */
export function xterm256(r, g, b) {
  const [ri, gi, bi] = [r, g, b].map((c) => nearestIndex(CUBE_LEVELS, c));
  const cube = [CUBE_LEVELS[ri], CUBE_LEVELS[gi], CUBE_LEVELS[bi]];
  const greyIndex = Math.max(0, Math.min(23, Math.round(((r + g + b) / 3 - 8) / 10)));
  const grey = 8 + 10 * greyIndex;
  const distance = (c) => (c[0] - r) ** 2 + (c[1] - g) ** 2 + (c[2] - b) ** 2;
  return distance([grey, grey, grey]) < distance(cube)
    ? 232 + greyIndex
    : 16 + 36 * ri + 6 * gi + bi;
}

/** One cell showing `fraction` (0..1 of the matrix maximum) in the given colour mode. */
export function cell(fraction, colorMode) {
  if (colorMode === 'none') {
    if (fraction <= 0) return ' '.repeat(CELL_WIDTH);
    const shade = SHADES[Math.min(SHADES.length - 1, Math.ceil(fraction * SHADES.length) - 1)];
    return shade.repeat(CELL_WIDTH);
  }
  const [r, g, b] = colorAt('viridis', fraction);
  const background =
    colorMode === 'truecolor' ? `48;2;${r};${g};${b}` : `48;5;${xterm256(r, g, b)}`;
  return `\x1b[${background}m${' '.repeat(CELL_WIDTH)}${RESET}`;
}

/** Column labels written top to bottom, one grapheme per line, '…' where a label is cut. */
function verticalLabels(labels, indent) {
  const split = labels.map((label) => graphemes(sanitize(label)));
  const rows = Math.min(MAX_HEADER_ROWS, Math.max(1, ...split.map((g) => g.length)));
  const lines = [];
  for (let r = 0; r < rows; r++) {
    let line = indent;
    for (const chars of split) {
      const cut = chars.length > rows && r === rows - 1;
      const ch = cut ? '…' : (chars[r] ?? ' ');
      line += ch + ' '.repeat(Math.max(0, CELL_WIDTH - graphemeWidth(ch)));
    }
    lines.push(line.trimEnd());
  }
  return lines;
}

function legend(max, colorMode) {
  const steps = 8;
  let ramp = '';
  for (let i = 1; i <= steps; i++) ramp += cell(i / steps, colorMode);
  return `weight  0 ${ramp} ${max.toFixed(3)} (head maximum)   ${MASKED_CELL.trim()} masked`;
}

/**
 * Renders one attention matrix.
 * @param {object} matrix
 * @param {ArrayLike<number>} matrix.weights [rows * columns], row-major
 * @param {ArrayLike<number>} [matrix.mask] [rows * columns], 0 = masked
 * @param {string[]} matrix.rowLabels query tokens
 * @param {string[]} matrix.columnLabels key tokens
 * @param {string} matrix.colorMode one of COLOR_MODES
 * @param {number} [matrix.maxWidth] terminal columns; keys that do not fit are left out (noted)
 * @returns {string[]} lines
 */
export function renderHeatmap({
  weights,
  mask,
  rowLabels,
  columnLabels,
  colorMode,
  maxWidth = Infinity,
}) {
  const rows = rowLabels.length;
  const columns = columnLabels.length;
  let max = 0;
  for (let i = 0; i < rows * columns; i++) max = Math.max(max, weights[i]);

  const indexWidth = String(rows - 1).length;
  const labelWidth = Math.min(
    MAX_LABEL_WIDTH,
    Math.max(...rowLabels.map((l) => displayWidth(sanitize(l)))),
  );
  const prefixWidth = indexWidth + 1 + labelWidth + 1;
  const shownColumns = Math.max(
    1,
    Math.min(columns, Math.floor((maxWidth - prefixWidth) / CELL_WIDTH)),
  );

  const lines = verticalLabels(columnLabels.slice(0, shownColumns), ' '.repeat(prefixWidth));
  for (let i = 0; i < rows; i++) {
    const row = weights.subarray
      ? weights.subarray(i * columns, (i + 1) * columns)
      : Array.prototype.slice.call(weights, i * columns, (i + 1) * columns);
    const label = fitToWidth(sanitize(rowLabels[i]), labelWidth);
    let line = `${String(i).padStart(indexWidth)} ${label} `;
    for (let j = 0; j < shownColumns; j++) {
      const visible = !mask || mask[i * columns + j] !== 0;
      line += visible ? cell(max > 0 ? row[j] / max : 0, colorMode) : MASKED_CELL;
    }
    const [top] = topAttended(row, 1);
    const topLabel = top && fitToWidth(sanitize(columnLabels[top.index]), 10).trimEnd();
    const summary = top
      ? `  → ${topLabel} ${top.weight.toFixed(2)}  H ${entropy(row).toFixed(2)} bits`
      : '  (sees no key)';
    if (
      shownColumns === columns &&
      prefixWidth + columns * CELL_WIDTH + displayWidth(summary) <= maxWidth
    ) {
      line += summary;
    }
    lines.push(line);
  }
  if (shownColumns < columns) {
    lines.push(
      `(keys ${shownColumns}..${columns - 1} do not fit this terminal; widen it or use --json)`,
    );
  }
  lines.push('', legend(max, colorMode));
  return lines;
}
