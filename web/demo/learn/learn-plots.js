// The two plots of "Watch it learn", drawn as SVG: the loss at every step, and every head's mean
// row entropy at every snapshot (the sharpening: it falls as heads focus). Both mark the snapshot
// the timeline shows; the entropy plot can carry the previous run's lines, dashed, to compare a
// falling temperature against none. Each SVG is an image with a name that says what it shows;
// before there is anything to plot, an empty frame says so (no axis numbers for no data).
import { el, svgEl } from '../../src/views/dom.js';

const WIDTH = 480;
const HEIGHT = 180;
const PAD = { left: 40, right: 10, top: 10, bottom: 24 };
// One colour per head within a layer; layers differ by dash and width (legible in greyscale too).
export const HEAD_COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf'];
// At most this many points per line: a long run is thinned evenly, the last point always kept.
const MAX_POINTS = 400;

// The values' range, from `floor` when one is given (entropy starts at 0), else from their
// least, so a loss that falls a little still shows its fall.
function scaleOf(values, floor = null) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  if (!Number.isFinite(lo)) return [floor ?? 0, (floor ?? 0) + 1];
  if (floor !== null) lo = Math.min(lo, floor);
  return hi - lo > 1e-3 ? [lo, hi] : [lo - 0.5, lo + 0.5];
}

function thinned(points) {
  if (points.length <= MAX_POINTS) return points;
  const stride = points.length / MAX_POINTS;
  const kept = [];
  for (let i = 0; i < MAX_POINTS; i++) kept.push(points[Math.floor(i * stride)]);
  kept.push(points[points.length - 1]);
  return kept;
}

function frame(svg, { xMax, yRange }) {
  const x = (step) => PAD.left + (step / Math.max(1, xMax)) * (WIDTH - PAD.left - PAD.right);
  const y = (value) =>
    HEIGHT -
    PAD.bottom -
    ((value - yRange[0]) / (yRange[1] - yRange[0])) * (HEIGHT - PAD.top - PAD.bottom);
  const axis = svgEl(
    'g',
    { class: 'learn-axis' },
    svgEl('line', { x1: PAD.left, y1: y(yRange[0]), x2: WIDTH - PAD.right, y2: y(yRange[0]) }),
    svgEl('line', { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: y(yRange[0]) }),
    svgEl('text', {
      x: PAD.left - 4,
      y: PAD.top + 8,
      'text-anchor': 'end',
      text: yRange[1].toFixed(2),
    }),
    svgEl('text', {
      x: PAD.left - 4,
      y: y(yRange[0]),
      'text-anchor': 'end',
      text: yRange[0].toFixed(2),
    }),
    svgEl('text', { x: PAD.left, y: HEIGHT - 6, text: '0' }),
    svgEl('text', {
      x: WIDTH - PAD.right,
      y: HEIGHT - 6,
      'text-anchor': 'end',
      text: String(xMax),
    }),
  );
  svg.replaceChildren(axis);
  return { x, y };
}

function polyline(points, { x, y }, attributes) {
  const d = thinned(points)
    .map(([step, value]) => `${x(step).toFixed(1)},${y(value).toFixed(1)}`)
    .join(' ');
  return svgEl('polyline', { points: d, fill: 'none', ...attributes });
}

function marker(svg, { x }, step) {
  if (step === null) return;
  svg.append(
    svgEl('line', {
      class: 'learn-marker',
      x1: x(step),
      x2: x(step),
      y1: PAD.top,
      y2: HEIGHT - PAD.bottom,
    }),
  );
}

