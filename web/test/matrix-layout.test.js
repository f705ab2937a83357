// The geometry of a token-by-token matrix drawing (src/views/matrix-layout.js), which the live
// heatmap, the head thumbnails and the PNG/SVG exports share. Node has no canvas, so text is
// measured by a 2-D context that records what is drawn and gives every character the same width;
// the browser tests look at the real drawing.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { shortLabel } from '../src/views/dom.js';
import {
  LABEL_FONT_PX,
  layoutMatrix,
  paintLabels,
  paintRowStats,
} from '../src/views/matrix-layout.js';
import { DEFAULT_THEME } from '../src/views/matrix-paint.js';

const CHAR_WIDTH = 7;

// A 2-D context that measures text as CHAR_WIDTH per character and records each fillText and
// fillRect with the state it was drawn in.
function recordingContext() {
  const calls = [];
  const stack = [];
  const ctx = {
    font: '',
    fillStyle: '',
    textAlign: 'start',
    textBaseline: 'alphabetic',
    transform: [0, 0, 0],
    measureText: (text) => ({ width: Array.from(text).length * CHAR_WIDTH }),
    save() {
      stack.push({ font: this.font, textAlign: this.textAlign, transform: [...this.transform] });
    },
    restore() {
      Object.assign(this, stack.pop());
    },
    translate(x, y) {
      this.transform = [this.transform[0] + x, this.transform[1] + y, this.transform[2]];
    },
    rotate(angle) {
      this.transform[2] += angle;
    },
    fillText(text, x, y) {
      calls.push({ op: 'text', text, x, y, font: this.font, fill: this.fillStyle, ...state(this) });
    },
    fillRect(x, y, width, height) {
      calls.push({ op: 'rect', x, y, width, height, fill: this.fillStyle });
    },
  };
  const state = (c) => ({ align: c.textAlign, transform: [...c.transform] });
  return { ctx, calls };
}

const tokens = (...texts) => texts.map((text) => ({ text }));

describe('layoutMatrix', () => {
  it('without labels: an 8-pixel margin around the cells', () => {
    const { ctx } = recordingContext();
    const layout = layoutMatrix(ctx, {
      rowTokens: tokens('a', 'b', 'c'),
      colTokens: tokens('a', 'b'),
      cell: 10,
      labels: false,
    });
    assert.deepEqual(
      { left: layout.left, top: layout.top, width: layout.width, height: layout.height },
      { left: 8, top: 8, width: 8 + 2 * 10 + 8, height: 8 + 3 * 10 + 8 },
    );
    assert.equal(layout.rowStep, 0);
    assert.equal(layout.rotateColumns, false);
  });

  it('makes room for the widest row label and keeps short column labels upright', () => {
    const { ctx } = recordingContext();
    const layout = layoutMatrix(ctx, {
      rowTokens: tokens('I', 'love', 'NLP'),
      colTokens: tokens('a', 'b', 'c'),
      cell: 24,
    });
    assert.equal(layout.left, 4 * CHAR_WIDTH + 6 + 4);
    assert.equal(layout.rotateColumns, false);
    assert.equal(layout.top, LABEL_FONT_PX + 6 + 6);
    assert.equal(layout.rowStep, 1);
    assert.equal(layout.width, layout.left + 3 * 24 + 8);
    assert.equal(layout.height, layout.top + 3 * 24 + 8);
  });

  it('tilts column labels wider than a cell, and caps both label areas at 150 pixels', () => {
    const { ctx } = recordingContext();
    const long = 'internationalization';
    const layout = layoutMatrix(ctx, {
      rowTokens: tokens(long, 'x'),
      colTokens: tokens(long, 'x'),
      cell: 12,
    });
    // shortLabel() cuts the label to 12 characters: 84 pixels, under the cap.
    assert.equal(Array.from(shortLabel(long)).length, 12);
    assert.equal(layout.left, 12 * CHAR_WIDTH + 6 + 4);
    assert.equal(layout.rotateColumns, true);
    assert.equal(layout.top, Math.ceil(12 * CHAR_WIDTH * Math.sin(Math.PI / 3)) + 6 + 8);

    const wide = { ...recordingContext().ctx, measureText: () => ({ width: 400 }) };
    const capped = layoutMatrix(wide, { rowTokens: tokens('a'), colTokens: tokens('a'), cell: 12 });
    assert.equal(capped.left, 150 + 6 + 4);
    assert.equal(capped.top, Math.ceil(150 * Math.sin(Math.PI / 3)) + 6 + 8);
  });

  it('labels every few rows when cells are smaller than the font', () => {
    const { ctx } = recordingContext();
    for (const [cell, step] of [
      [14, 1],
      [13, 2],
      [7, 2],
      [4, 4],
      [1, 14],
    ]) {
      const layout = layoutMatrix(ctx, { rowTokens: tokens('a'), colTokens: tokens('a'), cell });
      assert.equal(layout.rowStep, step, `cell ${cell}`);
      assert.equal(layout.colStep, step, `cell ${cell}`);
    }
  });

  it('adds a statistics column right of the cells', () => {
    const { ctx } = recordingContext();
    const rowStats = { values: [1, 2], max: 2, label: 'H' };
    const layout = layoutMatrix(ctx, {
      rowTokens: tokens('a', 'b'),
      colTokens: tokens('a', 'b'),
      cell: 20,
      rowStats,
    });
    assert.equal(layout.statsX, layout.left + 2 * 20 + 12);
    assert.equal(layout.width, Math.ceil(layout.statsX + 64));
  });
});

