// Head labels from hand-made attention matrices: each pattern gets its label and the measure
// behind it, worked out by hand below; rows that cannot show a pattern are left out.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { headMeasures, labelHeads, LABEL_THRESHOLDS } from '../src/interpret/head-labels.js';

// Row-major [N, N] from rows of numbers.
const matrix = (rows) => Float32Array.from(rows.flat());
const causal = (n) => Uint8Array.from({ length: n * n }, (_, c) => (c % n <= c / n ? 1 : 0));
const close = (actual, expected) =>
  assert.ok(Math.abs(actual - expected) < 1e-6, `${actual} is not ${expected}`);

describe('headMeasures', () => {
  it('a previous-token head (causal): each row puts 0.8 on the token before it', () => {
    const weights = matrix([
      [1, 0, 0, 0],
      [0.8, 0.2, 0, 0],
      [0.1, 0.8, 0.1, 0],
      [0.1, 0, 0.8, 0.1],
    ]);
    const { label, measures } = headMeasures(weights, { n: 4, mask: causal(4) });
    assert.equal(label, 'previous');
    close(measures.previous, 0.8); // rows 1-3 (row 0 sees one key and is skipped)
    close(measures.first, (0.8 + 0.1 + 0.1) / 3);
    close(measures.self, (0.2 + 0.1 + 0.1) / 3);
    assert.equal(measures.special, null, 'no special tokens');
  });

  it('a first-token sink: most of every row on token 0', () => {
    const weights = matrix([
      [1, 0, 0],
      [0.9, 0.1, 0],
      [0.7, 0.2, 0.1],
    ]);
    const { label, measures } = headMeasures(weights, { n: 3, mask: causal(3) });
    assert.equal(label, 'first');
    close(measures.first, 0.8);
    // Row 1's previous token is token 0: both measures count it, the larger share wins.
    close(measures.previous, (0.9 + 0.2) / 2);
  });

  it('a local window: token 0 seen by one row only is no first-token sink', () => {
    // causal+local:2: row i sees keys i - 1 and i; only row 1 can look at token 0.
    const local = Uint8Array.from({ length: 16 }, (_, c) => {
      const [i, j] = [Math.floor(c / 4), c % 4];
      return j <= i && i - j < 2 ? 1 : 0;
    });
    const weights = matrix([
      [1, 0, 0, 0],
      [0.9, 0.1, 0, 0],
      [0, 0.5, 0.5, 0],
      [0, 0, 0.5, 0.5],
    ]);
    const { label, measures } = headMeasures(weights, { n: 4, mask: local });
    close(measures.first, 0.9); // row 1 alone: shown, but it does not name the head
    close(measures.previous, (0.9 + 0.5 + 0.5) / 3);
    assert.equal(label, 'previous');
  });

  it('a self head without a mask', () => {
    const weights = matrix([
      [0.6, 0.2, 0.2],
      [0.1, 0.7, 0.2],
      [0.1, 0.1, 0.8],
    ]);
    const { label, measures } = headMeasures(weights, { n: 3 });
    assert.equal(label, 'self');
    close(measures.self, 0.7);
    close(measures.previous, (0.1 + 0.1) / 2);
  });

  it('[CLS]/[SEP]: the special tokens take most of every other row', () => {
    // [CLS] a b [SEP]: rows 1 and 2 give 0.5 + 0.3 and 0.4 + 0.4 to [CLS] + [SEP].
    const weights = matrix([
      [0.25, 0.25, 0.25, 0.25],
      [0.5, 0.1, 0.1, 0.3],
      [0.4, 0.1, 0.1, 0.4],
      [0.25, 0.25, 0.25, 0.25],
    ]);
    const special = [true, false, false, true];
    const { label, measures } = headMeasures(weights, { n: 4, special });
    assert.equal(label, 'special');
    close(measures.special, 0.8);
    assert.equal(measures.first, null, 'token 0 is [CLS]: no separate first-token measure');
  });

  it('broad: uniform rows have entropy log2(seen), so the measure is 1', () => {
    const weights = matrix([
      [1, 0, 0],
      [0.5, 0.5, 0],
      [1 / 3, 1 / 3, 1 / 3],
    ]);
    const { label, measures } = headMeasures(weights, { n: 3, mask: causal(3) });
    assert.equal(label, 'broad');
    close(measures.broad, 1);
  });

  it('no label for a column stripe on a middle token: every share low, rows peaked', () => {
    const weights = matrix([
      [1, 0, 0, 0, 0],
      [0.5, 0.5, 0, 0, 0],
      [0.05, 0.9, 0.05, 0, 0],
      [0, 0.9, 0.05, 0.05, 0],
      [0, 0.9, 0.05, 0, 0.05],
    ]);
    const { label, measures } = headMeasures(weights, { n: 5, mask: causal(5) });
    close(measures.previous, (0.5 + 0.9 + 0.05 + 0) / 4);
    close(measures.first, (0.5 + 0.05 + 0 + 0) / 4);
    close(measures.self, (0.5 + 0.05 + 0.05 + 0.05) / 4);
    const h = -(0.9 * Math.log2(0.9) + 2 * 0.05 * Math.log2(0.05)); // rows 2-4
    close(measures.broad, (1 + h / Math.log2(3) + h / Math.log2(4) + h / Math.log2(5)) / 4);
    assert.ok(measures.broad < LABEL_THRESHOLDS.broad);
    assert.equal(label, null);
  });
});

describe('labelHeads', () => {
  it('labels every head of every layer, each with its layer mask', () => {
    const attention = Float32Array.from([
      // layer 0, causal: a self head, a first-token head
      ...[1, 0, 0, 0.2, 0.8, 0, 0.1, 0.1, 0.8],
      ...[1, 0, 0, 0.9, 0.1, 0, 0.8, 0.1, 0.1],
      // layer 1, no mask: a previous-token head, a uniform one
      ...[0.2, 0.4, 0.4, 0.9, 0.05, 0.05, 0.05, 0.9, 0.05],
      ...Array(9).fill(1 / 3),
    ]);
    const labels = labelHeads(attention, { layers: 2, heads: 2, n: 3, masks: [causal(3), null] });
    assert.deepEqual(
      labels.map((layer) => layer.map((head) => head.label)),
      [
        ['self', 'first'],
        ['previous', 'broad'],
      ],
    );
    close(labels[0][1].measures.first, (0.9 + 0.8) / 2);
    close(labels[1][0].measures.previous, 0.9);
    close(labels[1][0].measures.self, (0.2 + 0.05 + 0.05) / 3);
  });
});
