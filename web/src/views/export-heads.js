// Exports of the grid of heads, as the Heads view shows it: every head's matrix side by side in
// one shared colour range, each with its labels and its name, under one title and one legend.
// PNG through the same canvas painting as the live views, SVG through the same cells and labels
// as a single exported matrix.
import { layoutMatrix, paintMatrixFigure } from './matrix-layout.js';
import { DEFAULT_THEME, makeCanvas } from './matrix-paint.js';
import {
  LEGEND_HEIGHT,
  TITLE_HEIGHT,
  canvasPNG,
  colourLegend,
  figureRoot,
  matrixGroup,
  node,
  paintLegend,
  paintTitle,
  svgDocument,
} from './export.js';

const MAX_COLUMNS = 4;
const TILE_CELLS_PX = 260; // the longer side of one head's matrix
const CAPTION_HEIGHT = 20;
const GAP = 16;

// figure: { heads: [{ weights, mask, leftOut? }], rowTokens, colTokens, scale, range, title,
//   subtitle, headLabel(h) -> string, theme? } -> where each head's matrix goes.
function gridLayout(figure) {
  const { heads, rowTokens, colTokens } = figure;
  const ctx = makeCanvas(1, 1).getContext('2d');
  const n = Math.max(rowTokens.length, colTokens.length);
  const cell = Math.max(2, Math.min(22, Math.floor(TILE_CELLS_PX / n)));
  const matrix = layoutMatrix(ctx, {
    rowTokens,
    colTokens,
    cell,
    theme: figure.theme ?? DEFAULT_THEME,
    fontPx: 10,
    labelChars: 8,
  });
  const columns = Math.min(heads.length, MAX_COLUMNS);
  const tileWidth = matrix.width + GAP;
  const tileHeight = CAPTION_HEIGHT + matrix.height + GAP;
  const rows = Math.ceil(heads.length / columns);
  const tiles = heads.map((_, h) => ({
    x: 8 + (h % columns) * tileWidth,
    y: TITLE_HEIGHT + Math.floor(h / columns) * tileHeight,
  }));
  const width = Math.max(360, 8 + columns * tileWidth);
  const height = TITLE_HEIGHT + rows * tileHeight + LEGEND_HEIGHT;
  return { matrix, tiles, width, height, legendY: TITLE_HEIGHT + rows * tileHeight };
}

export async function headsPNG(figure, pixelRatio = 2) {
  const theme = figure.theme ?? DEFAULT_THEME;
  const { matrix, tiles, width, height, legendY } = gridLayout(figure);
  const canvas = makeCanvas(Math.round(width * pixelRatio), Math.round(height * pixelRatio));
  const ctx = canvas.getContext('2d');
  ctx.scale(pixelRatio, pixelRatio);
  ctx.fillStyle = theme.background;
  ctx.fillRect(0, 0, width, height);
  paintTitle(ctx, figure, theme);
  figure.heads.forEach((head, h) => {
    const { x, y } = tiles[h];
    ctx.fillStyle = theme.ink;
    ctx.font = `600 12px ${theme.font}`;
    ctx.textBaseline = 'alphabetic';
    ctx.textAlign = 'left';
    ctx.fillText(figure.headLabel(h), x, y + 14);
    ctx.save();
    ctx.translate(x, y + CAPTION_HEIGHT);
    paintMatrixFigure(ctx, matrix, {
      rowTokens: figure.rowTokens,
      colTokens: figure.colTokens,
      weights: head.weights,
      mask: head.mask,
      scale: figure.scale,
      range: figure.range,
      theme,
      background: false,
    });
    ctx.restore();
  });
  paintLegend(ctx, figure.range, legendY + 8, figure.scale, theme);
  return canvasPNG(canvas);
}

export function headsSVG(figure) {
  const theme = figure.theme ?? DEFAULT_THEME;
  const { matrix, tiles, width, height, legendY } = gridLayout(figure);
  const svg = figureRoot(figure, width, height, theme);
  figure.heads.forEach((head, h) => {
    const { x, y } = tiles[h];
    const tile = node('g', { class: 'head', transform: `translate(${x} ${y})` });
    tile.append(node('text', { y: 14, 'font-weight': 600, fill: theme.ink }, figure.headLabel(h)));
    const body = node('g', { transform: `translate(0 ${CAPTION_HEIGHT})` });
    body.append(
      matrixGroup(
        {
          ...figure,
          weights: head.weights,
          mask: head.mask,
          leftOut: head.leftOut,
        },
        matrix,
      ),
    );
    tile.append(body);
    svg.append(tile);
  });
  svg.append(...colourLegend(figure.range, legendY + 8, theme));
  return svgDocument(svg);
}
