// Exports of the current view: PNG (canvas drawing at 2x), SVG (vector cells, labels as real
// text, built with DOM calls and serialised, so token text is escaped by construction, and
// characters XML forbids replaced) and JSON (the numbers and the settings that produced them).
import { colorAt, gradientStops } from './colormap.js';
import { shortLabel } from './dom.js';
import { layoutMatrix, paintMatrixFigure } from './matrix-layout.js';
import { DEFAULT_THEME, makeCanvas, visibleMax } from './matrix-paint.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
// Characters XML 1.0 does not allow anywhere, not even as character references: C0 controls
// other than tab, newline and return, U+FFFE, U+FFFF and unpaired surrogates.
const NOT_XML = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu;

/**
 * Text made fit for an XML document: each character XML forbids becomes U+FFFD. XMLSerializer
 * writes them as they are (a token "a\u0001b" gave a file no XML parser reads), and since they
 * have no escaped form either, replacing them is the only way to keep the file well-formed.
 */
export function xmlSafe(text) {
  return text.replace(NOT_XML, '\ufffd');
}

export const TITLE_HEIGHT = 40;
export const LEGEND_HEIGHT = 44;
const EXPORT_MAX_CELL = 28;

function exportLayout(figure) {
  const ctx = makeCanvas(1, 1).getContext('2d');
  const n = Math.max(figure.rowTokens.length, figure.colTokens.length);
  const cell = Math.max(4, Math.min(EXPORT_MAX_CELL, Math.floor(900 / n)));
  const layout = layoutMatrix(ctx, { ...figure, cell, theme: figure.theme ?? DEFAULT_THEME });
  const width = Math.max(layout.width, 360);
  return { layout, width, height: layout.height + TITLE_HEIGHT + LEGEND_HEIGHT };
}

export function rangeOf(figure) {
  return figure.range ?? [0, visibleMax(figure.weights, figure.mask) || 1];
}

// Title and subtitle at the top of an exported picture.
export function paintTitle(ctx, figure, theme) {
  ctx.fillStyle = theme.ink;
  ctx.font = `600 15px ${theme.font}`;
  ctx.textBaseline = 'alphabetic';
  ctx.fillText(figure.title ?? 'attention weights', 8, 20);
  ctx.fillStyle = theme.muted;
  ctx.font = `12px ${theme.font}`;
  ctx.fillText(figure.subtitle ?? '', 8, 35);
}

// The colour legend (gradient from lo to hi) at height y of an exported picture.
export function paintLegend(ctx, [lo, hi], y, scale, theme) {
  const gradient = ctx.createLinearGradient(8, 0, 208, 0);
  gradientStops(scale).forEach((c, i, all) => gradient.addColorStop(i / (all.length - 1), c));
  ctx.save();
  ctx.fillStyle = gradient;
  ctx.fillRect(8, y, 200, 10);
  ctx.fillStyle = theme.muted;
  ctx.font = `12px ${theme.font}`;
  ctx.fillText(lo.toFixed(2), 8, y + 26);
  ctx.textAlign = 'right';
  ctx.fillText(hi.toFixed(2), 208, y + 26);
  ctx.restore();
}

// A canvas as a PNG blob.
export function canvasPNG(canvas) {
  if (canvas.convertToBlob) return canvas.convertToBlob({ type: 'image/png' });
  return new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('PNG encoding failed'))), 'image/png'),
  );
}

// figure: { rowTokens, colTokens, weights, mask, leftOut?, scale, range?, rowStats?, title,
// subtitle, theme? }
export async function matrixPNG(figure, pixelRatio = 2) {
  const theme = figure.theme ?? DEFAULT_THEME;
  const { layout, width, height } = exportLayout(figure);
  const canvas = makeCanvas(Math.round(width * pixelRatio), Math.round(height * pixelRatio));
  const ctx = canvas.getContext('2d');
  ctx.scale(pixelRatio, pixelRatio);
  ctx.fillStyle = theme.background;
  ctx.fillRect(0, 0, width, height);
  paintTitle(ctx, figure, theme);
  ctx.save();
  ctx.translate(0, TITLE_HEIGHT);
  paintMatrixFigure(ctx, layout, { ...figure, range: rangeOf(figure), theme, background: false });
  ctx.restore();
  paintLegend(ctx, rangeOf(figure), TITLE_HEIGHT + layout.height + 8, figure.scale, theme);
  return canvasPNG(canvas);
}

