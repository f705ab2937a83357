// attn.maskMatrix() against the mask formula of include/attnlens/mask.h, and workingSetBytes().

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openFlavours } from './support/helpers.js';
import { visible } from './support/reference.js';

const {
  simd: { attn },
} = await openFlavours();

const MASKS = [
  ['no restriction', {}],
  ['causal', { causal: true }],
  ['window 2', { window: 2 }],
  ['left window 3, dilation 2', { window: { before: 3, dilation: 2 } }],
  ['right-only window', { window: { after: 2 } }],
  ['strided sparse', { sparse: { pattern: 'strided', stride: 3 } }],
  ['fixed sparse', { sparse: { pattern: 'fixed', stride: 4, summary: 1 } }],
  ['fixed sparse, summary 3', { sparse: { pattern: 'fixed', stride: 4, summary: 3 } }],
  [
    'global tokens with causal window',
    { causal: true, window: { before: 1 }, globalTokens: [0, 5] },
  ],
  ['global tokens with sparse', { sparse: { pattern: 'strided', stride: 4 }, globalTokens: [3] }],
  ['key valid', { keyValid: [1, 0, 1, 1, 0, 1, 1, 1, 1] }],
  ['custom', { mask: Uint8Array.from({ length: 9 * 9 }, (_, i) => (i * 7) % 5 !== 0) }],
];

function expectedMatrix(options, head, queryLength, keyLength) {
  const out = new Uint8Array(queryLength * keyLength);
  for (let i = 0; i < queryLength; i++) {
    for (let j = 0; j < keyLength; j++)
      out[i * keyLength + j] = visible(options, head, i, j, keyLength) ? 1 : 0;
  }
  return out;
}

describe('maskMatrix', () => {
  for (const [name, options] of MASKS) {
    it(name, () => {
      const m = attn.maskMatrix({ queryLength: 9, keyLength: 9, ...options });
      assert.deepEqual(m, expectedMatrix(options, 0, 9, 9));
    });
  }

  it('differs per head with key lengths', () => {
    const options = { heads: 3, keyLengths: [4, 0, 7], causal: true };
    for (let head = 0; head < 3; head++) {
      const m = attn.maskMatrix({ queryLength: 7, keyLength: 7, head, ...options });
      assert.deepEqual(m, expectedMatrix(options, head, 7, 7), `head ${head}`);
    }
  });

  it('handles cross-attention shapes', () => {
    const options = { window: { before: 1, after: 1 }, globalTokens: [6] };
    const m = attn.maskMatrix({ queryLength: 4, keyLength: 8, ...options });
    assert.deepEqual(m, expectedMatrix(options, 0, 4, 8));
  });
});

describe('workingSetBytes', () => {
  const shape = { heads: 1, headDim: 64 };
  it('materialized grows with N^2, streaming with N', () => {
    const at = (n, strategy) =>
      attn.workingSetBytes({ ...shape, queryLength: n, keyLength: n, strategy });
    const m1 = at(1024, 'materialized'),
      m2 = at(4096, 'materialized');
    const s1 = at(1024, 'streaming'),
      s2 = at(4096, 'streaming');
    assert.ok(m2 / m1 > 12, `materialized ${m1} -> ${m2}`);
    assert.ok(s2 / s1 < 5, `streaming ${s1} -> ${s2}`);
    assert.ok(s2 < m2 / 10);
    assert.equal(at(1024, 'auto'), s1);
    assert.ok(m1 >= 4 * 1024 * 1024, 'the score matrix alone is N^2 floats');
  });

  it('counts the additive hidden width as the depth', () => {
    const base = { queryLength: 100, keyLength: 100, headDim: 8, strategy: 'streaming' };
    const narrow = attn.workingSetBytes({ ...base, score: 'additive', additive: { hidden: 8 } });
    const wide = attn.workingSetBytes({ ...base, score: 'additive', additive: { hidden: 64 } });
    assert.ok(wide > narrow);
  });
});
