// The option words of src/vocabulary.js are the ones the types spell (index.d.ts) and the ones the
// checks accept, so a name added in one place and forgotten in another fails here.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { checkMaskMatrix, checkWorkingSet } from '../src/checks.js';
import { tokenize } from '../src/text/tokenize.js';
import { GRANULARITIES, SCORES, SPARSE_PATTERNS, STRATEGIES } from '../src/vocabulary.js';

const types = readFileSync(new URL('../index.d.ts', import.meta.url), 'utf8');

// The string literals of a union type written `<prefix> 'a' | 'b' | 'c';` in index.d.ts.
function union(prefix) {
  const start = types.indexOf(prefix);
  assert.ok(start >= 0, `index.d.ts has no ${prefix}`);
  const text = types.slice(start + prefix.length, types.indexOf(';', start));
  return Array.from(text.matchAll(/'([^']+)'/g), (match) => match[1]);
}

describe('vocabulary', () => {
  it('is the one index.d.ts spells', () => {
    assert.deepEqual(union('export type ScoreFunction ='), SCORES);
    assert.deepEqual(union('export type Strategy ='), STRATEGIES);
    assert.deepEqual(union('export type Granularity ='), GRANULARITIES);
    assert.deepEqual(union('pattern: '), SPARSE_PATTERNS);
  });

  it('is what the checks accept', () => {
    const lengths = { queryLength: 4, keyLength: 4 };
    const shape = { ...lengths, headDim: 2 };
    for (const strategy of STRATEGIES)
      assert.doesNotThrow(() => checkWorkingSet({ ...shape, strategy }));
    for (const score of SCORES) assert.doesNotThrow(() => checkWorkingSet({ ...shape, score }));
    for (const pattern of SPARSE_PATTERNS) {
      assert.doesNotThrow(() => checkMaskMatrix({ ...lengths, sparse: { pattern, stride: 2 } }));
    }
    for (const granularity of GRANULARITIES) {
      assert.ok(tokenize('attention heads', { granularity }).length > 0, granularity);
    }
    assert.throws(() => checkWorkingSet({ ...shape, score: 'bilinear' }), RangeError);
  });
});
