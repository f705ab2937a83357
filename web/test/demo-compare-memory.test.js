// The rule "Compare two models" applies before a second model downloads: both models' weights
// and the second's load scratch within the 2 GiB one wasm engine may hold.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_WASM_BYTES, pairMemory } from '../demo/model/compare-memory.js';

const MiB = 2 ** 20;

describe('pairMemory', () => {
  it('adds the loaded weights, the second model and its scratch', () => {
    const about = { memoryBytes: 300 * MiB, loadScratchBytes: 20 * MiB, fits: true };
    assert.deepEqual(pairMemory(100 * MiB, about), { total: 420 * MiB, fits: true });
  });

  it('refuses two models that fit alone but not together', () => {
    const about = { memoryBytes: 1200 * MiB, loadScratchBytes: 0, fits: true };
    assert.equal(pairMemory(900 * MiB, about).fits, false);
    assert.equal(pairMemory(848 * MiB, about).fits, true); // exactly 2 GiB
    assert.equal(pairMemory(848 * MiB, about).total, MAX_WASM_BYTES);
  });

  it('refuses a second model that does not fit even alone', () => {
    const about = { memoryBytes: MiB, loadScratchBytes: 0, fits: false };
    assert.equal(pairMemory(0, about).fits, false);
  });
});
