// Attention rollout, flow and sinks (src/interpret/): a 3-layer case worked out by hand in the
// comments, then seeded random attention against a numpy reference written from the paper's
// definitions (tests/interpret/rollout_flow_reference.py: the full matrix product for rollout,
// Edmonds-Karp on a dense matrix for flow, no networkx), then the caps and bad arguments.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { attentionFlow, FLOW_LIMITS } from '../src/interpret/flow.js';
import { attentionRollout, MAX_ROLLOUT_WORK } from '../src/interpret/rollout.js';
import { attentionSinks } from '../src/interpret/sinks.js';

const REFERENCE = fileURLToPath(
  new URL('../../tests/interpret/rollout_flow_reference.py', import.meta.url),
);

// Two tokens, three causal layers, two heads; row 0 sees only itself ([1, 0] everywhere).
// Row 1 of each head, and Ã = (mean over heads + I) / 2 (its rows sum to 2 before dividing):
//   layer 1: [0.6, 0.4] and [0.2, 0.8] -> mean [0.4, 0.6] -> Ã1 row 1 = [0.2, 0.8]
//   layer 2: [1, 0] and [1, 0]         -> mean [1, 0]     -> Ã2 row 1 = [0.5, 0.5]
//   layer 3: [0, 1] and [0.2, 0.8]     -> mean [0.1, 0.9] -> Ã3 row 1 = [0.05, 0.95]
const HAND = {
  shape: { layers: 3, heads: 2, n: 2 },
  rows1: [
    [0.6, 0.4],
    [0.2, 0.8],
    [1, 0],
    [1, 0],
    [0, 1],
    [0.2, 0.8],
  ],
};
function handAttention() {
  const attention = new Float32Array(3 * 2 * 4);
  HAND.rows1.forEach(([a, b], k) => attention.set([1, 0, a, b], k * 4));
  return attention;
}

test('rollout of the hand-computed 3-layer case', () => {
  // Row 1 = e1 Ã3 Ã2 Ã1: e1 Ã3 = [0.05, 0.95];
  //   times Ã2: token 0 gets 0.05 * 1 + 0.95 * 0.5 = 0.525, token 1 0.95 * 0.5 = 0.475;
  //   times Ã1: token 0 gets 0.525 * 1 + 0.475 * 0.2 = 0.62, token 1 0.475 * 0.8 = 0.38.
  // Row 0 only ever sees itself: [1, 0].
  const rollout = attentionRollout(handAttention(), HAND.shape);
  assertClose(rollout, [1, 0, 0.62, 0.38], 1e-6, 'rollout');
  assertClose(attentionRollout(handAttention(), HAND.shape, { rows: [1] }), [0.62, 0.38], 1e-6);
});

test('flow of the hand-computed 3-layer case', () => {
  // From (3, 1): pipes to (2, 0) 0.05 and (2, 1) 0.95; (2, 0) -> (1, 0) 1; (2, 1) -> (1, 0) 0.5
  // and (1, 1) 0.5; (1, 0) -> (0, 0) 1; (1, 1) -> (0, 0) 0.2 and (0, 1) 0.8.
  // To (0, 0): 0.05 via (2, 0), 0.5 via (2, 1) -> (1, 0), 0.2 via (2, 1) -> (1, 1): 0.75
  //   (the cut: 0.05 + 0.5 + 0.2).
  // To (0, 1): only through (1, 1), which (2, 1) feeds with 0.5: 0.5.
  // Divided by their sum 1.25: [0.6, 0.4], where rollout says [0.62, 0.38].
  assertClose(attentionFlow(handAttention(), HAND.shape), [0.6, 0.4], 1e-6, 'flow');
  assertClose(attentionFlow(handAttention(), HAND.shape, { position: 0 }), [1, 0], 1e-6);
});

test('sinks of the hand-computed case: row 1 only (row 0 sees nothing else)', () => {
  const sinks = attentionSinks(handAttention(), HAND.shape, { bos: [true, false] });
  assert.equal(sinks.rows, 1);
  assertClose(sinks.first, [0.6, 0.2, 1, 1, 0, 0.2], 1e-6, 'first');
  assertClose(sinks.bos, [0.6, 0.2, 1, 1, 0, 0.2], 1e-6, 'bos');
  // Bidirectional: both rows count, row 0 puts all of its weight on token 0.
  const both = attentionSinks(handAttention(), HAND.shape, { causal: false });
  assertClose(both.first, [0.8, 0.6, 1, 1, 0.5, 0.6], 1e-6, 'bidirectional');
  assert.equal(both.bos, null);
  // A BOS elsewhere: token 1's share.
  const second = attentionSinks(handAttention(), HAND.shape, { bos: [false, true] });
  assertClose(second.bos, [0.4, 0.8, 0, 0, 1, 0.8], 1e-6, 'bos at 1');
});

const CASES = [
  { seed: 1, layers: 3, heads: 2, n: 6, causal: true, positions: [5, 3, 0] },
  { seed: 2, layers: 4, heads: 3, n: 5, causal: false, positions: [0, 2, 4] },
  { seed: 3, layers: 2, heads: 1, n: 9, causal: true, positions: [8] },
];

