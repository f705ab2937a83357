// The KV cache (attn.kvCache): appends and attends equal attention() over the concatenated keys
// and values (causal and windows bottom-right, grouped-query heads, the logit options), one-token
// decode steps equal the rows of causal attention over the whole sequence, the keys are read in
// place (no copy per attend), the argument checks, dispose, and a heap that stays flat.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openWasmBackend } from '../src/wasm-backend.js';
import { assertClose, assertFails, openFlavours, tensor } from './support/helpers.js';

const { simd, scalar } = await openFlavours();

// Rows [from, to) of every head of x [heads, rows, width].
function rowsOf(x, heads, rows, width, from, to) {
  const out = new Float32Array(heads * (to - from) * width);
  for (let h = 0; h < heads; h++) {
    out.set(
      x.subarray((h * rows + from) * width, (h * rows + to) * width),
      h * (to - from) * width,
    );
  }
  return out;
}

// A sequence of `length` positions: q [queryHeads, length, D], k [heads, length, D], v.
function sequence({ heads, queryHeads = heads, headDim, valueDim = headDim }, length, seed) {
  return {
    q: tensor(queryHeads * length * headDim, seed),
    k: tensor(heads * length * headDim, seed + 1),
    v: tensor(heads * length * valueDim, seed + 2),
  };
}

// [name, cache options, chunk sizes appended, queries attended, attend options]
const CASES = [
  ['one append, causal', { heads: 2, headDim: 8, capacity: 16 }, [11], 4, { causal: true }],
  [
    'three appends, grouped-query heads, valueDim, causal window',
    { heads: 2, queryHeads: 6, headDim: 4, valueDim: 3, capacity: 40 },
    [7, 1, 13],
    5,
    { causal: true, window: { before: 6, after: 0 } },
  ],
  [
    'multi-query, ALiBi and soft cap at the cache positions',
    { heads: 1, queryHeads: 4, headDim: 8, capacity: 20 },
    [9, 9],
    3,
    { causal: true, alibi: true, softcap: 2 },
  ],
  [
    'top-k and a key mask over a full cache, weights returned',
    { heads: 3, headDim: 5, capacity: 12 },
    [4, 8],
    2,
    { topK: 5, keyValid: Array.from({ length: 12 }, (_, j) => j % 4 !== 1), returnWeights: true },
  ],
  [
    'more queries than keys: queryOffset 0',
    { heads: 2, headDim: 4, capacity: 8 },
    [3],
    6,
    { causal: true },
  ],
];

for (const [flavour, { attn }] of Object.entries({ simd, scalar })) {
  describe(`kvCache on wasm-${flavour}`, () => {
    for (const [name, shape, chunks, nq, options] of CASES) {
      it(`${name}: equals attention() over the concatenated K/V`, async () => {
        const { heads, queryHeads = heads, headDim, valueDim = headDim } = shape;
        const length = chunks.reduce((a, b) => a + b, 0);
        const { q, k, v } = sequence(shape, Math.max(length, nq), 10);
        const cache = attn.kvCache(shape);
        let appended = 0;
        for (const n of chunks) {
          const next = cache.append(
            rowsOf(k, heads, Math.max(length, nq), headDim, appended, appended + n),
            rowsOf(v, heads, Math.max(length, nq), valueDim, appended, appended + n),
          );
          appended += n;
          assert.equal(next, appended);
        }
        assert.equal(cache.length, length);
        const queries = rowsOf(q, queryHeads, Math.max(length, nq), headDim, 0, nq);
        const got = await cache.attend(queries, options);
        const allK = rowsOf(k, heads, Math.max(length, nq), headDim, 0, length);
        const allV = rowsOf(v, heads, Math.max(length, nq), valueDim, 0, length);
        const expected = await attn.attention(queries, allK, allV, {
          heads: queryHeads,
          kvHeads: heads,
          headDim,
          valueDim,
          queryOffset: Math.max(0, length - nq),
          ...options,
        });
        // The same kernels over the same rows, only read at another stride: the same bits.
        assertClose(got.output, expected.output, 'output', 0);
        if (options.returnWeights) assertClose(got.weights, expected.weights, 'weights', 0);
        assert.equal(got.stats.backend, `wasm-${flavour}`);
        assert.equal(got.stats.strategy, expected.stats.strategy);
        cache.dispose();
      });
    }

    it('one-token decode steps after a prefill give the rows of causal attention', async () => {
      const shape = { heads: 2, queryHeads: 4, headDim: 8, capacity: 24 };
      const total = 21;
      const prefill = 6;
      const { q, k, v } = sequence(shape, total, 30);
      const full = await attn.attention(q, k, v, {
        heads: 4,
        kvHeads: 2,
        headDim: 8,
        causal: true,
        window: { before: 9, after: 0 },
      });
      const cache = attn.kvCache(shape);
      const options = { causal: true, window: { before: 9, after: 0 } };
      cache.append(rowsOf(k, 2, total, 8, 0, prefill), rowsOf(v, 2, total, 8, 0, prefill));
      const first = await cache.attend(rowsOf(q, 4, total, 8, 0, prefill), options);
      assertClose(first.output, rowsOf(full.output, 4, total, 8, 0, prefill), 'prefill', 1e-6);
      for (let t = prefill; t < total; t++) {
        cache.append(rowsOf(k, 2, total, 8, t, t + 1), rowsOf(v, 2, total, 8, t, t + 1));
        const step = await cache.attend(rowsOf(q, 4, total, 8, t, t + 1), options);
        assertClose(step.output, rowsOf(full.output, 4, total, 8, t, t + 1), `step ${t}`, 1e-6);
      }
      assert.equal(cache.length, total);
      cache.dispose();
    });
  });
}

