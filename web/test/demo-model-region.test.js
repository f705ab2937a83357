// What the model view's tooltip says of a thumbnail pixel (demo/model/stage.js describeRegion):
// the queries and keys it stands for as 1-based positions and the strongest weight among them
// with its two tokens, in both of the page's languages.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setLanguage } from '../demo/i18n.js';
import { describeRegion } from '../demo/model/stage.js';

const ROWS = Array.from({ length: 1024 }, (_, i) => ({ text: i === 3 ? 'the cat' : `w${i}` }));
const REGION = { queries: [693, 703], keys: [0, 9], query: 696, key: 3, weight: 0.9321 };

test('a pooled pixel names true token positions and the strongest pair (en, zh)', () => {
  setLanguage('en');
  assert.equal(
    describeRegion(0, 3, REGION, ROWS),
    'layer 1, head 4 · queries 694–704 × keys 1–10 · strongest 0.93: “w696” (697) → ' +
      '“the·cat” (4)',
  );
  setLanguage('zh');
  assert.equal(
    describeRegion(0, 3, REGION, ROWS),
    '第 1 层，第 4 个头 · 查询 694–704 × 键 1–10 · 最强 0.93：“w696”（697）→ “the·cat”（4）',
  );
  setLanguage('en');
});

test('a pixel of one token pair, and one all masked', () => {
  setLanguage('en');
  const one = { queries: [5, 5], keys: [2, 2], query: 5, key: 2, weight: 0.5 };
  assert.equal(
    describeRegion(1, 0, one, ROWS),
    'layer 2, head 1 · queries 6 × keys 3 · strongest 0.50: “w5” (6) → “w2” (3)',
  );
  const masked = { queries: [0, 9], keys: [500, 520], query: -1, key: -1, weight: null };
  assert.equal(
    describeRegion(1, 0, masked, ROWS),
    'layer 2, head 1 · queries 1–10 × keys 501–521 · masked',
  );
});
