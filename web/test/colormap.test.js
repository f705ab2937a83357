// The colour scales (src/views/colormap.js): their ends are matplotlib's, values outside [0, 1]
// are clamped, lightness rises along each scale (so it reads in greyscale), and the CSS forms
// carry the same stops.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  DEFAULT_SCALE,
  SCALE_NAMES,
  colorAt,
  cssColorAt,
  cssGradient,
  gradientStops,
  inkOn,
} from '../src/views/colormap.js';

const hex = (rgb) => `#${rgb.map((c) => c.toString(16).padStart(2, '0')).join('')}`;

// WCAG relative luminance of an sRGB colour.
function luminance(rgb) {
  const [r, g, b] = rgb.map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

describe('colour scales', () => {
  it('has viridis and cividis, viridis by default', () => {
    assert.deepEqual(SCALE_NAMES, ['viridis', 'cividis']);
    assert.equal(DEFAULT_SCALE, 'viridis');
  });

  it('starts and ends on the first and last stops', () => {
    const ends = { viridis: ['#440154', '#fde725'], cividis: ['#00224e', '#fee838'] };
    for (const name of SCALE_NAMES) {
      const stops = gradientStops(name);
      assert.deepEqual([stops[0], stops.at(-1)], ends[name]);
      assert.deepEqual([hex(colorAt(name, 0)), hex(colorAt(name, 1))], ends[name]);
    }
  });

  it('passes through every stop at its evenly spaced position', () => {
    for (const name of SCALE_NAMES) {
      const stops = gradientStops(name);
      stops.forEach((stop, i) => {
        const got = colorAt(name, i / (stops.length - 1));
        const want = [1, 3, 5].map((j) => parseInt(stop.slice(j, j + 2), 16));
        // The lookup table has 256 entries, so a stop may be read one entry away.
        got.forEach((c, k) => assert.ok(Math.abs(c - want[k]) <= 3, `${name}[${i}] ${got}`));
      });
    }
  });

  it('clamps values outside [0, 1] and reads non-finite values as 0', () => {
    for (const name of SCALE_NAMES) {
      assert.deepEqual(colorAt(name, -2), colorAt(name, 0));
      assert.deepEqual(colorAt(name, 7), colorAt(name, 1));
      for (const bad of [NaN, Infinity, -Infinity]) {
        assert.deepEqual(colorAt(name, bad), colorAt(name, 0));
      }
    }
  });

  it('falls back to the default scale for an unknown name', () => {
    assert.deepEqual(colorAt('rainbow', 0.3), colorAt(DEFAULT_SCALE, 0.3));
    assert.equal(cssGradient('rainbow'), cssGradient(DEFAULT_SCALE));
    assert.deepEqual(gradientStops('rainbow'), gradientStops(DEFAULT_SCALE));
  });

  it('gets lighter from 0 to 1', () => {
    for (const name of SCALE_NAMES) {
      let previous = -1;
      for (let i = 0; i <= 64; i++) {
        const current = luminance(colorAt(name, i / 64));
        // Linear interpolation in sRGB may dip by a hair between two stops, never visibly.
        assert.ok(current >= previous - 0.002, `${name} at ${i / 64}: ${current} < ${previous}`);
        previous = Math.max(previous, current);
      }
      assert.ok(luminance(colorAt(name, 1)) - luminance(colorAt(name, 0)) > 0.6, name);
    }
  });

  it('writes CSS colours and gradients', () => {
    const [r, g, b] = colorAt('cividis', 0.5);
    assert.equal(cssColorAt('cividis', 0.5), `rgb(${r} ${g} ${b})`);
    const stops = gradientStops('viridis');
    assert.equal(cssGradient('viridis'), `linear-gradient(to right, ${stops.join(', ')})`);
    assert.match(cssGradient('viridis', 'to top'), /^linear-gradient\(to top, #440154, /);
  });

  it('hands out copies of its stops', () => {
    gradientStops('viridis').fill('#000000');
    assert.equal(gradientStops('viridis')[0], '#440154');
  });

  it('picks readable ink: white on the dark end, dark on the light end', () => {
    for (const name of SCALE_NAMES) {
      assert.equal(inkOn(name, 0), '#fff');
      assert.equal(inkOn(name, 1), '#111');
    }
  });
});
