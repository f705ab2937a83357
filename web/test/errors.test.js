// Bad arguments: the right class, code, parameter and message, before wasm is touched; errors
// found only by the C++ core arrive the same way; the instance stays usable after every error.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ARRAY_SLOT, BLOCK_LENGTH, SLOT } from '../src/call-block.js';
import { coreError } from '../src/errors.js';
import { assertClose, assertFails, openFlavours, tensor } from './support/helpers.js';
import { referenceAttention } from './support/reference.js';

const {
  simd: { attn, backend },
} = await openFlavours();

const H = 2,
  N = 5,
  D = 4;
const q = tensor(H * N * D, 1);
const k = tensor(H * N * D, 2);
const v = tensor(H * N * D, 3);
const shape = { heads: H, headDim: D };
const expected = referenceAttention(q, k, v, shape);

async function stillWorks() {
  const r = await attn.attention(q, k, v, shape);
  assertClose(r.output, expected.output, 'output after an error');
}

// [description, call, class, code, parameter]
const BAD_ATTENTION_CALLS = [
  [
    'q of the wrong type',
    () => attn.attention([1, 2], k, v, shape),
    TypeError,
    'invalid_argument',
    'q',
  ],
  [
    'k as Float64Array',
    () => attn.attention(q, Float64Array.from(k), v, shape),
    TypeError,
    'invalid_argument',
    'k',
  ],
  ['v missing', () => attn.attention(q, k, undefined, shape), TypeError, 'invalid_argument', 'v'],
  [
    'options not an object',
    () => attn.attention(q, k, v, 3),
    TypeError,
    'invalid_argument',
    'options',
  ],
  [
    'misspelt option',
    () => attn.attention(q, k, v, { ...shape, casual: true }),
    TypeError,
    'invalid_argument',
    'options',
  ],
  [
    'heads missing',
    () => attn.attention(q, k, v, { headDim: D }),
    TypeError,
    'invalid_argument',
    'heads',
  ],
  [
    'heads as a string',
    () => attn.attention(q, k, v, { heads: '2', headDim: D }),
    TypeError,
    'invalid_argument',
    'heads',
  ],
  [
    'heads zero',
    () => attn.attention(q, k, v, { heads: 0, headDim: D }),
    RangeError,
    'out_of_range',
    'heads',
  ],
  [
    'headDim fractional',
    () => attn.attention(q, k, v, { heads: H, headDim: 2.5 }),
    RangeError,
    'out_of_range',
    'headDim',
  ],
  [
    'q length not a multiple',
    () => attn.attention(q.subarray(1), k, v, shape),
    RangeError,
    'shape_mismatch',
    'q',
  ],
  [
    'empty q',
    () => attn.attention(new Float32Array(0), k, v, shape),
    RangeError,
    'shape_mismatch',
    'q',
  ],
  [
    'v length off',
    () => attn.attention(q, k, v.subarray(0, v.length - D), shape),
    RangeError,
    'shape_mismatch',
    'v',
  ],
  [
    'valueDim disagreeing with v',
    () => attn.attention(q, k, v, { ...shape, valueDim: 3 }),
    RangeError,
    'shape_mismatch',
    'v',
  ],
  [
    'unknown score',
    () => attn.attention(q, k, v, { ...shape, score: 'bilinear' }),
    RangeError,
    'out_of_range',
    'score',
  ],
  [
    'additive without weights',
    () => attn.attention(q, k, v, { ...shape, score: 'additive' }),
    TypeError,
    'invalid_argument',
    'additive',
  ],
  [
    'additive weights of the wrong length',
    () =>
      attn.attention(q, k, v, {
        ...shape,
        score: 'additive',
        additive: {
          hidden: 3,
          wQuery: new Float32Array(5),
          wKey: new Float32Array(H * 3 * D),
          v: new Float32Array(H * 3),
        },
      }),
    RangeError,
    'shape_mismatch',
    'additive.wQuery',
  ],
  [
    'temperature 0',
    () => attn.attention(q, k, v, { ...shape, temperature: 0 }),
    RangeError,
    'out_of_range',
    'temperature',
  ],
  [
    'temperature Infinity',
    () => attn.attention(q, k, v, { ...shape, temperature: Infinity }),
    RangeError,
    'out_of_range',
    'temperature',
  ],
  [
    'temperature NaN',
    () => attn.attention(q, k, v, { ...shape, temperature: NaN }),
    RangeError,
    'out_of_range',
    'temperature',
  ],
  [
    'scale NaN',
    () => attn.attention(q, k, v, { ...shape, scale: NaN }),
    RangeError,
    'out_of_range',
    'scale',
  ],
  [
    'causal as a string',
    () => attn.attention(q, k, v, { ...shape, causal: 'yes' }),
    TypeError,
    'invalid_argument',
    'causal',
  ],
  [
    'negative window',
    () => attn.attention(q, k, v, { ...shape, window: -1 }),
    RangeError,
    'out_of_range',
    'window',
  ],
  [
    'negative window.before',
    () => attn.attention(q, k, v, { ...shape, window: { before: -2 } }),
    RangeError,
    'out_of_range',
    'window.before',
  ],
  [
    'window longer than the sequence',
    () => attn.attention(q, k, v, { ...shape, window: { after: N + 1 } }),
    RangeError,
    'out_of_range',
    'window.after',
  ],
  [
    'dilation 0',
    () => attn.attention(q, k, v, { ...shape, window: { before: 1, dilation: 0 } }),
    RangeError,
    'out_of_range',
    'window.dilation',
  ],
  [
    'sparse without a stride',
    () => attn.attention(q, k, v, { ...shape, sparse: { pattern: 'fixed' } }),
    TypeError,
    'invalid_argument',
    'sparse.stride',
  ],
  [
    'sparse summary above stride',
    () =>
      attn.attention(q, k, v, { ...shape, sparse: { pattern: 'fixed', stride: 2, summary: 3 } }),
    RangeError,
    'out_of_range',
    'sparse.summary',
  ],
  [
    'unknown sparse pattern',
    () => attn.attention(q, k, v, { ...shape, sparse: { pattern: 'random', stride: 2 } }),
    RangeError,
    'out_of_range',
    'sparse.pattern',
  ],
  [
    'global token out of range',
    () => attn.attention(q, k, v, { ...shape, globalTokens: [0, N] }),
    RangeError,
    'out_of_range',
    'globalTokens[1]',
  ],
  [
    'key lengths: one per head',
    () => attn.attention(q, k, v, { ...shape, keyLengths: [1] }),
    RangeError,
    'shape_mismatch',
    'keyLengths',
  ],
  [
    'key length above Nk',
    () => attn.attention(q, k, v, { ...shape, keyLengths: [1, N + 1] }),
    RangeError,
    'out_of_range',
    'keyLengths[1]',
  ],
  [
    'keyValid of the wrong length',
    () => attn.attention(q, k, v, { ...shape, keyValid: new Uint8Array(N - 1) }),
    RangeError,
    'shape_mismatch',
    'keyValid',
  ],
  [
    'mask of the wrong length',
    () => attn.attention(q, k, v, { ...shape, mask: new Uint8Array(N * N + 1) }),
    RangeError,
    'shape_mismatch',
    'mask',
  ],
  [
    'mask of strings',
    () => attn.attention(q, k, v, { ...shape, mask: ['1'] }),
    TypeError,
    'invalid_argument',
    'mask',
  ],
  [
    'unknown strategy',
    () => attn.attention(q, k, v, { ...shape, strategy: 'flash' }),
    RangeError,
    'out_of_range',
    'strategy',
  ],
  [
    'streaming with weights',
    () => attn.attention(q, k, v, { ...shape, strategy: 'streaming', returnWeights: true }),
    TypeError,
    'invalid_argument',
    'strategy',
  ],
  [
    'returnWeights as 1',
    () => attn.attention(q, k, v, { ...shape, returnWeights: 1 }),
    TypeError,
    'invalid_argument',
    'returnWeights',
  ],
];

