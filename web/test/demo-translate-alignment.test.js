// The Translate mode's numbers (demo/model/alignment.js) on a hand-made translation: the
// matrix of one head and the averages, the dictionary's pairs found by word (CJK without
// boundaries, English by whole words) and each head's share of attention on them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  crossMatrix,
  dictionaryPairs,
  headAlignment,
  targetTokens,
} from '../demo/model/alignment.js';

// Source "我爱猫" as three tokens and </s>; translation "I love cats" in three steps and </s>.
const source = [
  { text: '▁我', start: 0, end: 1, special: false },
  { text: '爱', start: 1, end: 2, special: false },
  { text: '猫', start: 2, end: 3, special: false },
  { text: '</s>', start: 3, end: 3, special: true },
];
const dims = { decoderLayers: 2, heads: 2, n: 4 };
// Row of [layers 2, heads 2, n 4]: head (0, 0) looks at the diagonal, every other head at </s>.
function row(t) {
  const out = new Float32Array(16);
  for (let lh = 0; lh < 4; lh++) out[lh * 4 + (lh === 0 ? t : 3)] = 1;
  return out;
}
const steps = ['I', ' love', ' cats', '</s>'].map((text, t) => ({
  text,
  special: text === '</s>',
  crossAttention: row(t),
}));

test('target tokens carry their spans in the translation; </s> adds none', () => {
  assert.deepEqual(
    targetTokens(steps).map(({ start, end }) => [start, end]),
    [
      [0, 1],
      [1, 6],
      [6, 11],
      [11, 11],
    ],
  );
});

test('the matrix of one head and the average over heads and layers', () => {
  const one = crossMatrix(steps, { ...dims, layer: 0, head: 0 });
  assert.deepEqual([...one.subarray(4, 8)], [0, 1, 0, 0]);
  const mean = crossMatrix(steps, { ...dims, layer: -1, head: -1 });
  assert.deepEqual([...mean.subarray(4, 8)], [0, 0.25, 0, 0.75]);
  const layer = crossMatrix(steps, { ...dims, layer: 1, head: -1 });
  assert.deepEqual([...layer.subarray(0, 4)], [0, 0, 0, 1]);
});

test("each head's share of attention on the word its dictionary pair names", () => {
  const target = targetTokens(steps);
  const dictionary = { 我: 'I', 爱: 'love', 猫: 'cat', 狗: 'dog' };
  const pairs = dictionaryPairs(dictionary, {
    sourceText: '我爱猫',
    source,
    translation: 'I love cats',
    target,
  });
  // 'cat' is not a whole word of 'cats', and 狗 is not in the source: both are left out.
  assert.deepEqual(
    pairs.map((p) => [p.source, p.target, p.sourceTokens, p.targetTokens]),
    [
      ['我', 'I', [0], [0]],
      ['爱', 'love', [1], [1]],
    ],
  );
  const shares = headAlignment(steps, pairs, dims);
  assert.deepEqual([...shares], [1, 0, 0, 0]);
  assert.equal(headAlignment(steps, [], dims), null);
});