const { attn, backend } = simd;

describe('kvCache', () => {
  it('reads the cached keys in place: no allocation of their size per attend', async () => {
    const cache = attn.kvCache({ heads: 4, headDim: 32, capacity: 1024 }); // 512 KiB of keys
    const { k, v } = sequence({ heads: 4, headDim: 32 }, 1000, 40);
    cache.append(k, v);
    const module = backend.module;
    const malloc = module._malloc;
    const sizes = [];
    module._malloc = (bytes) => {
      sizes.push(bytes);
      return malloc(bytes);
    };
    try {
      await cache.attend(tensor(4 * 32, 41), { causal: true });
    } finally {
      module._malloc = malloc;
    }
    assert.ok(sizes.length > 0, 'the call allocated its query, output and call block');
    assert.ok(Math.max(...sizes) < 4096, `largest allocation ${Math.max(...sizes)} bytes`);
    cache.dispose();
  });

  it('reset() empties the cache; later appends start at position 0', async () => {
    const shape = { heads: 2, headDim: 4, capacity: 10 };
    const { q, k, v } = sequence(shape, 10, 50);
    const cache = attn.kvCache(shape);
    cache.append(tensor(2 * 7 * 4, 51), tensor(2 * 7 * 4, 52));
    cache.reset();
    assert.equal(cache.length, 0);
    cache.append(k, v);
    const got = await cache.attend(q, { causal: true });
    const expected = await attn.attention(q, k, v, { heads: 2, headDim: 4, causal: true });
    assertClose(got.output, expected.output, 'output', 0);
    cache.dispose();
  });

  it('checks its options', () => {
    const fails = (options, ErrorClass, code, parameter) =>
      assertFails(() => attn.kvCache(options), ErrorClass, code, parameter);
    return Promise.all([
      fails(undefined, TypeError, 'invalid_argument', 'options'),
      fails({ headDim: 4, capacity: 8 }, TypeError, 'invalid_argument', 'heads'),
      fails({ heads: 2, headDim: 4 }, TypeError, 'invalid_argument', 'capacity'),
      fails({ heads: 2, headDim: 4, capacity: 0 }, RangeError, 'out_of_range', 'capacity'),
      fails(
        { heads: 2, headDim: 4, capacity: 8, kvHeads: 1 },
        TypeError,
        'invalid_argument',
        'options',
      ),
      fails(
        { heads: 2, queryHeads: 3, headDim: 4, capacity: 8 },
        RangeError,
        'out_of_range',
        'queryHeads',
      ),
      fails({ heads: 2, headDim: 2.5, capacity: 8 }, RangeError, 'out_of_range', 'headDim'),
      fails(
        { heads: 64, headDim: 2 ** 20, capacity: 2 ** 10 },
        RangeError,
        'out_of_memory',
        'capacity',
      ),
    ]);
  });

  it('refuses bad appends and attends, and keeps working afterwards', async () => {
    const cache = attn.kvCache({ heads: 2, headDim: 4, valueDim: 3, capacity: 8 });
    await assertFails(() => cache.attend(tensor(8, 1)), RangeError, 'out_of_range', 'length');
    await assertFails(() => cache.append([1, 2], tensor(6, 1)), TypeError, 'invalid_argument', 'k');
    await assertFails(
      () => cache.append(tensor(7, 1), tensor(6, 1)),
      RangeError,
      'shape_mismatch',
      'k',
    );
    await assertFails(
      () => cache.append(tensor(8, 1), tensor(7, 1)),
      RangeError,
      'shape_mismatch',
      'v',
    );
    const badV = tensor(6, 2);
    badV[4] = NaN;
    const nan = await assertFails(
      () => cache.append(tensor(8, 1), badV),
      RangeError,
      'non_finite',
      'v',
    );
    assert.equal(nan.index, 4);
    assert.equal(cache.length, 0, 'nothing appended');
    cache.append(tensor(2 * 6 * 4, 3), tensor(2 * 6 * 3, 4));
    const overflow = await assertFails(
      () => cache.append(tensor(2 * 3 * 4, 5), tensor(2 * 3 * 3, 6)),
      RangeError,
      'out_of_range',
      'k',
    );
    assert.match(overflow.message, /capacity 8 \(2 free\)/);
    assert.equal(cache.length, 6, 'nothing appended');
    assert.throws(() => {
      cache.capacity = 100; // the sizes bound append()'s writes: read-only
    }, TypeError);
    await assertFails(cache.attend(tensor(7, 1)), RangeError, 'shape_mismatch', 'q');
    await assertFails(
      cache.attend(tensor(8, 1), { heads: 2 }),
      TypeError,
      'invalid_argument',
      'options',
    );
    await assertFails(cache.attend(tensor(8, 1), { topK: 7 }), RangeError, 'out_of_range', 'topK');
    // A window may reach past the 6 positions held, up to the capacity, not beyond.
    await cache.attend(tensor(8, 1), { window: 8 });
    await assertFails(
      cache.attend(tensor(8, 1), { window: 9 }),
      RangeError,
      'out_of_range',
      'window',
    );
    const badQ = tensor(16, 7);
    badQ[9] = Infinity;
    const inf = await assertFails(cache.attend(badQ), RangeError, 'non_finite', 'q');
    assert.equal(inf.index, 9);
    const { output } = await cache.attend(tensor(8, 1), { causal: true });
    assert.equal(output.length, 2 * 1 * 3);
    cache.dispose();
  });

  it('refuses use after dispose by name, also after the instance is disposed', async () => {
    const cache = attn.kvCache({ heads: 1, headDim: 2, capacity: 4 });
    cache.append(tensor(2, 1), tensor(2, 2));
    cache.dispose();
    cache.dispose();
    assert.equal(cache.disposed, true);
    await assertFails(() => cache.append(tensor(2, 1), tensor(2, 2)), Error, 'disposed', 'append');
    await assertFails(cache.attend(tensor(2, 1)), Error, 'disposed', 'attend');
    await assertFails(() => cache.reset(), Error, 'disposed', 'reset');
    await assertFails(() => cache.length, Error, 'disposed', 'length');
    assert.equal(cache.capacity, 4, 'the shape stays readable');

    const own = await openWasmBackend('simd');
    const live = own.kvCache({ heads: 1, queryHeads: 1, headDim: 2, valueDim: 2, capacity: 4 });
    own.dispose();
    assert.equal(live.disposed, true);
  });

  it('leaves the heap as it found it', async () => {
    const own = await openWasmBackend('simd');
    const before = own.heapBytesInUse();
    const shape = { heads: 2, queryHeads: 4, headDim: 8, valueDim: 8, capacity: 64 };
    for (let round = 0; round < 50; round++) {
      const cache = own.kvCache(shape);
      for (let t = 0; t < 8; t++) {
        cache.append(tensor(2 * 8 * 8, t), tensor(2 * 8 * 8, t + 1));
        await cache.attend(tensor(4 * 8, t), { causal: true, returnWeights: t % 2 === 0 });
      }
      await cache.attend(tensor(4 * 8, 1), { topK: 99 }).catch((e) => e); // a failing call
      cache.dispose();
    }
    assert.equal(own.heapBytesInUse(), before);
    own.dispose();
  });
});