describe('attention: bad arguments', () => {
  for (const [name, call, ErrorClass, code, parameter] of BAD_ATTENTION_CALLS) {
    it(name, async () => {
      const heapBefore = backend.heapBytesInUse();
      await assertFails(call, ErrorClass, code, parameter);
      assert.equal(backend.heapBytesInUse(), heapBefore, 'nothing allocated or leaked');
      await stillWorks();
    });
  }

  it('the message says what was expected', async () => {
    const e = await assertFails(
      attn.attention(q, k, v, { ...shape, temperature: 0 }),
      RangeError,
      'out_of_range',
      'temperature',
    );
    assert.equal(e.message, 'temperature: must be a positive finite number, got 0');
    const s = await assertFails(
      attn.attention(q, k, v.subarray(4), shape),
      RangeError,
      'shape_mismatch',
      'v',
    );
    assert.equal(s.message, 'v: expected heads*keyLength*valueDim = 40 elements, got 36');
  });

  for (const [tensorName, index, value, word] of [
    ['q', 7, NaN, 'NaN'],
    ['k', 0, Infinity, '+Infinity'],
    ['v', 39, -Infinity, '-Infinity'],
  ]) {
    it(`${word} in ${tensorName} names the tensor and the first bad index`, async () => {
      const bad = { q, k, v };
      bad[tensorName] = Float32Array.from(bad[tensorName]);
      bad[tensorName][index] = value;
      // A later one is not reported.
      if (index + 1 < bad[tensorName].length) bad[tensorName][index + 1] = NaN;
      const e = await assertFails(
        attn.attention(bad.q, bad.k, bad.v, shape),
        RangeError,
        'non_finite',
        tensorName,
      );
      assert.equal(
        e.message,
        `${tensorName}: ${tensorName}[${index}] is ${word}; inputs must be finite`,
      );
      assert.equal(e.index, index);
      await stillWorks();
    });
  }
});

