// The sinks plot's numbers (src/interpret/sinks.js sinksByLayer): every head's share on the
// first token and, where the BOS is a different token, on the BOS, with each layer's mean, on a
// case worked out by hand: GPT-2 prepends no BOS, so in "a<|endoftext|>b" the BOS is token 1.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attentionSinks, sinksByLayer } from '../src/interpret/sinks.js';

// Causal, 3 tokens, 2 layers x 2 heads; row 0 sees only itself and is left out, so each share
// is the mean of rows 1 and 2 (first: column 0; BOS: column 1).
//   L1 H1: [0.3, 0.7, 0], [0.5, 0.2, 0.3] -> first (0.3+0.5)/2 = 0.4, BOS (0.7+0.2)/2 = 0.45
//   L1 H2: [1, 0, 0],     [0.1, 0.8, 0.1] -> first 0.55, BOS 0.4
//   L2 H1: [0, 1, 0],     [0, 0.6, 0.4]   -> first 0,    BOS 0.8
//   L2 H2: [0.5, 0.5, 0], [0.2, 0.2, 0.6] -> first 0.35, BOS 0.35
// Layer means: L1 first 0.475, BOS 0.425; L2 first 0.175, BOS 0.575.
const ROWS = [
  [
    [0.3, 0.7, 0],
    [0.5, 0.2, 0.3],
  ],
  [
    [1, 0, 0],
    [0.1, 0.8, 0.1],
  ],
  [
    [0, 1, 0],
    [0, 0.6, 0.4],
  ],
  [
    [0.5, 0.5, 0],
    [0.2, 0.2, 0.6],
  ],
];
const SHAPE = { layers: 2, heads: 2, n: 3 };

function attention() {
  const out = new Float32Array(4 * 9);
  ROWS.forEach(([row1, row2], k) => out.set([1, 0, 0, ...row1, ...row2], k * 9));
  return out;
}

function assertClose(actual, expected, label) {
  assert.equal(actual.length, expected.length, label);
  expected.forEach((want, i) =>
    assert.ok(Math.abs(actual[i] - want) < 1e-6, `${label}[${i}]: ${actual[i]} vs ${want}`),
  );
}

test('a BOS that is not the first token: both shares, by layer, with the means', () => {
  const sinks = attentionSinks(attention(), SHAPE, { bos: [false, true, false] });
  const plot = sinksByLayer(sinks, SHAPE);
  assert.equal(plot.bosApart, true);
  assert.equal(plot.layers.length, 2);
  assertClose(plot.layers[0].first, [0.4, 0.55], 'L1 first');
  assertClose(plot.layers[0].bos, [0.45, 0.4], 'L1 BOS');
  assertClose(plot.layers[1].first, [0, 0.35], 'L2 first');
  assertClose(plot.layers[1].bos, [0.8, 0.35], 'L2 BOS');
  assertClose(
    plot.layers.map((l) => l.firstMean),
    [0.475, 0.175],
    'first means',
  );
  assertClose(
    plot.layers.map((l) => l.bosMean),
    [0.425, 0.575],
    'BOS means',
  );
});

test('a BOS that is the first token, or none: one reading, no BOS series', () => {
  for (const bos of [[true, false, false], undefined]) {
    const plot = sinksByLayer(attentionSinks(attention(), SHAPE, { bos }), SHAPE);
    assert.equal(plot.bosApart, false);
    assert.ok(plot.layers.every((layer) => layer.bos === null && layer.bosMean === null));
    assertClose(plot.layers[0].first, [0.4, 0.55], 'L1 first');
  }
});

test('a BOS both first and again later (GPT-2 texts joined by <|endoftext|>): shown apart', () => {
  const plot = sinksByLayer(
    attentionSinks(attention(), SHAPE, { bos: [true, true, false] }),
    SHAPE,
  );
  assert.equal(plot.bosApart, true);
  // L1 H1: (0.3 + 0.7 + 0.5 + 0.2) / 2 = 0.85; L2 H1: (0 + 1 + 0 + 0.6) / 2 = 0.8.
  assertClose(plot.layers[0].bos, [0.85, 0.95], 'L1 BOS');
  assertClose(plot.layers[1].bos, [0.8, 0.7], 'L2 BOS');
});