for (const asked of CASES) {
  const kind = asked.causal ? 'causal' : 'bidirectional';
  test(`rollout and flow against the numpy reference: ${kind}, seed ${asked.seed}`, () => {
    const answer = JSON.parse(
      execFileSync('/usr/bin/python3', [REFERENCE], { input: JSON.stringify(asked) }).toString(),
    );
    const attention = Float32Array.from(answer.attention);
    const shape = { layers: asked.layers, heads: asked.heads, n: asked.n };
    assertClose(attentionRollout(attention, shape), answer.rollout, 1e-6, 'rollout');
    asked.positions.forEach((position, k) => {
      const flow = attentionFlow(attention, shape, { position });
      assertClose(flow, answer.flows[k], 1e-6, `flow of position ${position}`);
    });
    // Flow is not rollout: the two readings of the same attention differ on random weights.
    const last = asked.positions[0];
    const rolloutRow = answer.rollout.slice(last * asked.n, (last + 1) * asked.n);
    assert.ok(
      answer.flows[0].some((value, j) => Math.abs(value - rolloutRow[j]) > 1e-3),
      'flow equals rollout',
    );
  });
}

test('the caps: a clear RangeError past them, before any work', () => {
  const { tokens, layers, edges } = FLOW_LIMITS;
  const big = (l, n) => ({
    attention: new Float32Array(l * n * n),
    shape: { layers: l, heads: 1, n },
  });
  const over = big(1, tokens + 1);
  assert.throws(() => attentionFlow(over.attention, over.shape), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'attention',
    message: new RegExp(`at most ${tokens} tokens`),
  });
  const deep = big(layers + 1, 2);
  assert.throws(() => attentionFlow(deep.attention, deep.shape), /at most 64 layers/);
  const wide = big(Math.floor(edges / tokens ** 2) + 1, tokens);
  assert.throws(() => attentionFlow(wide.attention, wide.shape), /edges, layers x N\^2/);
  // Rollout's work: rows x layers x N^2.
  const n = 2048;
  const rows = Array.from({ length: Math.floor(MAX_ROLLOUT_WORK / (n * n)) + 1 }, () => 0);
  const long = big(1, n);
  assert.throws(() => attentionRollout(long.attention, long.shape, { rows }), {
    name: 'RangeError',
    parameter: 'rows',
    message: /MAX_ROLLOUT_WORK/,
  });
});

test('bad arguments name the problem', () => {
  const attention = handAttention();
  assert.throws(() => attentionRollout([1, 0], HAND.shape), {
    name: 'TypeError',
    parameter: 'attention',
  });
  assert.throws(() => attentionRollout(attention, { layers: 3, heads: 2, n: 3 }), {
    name: 'RangeError',
    code: 'shape_mismatch',
    parameter: 'attention',
  });
  assert.throws(() => attentionRollout(attention, null), { name: 'TypeError', parameter: 'shape' });
  assert.throws(() => attentionRollout(attention, HAND.shape, { rows: [2] }), {
    name: 'RangeError',
    parameter: 'rows[0]',
  });
  assert.throws(() => attentionRollout(attention, HAND.shape, { rows: [] }), { parameter: 'rows' });
  assert.throws(() => attentionFlow(attention, HAND.shape, { position: -1 }), {
    parameter: 'position',
  });
  assert.throws(() => attentionFlow(attention, HAND.shape, { position: 0.5 }), {
    parameter: 'position',
  });
  assert.throws(() => attentionSinks(attention, HAND.shape, { bos: [1] }), { parameter: 'bos' });
  // Weights that are no probabilities: named by place, never a NaN out.
  for (const bad of [Number.NaN, -0.25, 1.5, Infinity]) {
    const broken = handAttention();
    broken[(2 * 2 + 1) * 4 + 2] = bad; // layer 2, head 1, row 1, key 0
    const where = { name: 'RangeError', parameter: 'attention', message: /\[2\]\[1\]\[1\]\[0\]/ };
    assert.throws(() => attentionRollout(broken, HAND.shape), where);
    assert.throws(() => attentionFlow(broken, HAND.shape), where);
    assert.throws(() => attentionSinks(broken, HAND.shape), where);
  }
  assert.throws(() => attentionSinks(attention, HAND.shape, { causal: 'yes' }), {
    parameter: 'causal',
  });
});

test('one token: rollout and flow are [1], a causal sink has no rows to average', () => {
  const attention = Float32Array.of(1, 1);
  const shape = { layers: 2, heads: 1, n: 1 };
  assertClose(attentionRollout(attention, shape), [1], 0);
  assertClose(attentionFlow(attention, shape), [1], 0);
  assert.deepEqual(attentionSinks(attention, shape), {
    first: new Float32Array(0),
    bos: null,
    rows: 0,
  });
});

function assertClose(actual, expected, tolerance, what = 'value') {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    assert.ok(
      Math.abs(actual[i] - expected[i]) <= tolerance,
      `${what}[${i}]: ${actual[i]}, expected ${expected[i]} (tolerance ${tolerance})`,
    );
  }
}