describe('multiHead, maskMatrix, workingSetBytes, allocate: bad arguments', () => {
  const x = tensor(3 * 4, 9);
  const w = {
    wQuery: tensor(4 * 4, 1),
    wKey: tensor(4 * 4, 2),
    wValue: tensor(4 * 4, 3),
    wOut: tensor(4 * 4, 4),
  };
  const CALLS = [
    [
      'weights missing',
      () => attn.multiHead(x, undefined, { heads: 2, headDim: 2 }),
      TypeError,
      'invalid_argument',
      'weights',
    ],
    [
      'wOut not a Float32Array',
      () => attn.multiHead(x, { ...w, wOut: [1] }, { heads: 2, headDim: 2 }),
      TypeError,
      'invalid_argument',
      'wOut',
    ],
    [
      'wQuery not a multiple of heads*headDim',
      () => attn.multiHead(x, { ...w, wQuery: tensor(7, 1) }, { heads: 2, headDim: 2 }),
      RangeError,
      'shape_mismatch',
      'wQuery',
    ],
    [
      'x not a multiple of modelDim',
      () => attn.multiHead(x.subarray(1), w, { heads: 2, headDim: 2 }),
      RangeError,
      'shape_mismatch',
      'x',
    ],
    [
      'bias of the wrong length',
      () => attn.multiHead(x, { ...w, bKey: new Float32Array(3) }, { heads: 2, headDim: 2 }),
      RangeError,
      'shape_mismatch',
      'bKey',
    ],
    [
      'keyModelDim without source',
      () => attn.multiHead(x, w, { heads: 2, headDim: 2, keyModelDim: 2 }),
      TypeError,
      'invalid_argument',
      'keyModelDim',
    ],
    [
      'source of the wrong type',
      () => attn.multiHead(x, w, { heads: 2, headDim: 2, source: [1] }),
      TypeError,
      'invalid_argument',
      'source',
    ],
    [
      'NaN in a weight',
      () =>
        attn.multiHead(
          x,
          { ...w, wValue: Float32Array.from(w.wValue, (a, i) => (i === 5 ? NaN : a)) },
          { heads: 2, headDim: 2 },
        ),
      RangeError,
      'non_finite',
      'wValue',
    ],
    [
      'maskMatrix without keyLength',
      () => attn.maskMatrix({ queryLength: 3 }),
      TypeError,
      'invalid_argument',
      'keyLength',
    ],
    [
      'maskMatrix head out of range',
      () => attn.maskMatrix({ heads: 2, head: 2, queryLength: 3, keyLength: 3 }),
      RangeError,
      'out_of_range',
      'head',
    ],
    [
      'workingSetBytes unknown strategy',
      () => attn.workingSetBytes({ queryLength: 3, keyLength: 3, headDim: 2, strategy: 'x' }),
      RangeError,
      'out_of_range',
      'strategy',
    ],
    ['allocate without a shape', () => attn.allocate(), TypeError, 'invalid_argument', 'shape'],
    [
      'allocate with queryLength 0',
      () => attn.allocate({ queryLength: 0, keyLength: 1, headDim: 1 }),
      RangeError,
      'out_of_range',
      'queryLength',
    ],
  ];
  for (const [name, call, ErrorClass, code, parameter] of CALLS) {
    it(name, async () => {
      await assertFails(call, ErrorClass, code, parameter);
      await stillWorks();
    });
  }
});