function prepare(svg, label) {
  svg.setAttribute('viewBox', `0 0 ${WIDTH} ${HEIGHT}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
}

// SVG text does not wrap: lines of at most `width` units, a wide (CJK) character counting
// twice a narrow one, broken at spaces, or anywhere in text without them.
const EMPTY_LINE = 56;
function wrapped(text, width = EMPTY_LINE) {
  const units = (s) => [...s].reduce((n, c) => n + (c.codePointAt(0) > 0x2e7f ? 2 : 1), 0);
  // Each word keeps the space after it, so the lines' text joins back into the text.
  const pieces = text.includes(' ') ? text.split(/(?<= )/) : [...text];
  const lines = [''];
  for (const piece of pieces) {
    if (lines.at(-1) && units(lines.at(-1) + piece.trimEnd()) > width) lines.push(piece);
    else lines[lines.length - 1] += piece;
  }
  return lines;
}

// The plot before its first point: the axes, and in their middle what will appear there.
function empty(svg, text) {
  prepare(svg, text);
  const bottom = HEIGHT - PAD.bottom;
  const lines = wrapped(text);
  const x = (PAD.left + WIDTH - PAD.right) / 2;
  const top = (PAD.top + bottom) / 2 - ((lines.length - 1) * 18) / 2;
  svg.replaceChildren(
    svgEl(
      'g',
      { class: 'learn-axis' },
      svgEl('line', { x1: PAD.left, y1: bottom, x2: WIDTH - PAD.right, y2: bottom }),
      svgEl('line', { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: bottom }),
    ),
    svgEl(
      'text',
      { class: 'learn-empty', 'text-anchor': 'middle', 'dominant-baseline': 'middle' },
      ...lines.map((line, i) => svgEl('tspan', { x, y: top + i * 18, text: line })),
    ),
  );
}

/**
 * losses: Float64Array (step s + 1 at index s); markStep: the timeline's step or null.
 * strings: { label, empty } (in the page's language).
 */
export function drawLoss(svg, losses, markStep, strings) {
  if (losses.length === 0) return empty(svg, strings.empty);
  prepare(svg, strings.label);
  const points = Array.from(losses, (loss, i) => [i + 1, loss]);
  const scale = frame(svg, { xMax: losses.length, yRange: scaleOf(losses) });
  svg.append(polyline(points, scale, { class: 'learn-loss-line' }));
  marker(svg, scale, markStep);
}

/**
 * series: [{ layer, head, points: [[step, bits], ...] }] of this run; previous: the same of the
 * run before (dashed, faint) or null; selected: the index of the head to draw on top, bolder.
 * strings: { label, empty }.
 */
export function drawEntropy(svg, { series, previous, selected, markStep }, strings) {
  if (!series.length && !previous?.length) return empty(svg, strings.empty);
  prepare(svg, strings.label);
  const all = [...series, ...(previous ?? [])];
  const xMax = Math.max(1, ...all.flatMap((s) => s.points.map(([step]) => step)));
  const values = all.flatMap((s) => s.points.map(([, v]) => v));
  const scale = frame(svg, { xMax, yRange: scaleOf(values, 0) });
  const lineOf = (s, index, faint) =>
    polyline(s.points, scale, {
      stroke: HEAD_COLOURS[s.head % HEAD_COLOURS.length],
      'stroke-width': index === selected && !faint ? 3 : s.layer === 0 ? 1.5 : 2,
      'stroke-dasharray': faint ? '2 3' : s.layer === 0 ? '6 3' : null,
      'stroke-opacity': faint ? 0.45 : 1,
      dataset: { layer: s.layer, head: s.head, run: faint ? 'previous' : 'current' },
    });
  for (const s of previous ?? []) svg.append(lineOf(s, -1, true));
  series.forEach((s, i) => {
    if (i !== selected) svg.append(lineOf(s, i, false));
  });
  if (series[selected]) svg.append(lineOf(series[selected], selected, false));
  marker(svg, scale, markStep);
}

/** The entropy plot's key: each head's name beside its line's colour and dash. */
export function entropyKey(host, series, nameOf) {
  host.replaceChildren(
    ...series.map((s, i) =>
      el(
        'li',
        {},
        el('span', {
          class: 'learn-key-swatch',
          'aria-hidden': 'true',
          style:
            `border-top: ${s.layer === 0 ? '2px dashed' : '3px solid'} ` +
            HEAD_COLOURS[s.head % HEAD_COLOURS.length],
        }),
        nameOf(i),
      ),
    ),
  );
}
