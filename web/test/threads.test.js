// createAttention({ threads }) in Node: the option is checked, and since the threaded module needs
// a browser (Web Workers, a cross-origin isolated page) every call runs on one thread, with one
// console.warn when threads were asked for explicitly. The threaded module itself is tested in
// headless Chromium (test/browser/threads.test.mjs).

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createAttention, THREADS_MIN_FLOPS, threadsUnavailableReason } from '../src/index.js';
import { assertFails, tensor } from './support/helpers.js';

// Records console.warn while a test runs.
let warnings;
let originalWarn;
beforeEach(() => {
  warnings = [];
  originalWarn = console.warn;
  console.warn = (...args) => warnings.push(args.join(' '));
});
afterEach(() => {
  console.warn = originalWarn;
});

// Large enough (2 * 2 * 128 * 128 * 64 flops >= THREADS_MIN_FLOPS) that threads would be used.
const heads = 2,
  length = 128,
  headDim = 32;
const x = tensor(heads * length * headDim, 7);

describe('createAttention({ threads })', () => {
  it('rejects thread counts that are not whole numbers from 1 to 256', async () => {
    for (const bad of [0, -1, 1.5, 257, NaN, Infinity]) {
      await assertFails(createAttention({ threads: bad }), RangeError, 'out_of_range', 'threads');
    }
    for (const bad of ['2', true, null, {}, 2n]) {
      await assertFails(
        createAttention({ threads: bad }),
        TypeError,
        'invalid_argument',
        'threads',
      );
    }
    assert.deepEqual(warnings, []);
  });

  it('says why Node has no threads', () => {
    assert.match(threadsUnavailableReason(), /browsers only/);
    assert.ok(2 * heads * length * length * (headDim + headDim) >= THREADS_MIN_FLOPS);
  });

  it("'auto' and 1 run on one thread without a warning", async () => {
    for (const threads of [undefined, 'auto', 1]) {
      const attn = await createAttention(threads === undefined ? {} : { threads });
      assert.equal(attn.threads, 1);
      const { stats } = await attn.attention(x, x, x, { heads, headDim });
      assert.equal(stats.threads, 1);
      attn.dispose();
    }
    assert.deepEqual(warnings, []);
  });

  it('asked-for threads fall back to one thread with a single warning', async () => {
    const one = await createAttention({ threads: 1 });
    const expected = await one.attention(x, x, x, { heads, headDim, causal: true });
    for (let i = 0; i < 3; i++) {
      const attn = await createAttention({ threads: 2 });
      assert.equal(attn.threads, 1);
      assert.equal(attn.backend, 'wasm-simd');
      const result = await attn.attention(x, x, x, { heads, headDim, causal: true });
      assert.equal(result.stats.threads, 1);
      assert.deepEqual(result.output, expected.output);
      attn.dispose();
    }
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(
      warnings[0],
      /^attnlens: threads: 2 threads were asked for, but threads run in browsers only/,
    );
    assert.match(warnings[0], /running on one thread$/);
    one.dispose();
  });

  it("'wasm-scalar' has no threads: a warning that says so", async () => {
    const attn = await createAttention({ backend: 'wasm-scalar', threads: 3 });
    assert.equal(attn.threads, 1);
    assert.equal(attn.backend, 'wasm-scalar');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /'wasm-scalar' has no threaded module/);
    attn.dispose();
  });
});
