// Word-level attention: pieces grouped into the words of the text, and a piece matrix summed
// over key pieces and averaged over query pieces, checked against a case worked out by hand.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregateGroups, wordGroups } from '../src/interpret/words.js';
import { tokenize } from '../src/index.js';

const words = (text) => tokenize(text, { granularity: 'word' });

describe('wordGroups', () => {
  it('puts the pieces of one word together and keeps specials on their own', () => {
    // "[CLS] un ##believ ##able cat [SEP]" over "unbelievable cat".
    const text = 'unbelievable cat';
    const tokens = [
      { text: '[CLS]', start: 0, end: 0, special: true },
      { text: 'un', start: 0, end: 2 },
      { text: '##believ', start: 2, end: 8 },
      { text: '##able', start: 8, end: 12 },
      { text: 'cat', start: 13, end: 16 },
      { text: '[SEP]', start: 16, end: 16, special: true },
    ];
    const groups = wordGroups(tokens, [words(text)]);
    assert.deepEqual(
      groups.map((g) => [g.tokens, text.slice(g.start, g.end), g.special]),
      [
        [[0], '', true],
        [[1, 2, 3], 'unbelievable', false],
        [[4], 'cat', false],
        [[5], '', true],
      ],
    );
  });

  it('joins a lone space to the word after it, and reads a pair', () => {
    const text = 'Once upon';
    const pair = '我爱自然';
    const tokens = [
      { text: 'Once', start: 0, end: 4 },
      { text: 'Ġ', start: 4, end: 5 }, // a space of its own joins the word after it
      { text: 'up', start: 5, end: 7 },
      { text: 'on', start: 7, end: 9 },
      { text: '我', start: 0, end: 1, segment: 1 },
      { text: '爱', start: 1, end: 2, segment: 1 },
      { text: '自', start: 2, end: 3, segment: 1 },
      { text: '然', start: 3, end: 4, segment: 1 },
    ];
    const groups = wordGroups(tokens, [words(text), words(pair)]);
    const spans = [text, pair];
    assert.deepEqual(
      groups.map((g) => spans[g.segment].slice(g.start, g.end)),
      ['Once', 'upon', '我', '爱', '自然'],
    );
    assert.deepEqual(groups[1].tokens, [1, 2, 3]);
  });
});

describe('wordGroups across words', () => {
  it('a token that reaches into two words makes them one group', () => {
    // Byte-level BPE merges '),' into one token: ')' and ',' are read as one group.
    const text = 'f(x), y';
    const tokens = [
      { text: 'f', start: 0, end: 1 },
      { text: '(', start: 1, end: 2 },
      { text: 'x', start: 2, end: 3 },
      { text: '),', start: 3, end: 5 },
      { text: 'Ġy', start: 5, end: 7 },
    ];
    const groups = wordGroups(tokens, [words(text)]);
    assert.deepEqual(
      groups.map((g) => [g.tokens, text.slice(g.start, g.end)]),
      [
        [[0], 'f'],
        [[1], '('],
        [[2], 'x'],
        [[3], '),'],
        [[4], 'y'],
      ],
    );
  });
});

describe('aggregateGroups', () => {
  it('sums over key pieces and averages over query pieces', () => {
    // Tokens: un, believ, able, cat (rows sum to 1). Words: A = {0, 1, 2}, B = {3}.
    const weights = Float32Array.from(
      [
        [0.7, 0.1, 0.1, 0.1],
        [0.2, 0.4, 0.2, 0.2],
        [0.1, 0.3, 0.3, 0.3],
        [0.5, 0.2, 0.1, 0.2],
      ].flat(),
    );
    const groups = [[0, 1, 2], [3]];
    const { weights: words, mask } = aggregateGroups(weights, {
      rowGroups: groups,
      colGroups: groups,
      cols: 4,
    });
    // A -> A: (0.9 + 0.8 + 0.7) / 3 = 0.8; A -> B: (0.1 + 0.2 + 0.3) / 3 = 0.2;
    // B -> A: 0.5 + 0.2 + 0.1 = 0.8; B -> B: 0.2.
    const expected = [0.8, 0.2, 0.8, 0.2];
    expected.forEach((value, i) => assert.ok(Math.abs(words[i] - value) < 1e-6, `cell ${i}`));
    assert.deepEqual([...mask], [1, 1, 1, 1]);
  });

  it('a word pair is visible when any piece pair is; hidden only when all are masked', () => {
    // Causal over 3 tokens: rows [1 0 0], [0.4 0.6 0], [0.2 0.3 0.5]; words {0, 1} and {2}.
    const weights = Float32Array.from([1, 0, 0, 0.4, 0.6, 0, 0.2, 0.3, 0.5]);
    const mask = Uint8Array.from([1, 0, 0, 1, 1, 0, 1, 1, 1]);
    const groups = [[0, 1], [2]];
    const result = aggregateGroups(weights, {
      rowGroups: groups,
      colGroups: groups,
      cols: 3,
      mask,
    });
    assert.deepEqual([...result.mask], [1, 0, 1, 1]);
    // {0,1} -> {0,1}: (1 + 1) / 2 = 1; {0,1} -> {2}: 0; {2} -> {0,1}: 0.5; {2} -> {2}: 0.5.
    [1, 0, 0.5, 0.5].forEach((value, i) =>
      assert.ok(Math.abs(result.weights[i] - value) < 1e-6, `cell ${i}`),
    );
  });
});
