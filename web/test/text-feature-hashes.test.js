import { test } from 'node:test';
import assert from 'node:assert/strict';

import { featureHashes, tokenFeatures } from '../src/text/embed.js';
import { hashString } from '../src/text/hash.js';

// embed() hashes n-grams straight from code units; these must be the hashes of tokenFeatures()'
// strings, in the same order, for every kind of text tokenize() can produce.
const TOKENS = [
  '',
  'a',
  'Cat',
  'attention',
  'İstanbul',
  'ǅungla',
  'straße',
  '我',
  '自然语言处理',
  '👍🏽',
  '👨‍👩‍👧',
  '𝔸𝔹',
  'e\u0301',
  '\ud800',
  'x\udc00y',
  '\ud83d',
  'é́',
  'Σίσυφος',
  'a'.repeat(200),
  '😀'.repeat(70),
  '\u0000\u0001\u0002\u0003',
];

test('featureHashes() equals hashString() over tokenFeatures()', () => {
  for (const token of TOKENS) {
    for (const seed of [0, 1, 7, 0xffffffff]) {
      const fast = [];
      featureHashes(token, seed, (h) => fast.push(h));
      const expected = tokenFeatures(token).map((feature) => hashString(feature, seed));
      assert.deepEqual(fast, expected, `token ${JSON.stringify(token)}, seed ${seed}`);
    }
  }
});