describe('paintLabels', () => {
  it('writes every rowStep-th label, and the focused ones in bold and the focus colour', () => {
    const { ctx, calls } = recordingContext();
    const rowTokens = tokens('r0', 'r1', 'r2', 'r3', 'r4');
    const colTokens = tokens('c0', 'c1', 'c2', 'c3', 'c4');
    const layout = layoutMatrix(ctx, { rowTokens, colTokens, cell: 13 });
    assert.equal(layout.rowStep, 2);
    assert.equal(layout.rotateColumns, false);
    paintLabels(ctx, layout, { rowTokens, colTokens, focusRow: 3, focusCol: 1 });
    const texts = calls.filter((c) => c.op === 'text');
    assert.deepEqual(
      texts.map((c) => c.text),
      ['r0', 'r2', 'r3', 'r4', 'c0', 'c1', 'c2', 'c4'],
    );
    for (const call of texts) {
      const focused = call.text === 'r3' || call.text === 'c1';
      assert.equal(call.fill, focused ? DEFAULT_THEME.focus : DEFAULT_THEME.ink, call.text);
      assert.equal(call.font.startsWith('600 '), focused, call.text);
    }
    const r2 = texts.find((c) => c.text === 'r2');
    assert.deepEqual([r2.x, r2.y, r2.align], [layout.left - 6, layout.top + 2.5 * 13, 'right']);
    const c2 = texts.find((c) => c.text === 'c2');
    assert.equal(c2.align, 'center');
    assert.equal(c2.x, layout.left + 2.5 * 13);
  });

  it('writes tilted column labels from the top of their column', () => {
    const { ctx, calls } = recordingContext();
    const rowTokens = tokens('a');
    const colTokens = tokens('a long label');
    const layout = layoutMatrix(ctx, { rowTokens, colTokens, cell: 10 });
    assert.equal(layout.rotateColumns, true);
    paintLabels(ctx, layout, { rowTokens, colTokens });
    const column = calls.find((c) => c.text === shortLabel('a long label'));
    assert.deepEqual(column.transform, [layout.left + 5, layout.top - 6, -Math.PI / 3]);
    assert.equal(column.align, 'left');
  });

  it('draws nothing without labels', () => {
    const { ctx, calls } = recordingContext();
    const data = { rowTokens: tokens('a'), colTokens: tokens('b') };
    paintLabels(ctx, layoutMatrix(ctx, { ...data, cell: 10, labels: false }), data);
    assert.deepEqual(calls, []);
  });
});

describe('paintRowStats', () => {
  it('draws the label, one bar per row as long as its share of the maximum, and the values', () => {
    const { ctx, calls } = recordingContext();
    const rowStats = { values: [0, 1, 2], max: 2, label: 'H (bits)' };
    const data = { rowTokens: tokens('a', 'b', 'c'), colTokens: tokens('a', 'b', 'c') };
    const layout = layoutMatrix(ctx, { ...data, cell: 20, rowStats });
    paintRowStats(ctx, layout, { rowStats, rows: 3 });
    const filled = calls.filter((c) => c.op === 'rect' && c.fill === DEFAULT_THEME.muted);
    assert.deepEqual(
      filled.map((c) => c.width),
      [0, 13, 26],
    );
    assert.deepEqual(
      calls.filter((c) => c.op === 'text').map((c) => c.text),
      ['H (bits)', '0.00', '1.00', '2.00'],
    );
  });

  it('leaves out the values on rows too thin to read them, and everything without stats', () => {
    const { ctx, calls } = recordingContext();
    const rowStats = { values: [1], max: 1, label: 'H' };
    const data = { rowTokens: tokens('a'), colTokens: tokens('a') };
    paintRowStats(ctx, layoutMatrix(ctx, { ...data, cell: 10, rowStats }), { rowStats, rows: 1 });
    assert.deepEqual(
      calls.filter((c) => c.op === 'text').map((c) => c.text),
      ['H'],
    );
    calls.length = 0;
    paintRowStats(ctx, layoutMatrix(ctx, { ...data, cell: 10 }), { rows: 1 });
    assert.deepEqual(calls, []);
  });
});
