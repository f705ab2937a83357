// Reusable buffers: in-place runs equal attention(), views stay correct across memory growth when
// re-read from the getters, and dispose() frees them.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RETIRED_LIMIT } from '../src/retired-memory.js';
import { openWasmBackend } from '../src/wasm-backend.js';
import { assertClose, openFlavours, tensor } from './support/helpers.js';

const {
  simd: { attn, backend },
} = await openFlavours();

const shape = { heads: 2, queryLength: 6, keyLength: 9, headDim: 4, valueDim: 3 };
const q = tensor(2 * 6 * 4, 1);
const k = tensor(2 * 9 * 4, 2);
const v = tensor(2 * 9 * 3, 3);

describe('allocate', () => {
  it('runs in place with the same results as attention()', async () => {
    const buffers = attn.allocate(shape);
    buffers.q.set(q);
    buffers.k.set(k);
    buffers.v.set(v);
    const { stats } = await buffers.run({ causal: true, temperature: 0.5 });
    const expected = await attn.attention(q, k, v, {
      heads: 2,
      headDim: 4,
      valueDim: 3,
      causal: true,
      temperature: 0.5,
    });
    assertClose(buffers.output, expected.output, 'output', 0);
    assert.equal(stats.backend, 'wasm-simd');
    assert.equal(stats.strategy, 'streaming');
    buffers.dispose();
  });

  it('views taken before memory growth are detached; the getters give fresh ones', async () => {
    const buffers = attn.allocate(shape);
    buffers.q.set(q);
    buffers.k.set(k);
    buffers.v.set(v);
    const oldView = buffers.q;
    const memoryBefore = backend.module.HEAPU8.length;
    const big = attn.allocate({ queryLength: 4096, keyLength: 1, headDim: 8192 }); // 128 MiB of q
    assert.ok(backend.module.HEAPU8.length > memoryBefore, 'wasm memory grew');
    assert.equal(oldView.length, 0, 'the old view is detached');
    assert.deepEqual(buffers.q, q, 'the data is still there through a fresh view');
    await buffers.run({});
    const expected = await attn.attention(q, k, v, { heads: 2, headDim: 4, valueDim: 3 });
    assertClose(buffers.output, expected.output, 'output after growth', 0);
    big.dispose();
    buffers.dispose();
  });

  it('checks run() options and the buffer contents', async () => {
    const buffers = attn.allocate(shape);
    await assert.rejects(buffers.run({ heads: 3 }), { name: 'TypeError', parameter: 'options' });
    await assert.rejects(buffers.run({ returnWeights: true }), {
      name: 'TypeError',
      parameter: 'options',
    });
    await assert.rejects(buffers.run({ window: -1 }), { name: 'RangeError', parameter: 'window' });
    buffers.v[5] = NaN;
    await assert.rejects(buffers.run(), {
      name: 'RangeError',
      code: 'non_finite',
      parameter: 'v',
      index: 5,
    });
    buffers.dispose();
  });

  it('dispose makes later use throw, and frees memory once no old view reaches it', async () => {
    // A module of its own, so that no other test's retired memory is counted.
    const own = await openWasmBackend('simd');
    const full = { heads: 2, queryLength: 6, keyLength: 9, headDim: 4, valueDim: 3 };
    const heapBefore = own.heapBytesInUse();
    const buffers = own.allocate(full);
    assert.ok(own.heapBytesInUse() > heapBefore);
    buffers.dispose();
    buffers.dispose(); // twice is fine
    assert.equal(buffers.disposed, true);
    assert.throws(() => buffers.q, { code: 'disposed', parameter: 'q' });
    await assert.rejects(buffers.run(), { code: 'disposed', parameter: 'run' });
    assert.ok(own.heapBytesInUse() > heapBefore, 'held back while old views may write there');
    // Memory growth detaches every view taken before it: then the retired memory is freed.
    const mask = (n) => ({
      shape: { ...full, queryLength: n, keyLength: n },
      head: 0,
      options: {},
    });
    const memoryBefore = own.memoryBytes;
    own.maskMatrix(mask(8192)); // 64 MiB of mask: wasm memory grows
    assert.ok(own.memoryBytes > memoryBefore);
    own.maskMatrix(mask(1));
    assert.equal(own.heapBytesInUse(), heapBefore);
    own.dispose();
  });

  it('views kept past dispose() never reach later allocations; the next call says so', async () => {
    const old = attn.allocate(shape);
    const staleQ = old.q;
    const staleOutput = old.output;
    old.dispose();
    const next = attn.allocate(shape); // the memory old held would be the first to reuse
    assert.deepEqual(next.q, new Float32Array(next.q.length), 'a new set starts zeroed');
    next.q.set(q);
    next.k.set(k);
    next.v.set(v);
    staleQ.fill(123);
    staleOutput[0] = 7;
    assert.deepEqual(next.q, q, "the stale view did not reach the new set's memory");
    const error = await next.run({}).then(
      () => assert.fail('the write after dispose() went unnoticed'),
      (e) => e,
    );
    assert.equal(error.code, 'disposed');
    assert.equal(error.parameter, 'run');
    assert.match(
      error.message,
      /a view of the (q|output) buffer of an allocate\(\) set was written/,
    );
    // Reported once: the instance and the new set carry on.
    await next.run({});
    const expected = await attn.attention(q, k, v, { heads: 2, headDim: 4, valueDim: 3 });
    assertClose(next.output, expected.output, 'output', 0);
    next.dispose();
  });

  it('a write anywhere in an old view is found within the calls that check it all', () => {
    const big = attn.allocate({ heads: 1, queryLength: 256, keyLength: 1, headDim: 1024 });
    const stale = big.q; // 1 MiB: 262,144 words, 4,096 checked per call besides both ends
    big.dispose();
    stale[100000] = 1;
    let calls = 0;
    let error;
    while (!error && calls < 100) {
      calls += 1;
      try {
        attn.maskMatrix({ queryLength: 1, keyLength: 1 });
      } catch (e) {
        error = e;
      }
    }
    assert.equal(error?.code, 'disposed', `not found in ${calls} calls`);
    assert.ok(calls <= 262144 / 4096 + 1, `${calls} calls`);
    assert.equal(attn.maskMatrix({ queryLength: 1, keyLength: 1 }).length, 1);
  });

  it('allocating and disposing in a loop keeps wasm memory flat', async () => {
    const large = { heads: 4, queryLength: 256, keyLength: 256, headDim: 64 }; // 1 MiB of q
    attn.allocate(large).dispose();
    const memoryBefore = backend.memoryBytes;
    for (let i = 0; i < 200; i++) {
      const buffers = attn.allocate(large);
      buffers.q.fill(1);
      buffers.dispose();
    }
    attn.maskMatrix({ queryLength: 1, keyLength: 1 });
    assert.ok(
      backend.memoryBytes <= memoryBefore + RETIRED_LIMIT + 8 * 2 ** 20,
      `${memoryBefore} -> ${backend.memoryBytes} bytes after 200 sets of 4 MiB`,
    );
  });

  it('running out of wasm memory is a RangeError, and nothing stays allocated', async () => {
    const heapBefore = backend.heapBytesInUse();
    // 4 GiB cannot be asked of a 32-bit malloc at all.
    assert.throws(() => attn.allocate({ queryLength: 1 << 20, keyLength: 1, headDim: 1024 }), {
      name: 'RangeError',
      code: 'out_of_memory',
      parameter: 'q',
    });
    // 1.25 GiB for q fits, the same again for the output does not: malloc itself fails.
    assert.throws(() => attn.allocate({ queryLength: 5 << 16, keyLength: 1, headDim: 1024 }), {
      name: 'RangeError',
      code: 'out_of_memory',
      parameter: 'output',
      // It says how much is asked and how much of the 2 GiB is already grown.
      message: /cannot allocate 1280\.0 MiB .*limited to 2 GiB, and \d+\.\d MiB .*already grown/,
    });
    assert.equal(backend.heapBytesInUse(), heapBefore);
    const x = tensor(8, 4);
    assert.equal((await attn.attention(x, x, x, { heads: 1, headDim: 4 })).output.length, 8);
  });
});
