// Colour-blind-safe sequential scales (perceptually uniform, readable in greyscale): viridis and
// cividis, sampled from matplotlib's tables at evenly spaced stops and interpolated linearly.

const STOPS = {
  viridis: [
    '#440154',
    '#48186a',
    '#472d7b',
    '#424086',
    '#3b528b',
    '#33638d',
    '#2c728e',
    '#26828e',
    '#21918c',
    '#1fa088',
    '#28ae80',
    '#3fbc73',
    '#5ec962',
    '#84d44b',
    '#addc30',
    '#d8e219',
    '#fde725',
  ],
  cividis: [
    '#00224e',
    '#0d2b62',
    '#1f356e',
    '#323f6c',
    '#43496c',
    '#52536d',
    '#605e6f',
    '#6d6872',
    '#7a7374',
    '#877e75',
    '#958976',
    '#a39574',
    '#b2a171',
    '#c1ad6c',
    '#d1ba64',
    '#e2c759',
    '#fee838',
  ],
};

export const SCALE_NAMES = Object.keys(STOPS);
/** The scale drawn when none (or an unknown one) is named. */
export const DEFAULT_SCALE = 'viridis';

function parseHex(hex) {
  return [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
}

const LUT_SIZE = 256;
const LUTS = new Map();

// 256 RGB triples per scale, flattened: [r0, g0, b0, r1, ...].
function lut(name) {
  let table = LUTS.get(name);
  if (table) return table;
  const stops = (STOPS[name] ?? STOPS[DEFAULT_SCALE]).map(parseHex);
  table = new Uint8ClampedArray(LUT_SIZE * 3);
  for (let i = 0; i < LUT_SIZE; i++) {
    const position = (i / (LUT_SIZE - 1)) * (stops.length - 1);
    const lower = Math.min(Math.floor(position), stops.length - 2);
    const t = position - lower;
    for (let c = 0; c < 3; c++) {
      table[i * 3 + c] = Math.round(stops[lower][c] * (1 - t) + stops[lower + 1][c] * t);
    }
  }
  LUTS.set(name, table);
  return table;
}

// value in [0, 1] (clamped) -> [r, g, b]
export function colorAt(name, value) {
  const table = lut(name);
  const clamped = Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
  const i = Math.round(clamped * (LUT_SIZE - 1)) * 3;
  return [table[i], table[i + 1], table[i + 2]];
}

export function cssColorAt(name, value) {
  const [r, g, b] = colorAt(name, value);
  return `rgb(${r} ${g} ${b})`;
}

// Dark or light text over a cell of this colour (relative luminance threshold).
export function inkOn(name, value) {
  const [r, g, b] = colorAt(name, value).map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.22 ? '#111' : '#fff';
}

// CSS linear-gradient for legends.
export function cssGradient(name, direction = 'to right') {
  const stops = STOPS[name] ?? STOPS[DEFAULT_SCALE];
  return `linear-gradient(${direction}, ${stops.join(', ')})`;
}

export function gradientStops(name) {
  return [...(STOPS[name] ?? STOPS[DEFAULT_SCALE])];
}