export function node(tag, attributes = {}, text) {
  const n = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attributes)) n.setAttribute(k, String(v));
  if (text !== undefined) n.textContent = text;
  return n;
}

// The <defs> every exported figure uses: the hatching of masked cells, the legend's gradient.
function figureDefs(scale, theme) {
  const defs = node('defs');
  const hatch = node('pattern', {
    id: 'masked',
    width: 6,
    height: 6,
    patternUnits: 'userSpaceOnUse',
    patternTransform: 'rotate(45)',
  });
  hatch.append(
    node('rect', { width: 6, height: 6, fill: theme.masked }),
    node('line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: theme.hatch, 'stroke-width': 1.5 }),
  );
  const legend = node('linearGradient', { id: 'legend' });
  gradientStops(scale).forEach((c, i, all) =>
    legend.append(node('stop', { offset: i / (all.length - 1), 'stop-color': c })),
  );
  defs.append(hatch, legend);
  return defs;
}

// The <svg> of an exported figure: size, fonts, background, title and subtitle, and the hatching
// and legend gradient when the figure has a colour scale.
export function figureRoot(figure, width, height, theme) {
  const svg = node('svg', {
    xmlns: SVG_NS,
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    'font-family': theme.font,
    'font-size': 12,
  });
  if (figure.scale) svg.append(figureDefs(figure.scale, theme));
  svg.append(
    node('rect', { width, height, fill: theme.background }),
    ...figureTitle(figure, theme),
  );
  return svg;
}

// Title and subtitle at the top of an exported figure.
function figureTitle(figure, theme) {
  return [
    node('title', {}, figure.title ?? 'attention weights'),
    node(
      'text',
      { x: 8, y: 20, 'font-size': 15, 'font-weight': 600, fill: theme.ink },
      figure.title ?? 'attention weights',
    ),
    node('text', { x: 8, y: 35, fill: theme.muted }, figure.subtitle ?? ''),
  ];
}

// The colour legend (gradient from lo to hi) at height y.
export function colourLegend(range, y, theme) {
  const [lo, hi] = range;
  return [
    node('rect', { x: 8, y, width: 200, height: 10, fill: 'url(#legend)' }),
    node('text', { x: 8, y: y + 26, fill: theme.muted }, lo.toFixed(2)),
    node('text', { x: 208, y: y + 26, fill: theme.muted, 'text-anchor': 'end' }, hi.toFixed(2)),
  ];
}

// One matrix as SVG: a cell per weight (masked cells hatched, each with a <title>) and the token
// labels, laid out by layoutMatrix(). Cells top-k or LSH left out (`leftOut`, 1 where the mask
// allowed the key) are hatched too, and their title says so.
export function matrixGroup(figure, layout) {
  const { rowTokens, colTokens, weights, mask, leftOut, scale } = figure;
  const [lo, hi] = rangeOf(figure);
  const span = hi - lo || 1;
  const { left, top, cell } = layout;
  const label = (t) => shortLabel(t.text, layout.labelChars);
  const body = node('g');
  const cells = node('g', { 'shape-rendering': 'crispEdges' });
  const cols = colTokens.length;
  for (let r = 0; r < rowTokens.length; r++) {
    for (let c = 0; c < cols; c++) {
      const i = r * cols + c;
      const masked = mask && !mask[i];
      const [red, green, blue] = colorAt(scale, (weights[i] - lo) / span);
      const rect = node('rect', {
        x: left + c * cell,
        y: top + r * cell,
        width: cell,
        height: cell,
        fill: masked ? 'url(#masked)' : `rgb(${red},${green},${blue})`,
      });
      const value = masked ? (leftOut?.[i] ? 'left out' : 'masked') : weights[i].toFixed(4);
      rect.append(node('title', {}, `${rowTokens[r].text} → ${colTokens[c].text}: ${value}`));
      cells.append(rect);
    }
  }
  body.append(cells);
  const labels = node('g', { fill: (figure.theme ?? DEFAULT_THEME).ink });
  if (layout.fontPx !== 12) labels.setAttribute('font-size', layout.fontPx);
  rowTokens.forEach((t, r) => {
    if (r % layout.rowStep) return;
    labels.append(
      node(
        'text',
        {
          x: left - 6,
          y: top + (r + 0.5) * cell,
          'text-anchor': 'end',
          'dominant-baseline': 'central',
        },
        label(t),
      ),
    );
  });
  colTokens.forEach((t, c) => {
    if (c % layout.colStep) return;
    const x = left + (c + 0.5) * cell;
    labels.append(
      layout.rotateColumns
        ? node('text', { transform: `translate(${x} ${top - 6}) rotate(-60)` }, label(t))
        : node('text', { x, y: top - 10, 'text-anchor': 'middle' }, label(t)),
    );
  });
  body.append(labels);
  return body;
}

/** An SVG element as a standalone, well-formed document. */
export function svgDocument(svg) {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' + xmlSafe(new XMLSerializer().serializeToString(svg))
  );
}