describe('errors found by the C++ core', () => {
  it('an overflow inside the scores arrives as a RangeError from the core', async () => {
    const huge = Float32Array.from(q, (x) => x * 1e30);
    const e = await assertFails(
      attn.attention(huge, huge, v, { ...shape, score: 'dot', returnWeights: true }),
      RangeError,
      'non_finite',
      'scores',
    );
    assert.match(e.message, /overflowed float32 at head \d+, query \d+/);
    await stillWorks();
  });

  // The raw bindings are what the JS checks protect; called directly, with any numbers in the
  // call block (src/call-block.js), they must still report every problem as a value, so the module
  // never sees a JS exception inside C++ frames.
  function rawCall(fn, fill) {
    const m = backend.module;
    const pointers = [];
    const allocate = (bytes) => {
      const ptr = m._malloc(bytes);
      pointers.push(ptr);
      return ptr;
    };
    const copy = (array) => {
      const ptr = allocate(array.byteLength);
      m.HEAPU8.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), ptr);
      return { ptr, length: array.length };
    };
    const block = new Float64Array(BLOCK_LENGTH);
    const call = {
      block,
      copy,
      set: (name, value) => {
        block[SLOT[name]] = value;
      },
      array: (name, { ptr, length }) => {
        block[ARRAY_SLOT[name]] = ptr;
        block[ARRAY_SLOT[name] + 1] = length;
      },
    };
    fill(call);
    const address = allocate(block.byteLength);
    m.HEAPF64.set(block, address / 8);
    try {
      return {
        result: fn(address),
        results: m.HEAPF64.slice(address / 8, address / 8 + BLOCK_LENGTH),
      };
    } finally {
      pointers.forEach((ptr) => m._free(ptr));
    }
  }

  // A valid _attention call block, then `mutate` breaks it.
  function rawAttention(mutate) {
    return rawCall(
      (address) => backend.module._attention(address),
      (call) => {
        for (const [name, value] of Object.entries({
          heads: H,
          queryLength: N,
          keyLength: N,
          headDim: D,
          valueDim: D,
          scale: NaN,
          temperature: 1,
        }))
          call.set(name, value);
        for (const [name, array] of Object.entries({
          q,
          k,
          v,
          output: new Float32Array(H * N * D),
        })) {
          call.array(name, call.copy(array));
        }
        mutate(call);
      },
    );
  }

  const RAW_CASES = [
    [
      'custom mask of the wrong length',
      (c) => {
        c.array('mask', c.copy(new Uint8Array(N * N - 1)));
      },
      'shape_mismatch',
      'custom',
    ],
    [
      'q shorter than the shape says',
      (c) => {
        c.block[ARRAY_SLOT.q + 1] -= 1;
      },
      'shape_mismatch',
      'q',
    ],
    [
      'zero heads',
      (c) => {
        c.set('heads', 0);
      },
      'out_of_range',
      'heads',
    ],
    [
      'temperature -1',
      (c) => {
        c.set('temperature', -1);
      },
      'out_of_range',
      'temperature',
    ],
    [
      'window beyond the sequence',
      (c) => {
        c.set('windowDilation', 1);
        c.set('windowBefore', N + 1);
      },
      'out_of_range',
      'window.before',
    ],
    [
      'global token out of range',
      (c) => {
        c.array('globalTokens', c.copy(Float64Array.of(N)));
      },
      'out_of_range',
      'global_tokens',
    ],
    [
      'streaming with weights',
      (c) => {
        c.set('strategy', 2);
        c.array('weights', c.copy(new Float32Array(H * N * N)));
      },
      'invalid_argument',
      'strategy',
    ],
    [
      'a score code the core does not know',
      (c) => {
        c.set('score', 9);
      },
      'invalid_argument',
      'score',
    ],
    [
      'a NaN size',
      (c) => {
        c.set('headDim', NaN);
      },
      'out_of_range',
      'headDim',
    ],
    [
      'a fractional size',
      (c) => {
        c.set('queryLength', 2.5);
      },
      'out_of_range',
      'queryLength',
    ],
    [
      'a tensor beyond wasm memory',
      (c) => {
        c.block[ARRAY_SLOT.q] = backend.module.HEAPU8.length - 8;
      },
      'invalid_argument',
      'q',
    ],
    [
      'a misaligned tensor',
      (c) => {
        c.block[ARRAY_SLOT.k] += 1;
      },
      'invalid_argument',
      'k',
    ],
    [
      'a length without an address',
      (c) => {
        c.block[ARRAY_SLOT.output] = 0;
      },
      'invalid_argument',
      'output',
    ],
    [
      'NaN in k',
      (c) => {
        const bad = Float32Array.from(k);
        bad[3] = NaN;
        c.array('k', c.copy(bad));
      },
      'non_finite',
      'k',
    ],
  ];

  for (const [name, mutate, kind, parameter] of RAW_CASES) {
    it(`raw _attention: ${name}`, async () => {
      const heapBefore = backend.heapBytesInUse();
      const { result } = rawAttention(mutate);
      assert.ok(result?.error, `expected an error result, got ${JSON.stringify(result)}`);
      assert.equal(result.error.kind, kind, result.error.message);
      assert.equal(result.error.parameter, parameter, result.error.message);
      assert.ok(result.error.message.startsWith(`${parameter}:`), result.error.message);
      assert.equal(backend.heapBytesInUse(), heapBefore, 'the core freed what it allocated');
      const thrown = coreError(result.error);
      assert.ok(thrown instanceof (kind === 'invalid_argument' ? TypeError : RangeError));
      assert.equal(thrown.message, result.error.message);
      await stillWorks();
    });
  }

  it('a valid raw call returns undefined and writes its stats into the block', () => {
    const { result, results } = rawAttention(() => {});
    assert.equal(result, undefined);
    assert.equal(results[SLOT.resultStrategy], 2, 'streaming');
    assert.ok(results[SLOT.resultTilesVisited] > 0);
  });

  it('a null call block is an error value', () => {
    const result = backend.module._attention(0);
    assert.equal(result.error.kind, 'invalid_argument');
    assert.equal(result.error.parameter, 'block');
  });

  it('raw _maskMatrix and _workingSetBytes report errors as values too', async () => {
    const m = backend.module;
    const out = m._malloc(9);
    try {
      const { result: bad } = rawCall(
        (address) => m._maskMatrix(address),
        (call) => {
          for (const [name, value] of Object.entries({
            heads: 1,
            queryLength: 3,
            keyLength: 3,
            headDim: 1,
            valueDim: 1,
          })) {
            call.set(name, value);
          }
          call.array('maskOut', { ptr: out, length: 8 });
        },
      );
      assert.equal(bad.error.kind, 'shape_mismatch');
      assert.equal(bad.error.parameter, 'out');
    } finally {
      m._free(out);
    }
    const { result: ws } = rawCall(
      (address) => m._workingSetBytes(address),
      (call) => {
        for (const [name, value] of Object.entries({
          heads: 1,
          queryLength: 0,
          keyLength: 3,
          headDim: 1,
          valueDim: 1,
          strategy: 2,
        })) {
          call.set(name, value);
        }
      },
    );
    assert.equal(ws.error.kind, 'out_of_range');
    await stillWorks();
  });
});