export function matrixSVG(figure) {
  const theme = figure.theme ?? DEFAULT_THEME;
  // The per-row statistic column is a PNG-only extra; the SVG keeps to the matrix.
  const { layout, width, height } = exportLayout({ ...figure, rowStats: undefined });
  const svg = figureRoot(figure, width, height, theme);
  const body = node('g', { transform: `translate(0 ${TITLE_HEIGHT})` });
  body.append(matrixGroup(figure, layout));
  svg.append(body);
  svg.append(...colourLegend(rangeOf(figure), TITLE_HEIGHT + layout.height + 8, theme));
  return svgDocument(svg);
}

export function downloadBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// Properties that CSS gives the live SVG views and a standalone file must carry inline.
const INLINE_PROPERTIES = [
  'fill',
  'stroke',
  'stroke-width',
  'stroke-dasharray',
  'stroke-opacity',
  'opacity',
  'font-family',
  'font-size',
  'font-weight',
  'text-transform',
  'letter-spacing',
];

// A copy of a live SVG element (e.g. the line view) that stands alone: computed styles inlined,
// interactive attributes dropped.
function inlinedClone(svgElement) {
  const clone = svgElement.cloneNode(true);
  const sources = [svgElement, ...svgElement.querySelectorAll('*')];
  const targets = [clone, ...clone.querySelectorAll('*')];
  sources.forEach((source, i) => {
    const style = getComputedStyle(source);
    const target = targets[i];
    target.removeAttribute('tabindex');
    target.removeAttribute('class');
    for (const property of INLINE_PROPERTIES) {
      const value = style.getPropertyValue(property);
      if (value) target.style.setProperty(property, value);
    }
  });
  clone.setAttribute('xmlns', SVG_NS);
  return clone;
}

// A live SVG element (e.g. the line view) as a standalone SVG document, with a background.
export function svgElementToString(svgElement, background = DEFAULT_THEME.background) {
  const clone = inlinedClone(svgElement);
  const backdrop = node('rect', {
    width: svgElement.width.baseVal.value,
    height: svgElement.height.baseVal.value,
    fill: background,
  });
  clone.insertBefore(backdrop, clone.firstChild);
  return svgDocument(clone);
}

/**
 * A live SVG drawing framed as a figure: title and subtitle above, a legend below.
 * figure: { title, subtitle, theme?, legend(y) -> SVG elements, legendHeight? }
 * Returns { text, width, height }.
 */
export function framedSVG(svgElement, figure) {
  const theme = figure.theme ?? DEFAULT_THEME;
  const inner = inlinedClone(svgElement);
  const width = svgElement.width.baseVal.value;
  const innerHeight = svgElement.height.baseVal.value;
  const legendHeight = figure.legendHeight ?? LEGEND_HEIGHT;
  const height = TITLE_HEIGHT + innerHeight + legendHeight;
  inner.setAttribute('y', String(TITLE_HEIGHT));
  const svg = figureRoot({ ...figure, scale: undefined }, width, height, theme);
  svg.append(inner, ...figure.legend(TITLE_HEIGHT + innerHeight + 8));
  return { text: svgDocument(svg), width, height };
}

// Rasterises an SVG document string (same-origin blob URL, so the canvas stays exportable).
export async function svgStringToPNG(svgText, width, height, pixelRatio = 2) {
  const url = URL.createObjectURL(new Blob([svgText], { type: 'image/svg+xml' }));
  try {
    const image = new Image();
    image.src = url;
    await image.decode();
    const canvas = makeCanvas(Math.round(width * pixelRatio), Math.round(height * pixelRatio));
    const ctx = canvas.getContext('2d');
    ctx.scale(pixelRatio, pixelRatio);
    ctx.drawImage(image, 0, 0, width, height);
    return await canvasPNG(canvas);
  } finally {
    URL.revokeObjectURL(url);
  }
}
