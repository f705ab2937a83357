// Arguments that lie about themselves or are built to break the checks: typed arrays whose
// `length` is redefined, Proxies, options inherited through Object.prototype, getters that answer
// differently on a second read or detach a buffer, BigInts and cycles; and the rules every entry
// point shares: null is never "the default", unknown keys are errors, values are reported as
// given. Every error has the documented form: TypeError / RangeError with `code` and `parameter`,
// the message starting with the parameter's name.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { MULTI_HEAD_KEYS } from '../src/checks.js';
import { analyze, embed, projectionWeights, tokenize } from '../src/index.js';
import { describe as describeValue } from '../src/errors.js';
import { loadModelFiles } from '../src/models/files/index.js';
import { assertClose, openFlavours, random, tensor } from './support/helpers.js';
import { referenceAttention } from './support/reference.js';

const {
  simd: { attn, backend },
} = await openFlavours();

const H = 1;
const D = 4;
const q = tensor(4 * D, 1);
const k = tensor(16 * D, 2);
const v = tensor(16 * D, 3);
const shape = { heads: H, headDim: D };

/** The call fails with the documented form; returns the error. */
async function documentedError(call, ErrorClass, code, parameter) {
  let error;
  try {
    await call();
  } catch (e) {
    error = e;
  }
  assert.ok(error, `expected ${ErrorClass.name} ${code} naming ${parameter}`);
  assert.equal(error.constructor, ErrorClass, error.stack);
  assert.equal(error.code, code, error.message);
  assert.equal(error.parameter, parameter, error.message);
  assert.ok(error.message.startsWith(`${parameter}: `), error.message);
  return error;
}

const detach = (array) => structuredClone(array.buffer, { transfer: [array.buffer] });

describe('typed arrays are known by their internal slots', () => {
  it('a redefined length is refused, and the engine reads nothing past the array', async () => {
    const heapBefore = backend.heapBytesInUse();
    for (const [name, claimed] of [
      ['q', 64], // 16 elements that would be 16 queries
      ['k', 8],
      ['v', 1e9],
    ]) {
      const lying = Float32Array.from({ q, k, v }[name]);
      Object.defineProperty(lying, 'length', { value: claimed });
      Object.defineProperty(lying, 'byteLength', { value: 4 * claimed });
      const inputs = { q, k, v, [name]: lying };
      const e = await documentedError(
        () => attn.attention(inputs.q, inputs.k, inputs.v, shape),
        TypeError,
        'invalid_argument',
        name,
      );
      assert.equal(
        e.message,
        `${name}: is a Float32Array of ${new Float32Array(lying.buffer).length} elements ` +
          'whose length property says ' +
          `${claimed}: its length was redefined`,
      );
    }
    // multiHead's input and weights, and the backward pass's gradient, the same.
    const w = tensor(D * D, 5);
    const lyingX = tensor(3 * D, 6);
    Object.defineProperty(lyingX, 'length', { value: 6 * D });
    const weights = { wQuery: w, wKey: w, wValue: w, wOut: w };
    await documentedError(
      () => attn.multiHead(lyingX, weights, shape),
      TypeError,
      'invalid_argument',
      'x',
    );
    const lyingW = Float32Array.from(w);
    Object.defineProperty(lyingW, 'length', { get: () => 2 * D * D });
    await documentedError(
      () => attn.multiHead(tensor(3 * D, 6), { ...weights, wOut: lyingW }, shape),
      TypeError,
      'invalid_argument',
      'wOut',
    );
    const dOutput = Float32Array.from(q);
    Object.defineProperty(dOutput, 'length', { value: 0 });
    await documentedError(
      () => attn.attentionBackward(q, k, v, dOutput, shape),
      TypeError,
      'invalid_argument',
      'dOutput',
    );
    assert.equal(backend.heapBytesInUse(), heapBefore);
    // Still usable: the same arrays, honest, give the reference output.
    const r = await attn.attention(q, k, v, shape);
    assertClose(r.output, referenceAttention(q, k, v, shape).output, 'output', 1e-5);
  });

  it('a subarray with a redefined byteOffset is read where it really starts', async () => {
    const whole = tensor(8 * D, 4);
    const half = whole.subarray(4 * D);
    Object.defineProperty(half, 'byteOffset', { value: 0 });
    Object.defineProperty(half, 'buffer', { value: new ArrayBuffer(64) });
    const r = await attn.attention(half, k, v, shape);
    const want = referenceAttention(whole.slice(4 * D), k, v, shape);
    assertClose(r.output, want.output, 'output', 1e-5);
  });

  it('a Proxy of a Float32Array is not one', async () => {
    const e = await documentedError(
      () => attn.attention(new Proxy(q, {}), k, v, shape),
      TypeError,
      'invalid_argument',
      'q',
    );
    assert.equal(e.message, 'q: must be a Float32Array, got an object');
    await documentedError(
      () => attn.attention(q, k, v, { ...shape, mask: new Proxy(new Uint8Array(64), {}) }),
      TypeError,
      'invalid_argument',
      'mask',
    );
    // A Proxy of an array is an array, but its length is read once and must be one.
    const lying = (length) =>
      new Proxy([1, 0], { get: (t, p) => (p === 'length' ? length : t[p]) });
    for (const [name, length] of [
      ['keyValid', 'abc'],
      ['keyValid', 2 ** 40],
      ['globalTokens', 'abc'],
    ]) {
      await documentedError(
        () => attn.attention(q, k, v, { ...shape, [name]: lying(length) }),
        TypeError,
        'invalid_argument',
        name,
      );
    }
  });

  it('a detached buffer is an error naming the tensor', async () => {
    const gone = Float32Array.from(q);
    detach(gone);
    const e = await documentedError(
      () => attn.attention(gone, k, v, shape),
      TypeError,
      'invalid_argument',
      'q',
    );
    assert.match(e.message, /detached/);
  });

  it('a buffer detached by an option getter read after it was checked is an error', async () => {
    const victim = Float32Array.from(q);
    const options = {
      ...shape,
      window: {
        get before() {
          detach(victim);
          return 1;
        },
      },
    };
    const e = await documentedError(
      () => attn.attention(victim, k, v, options),
      TypeError,
      'invalid_argument',
      'q',
    );
    assert.match(e.message, /detached or resized while the options were being read/);
    const w = tensor(D * D, 5);
    const weights = { wQuery: w, wKey: w, wValue: w, wOut: Float32Array.from(w) };
    const detaching = {
      ...shape,
      sparse: {
        pattern: 'strided',
        get stride() {
          detach(weights.wOut);
          return 2;
        },
      },
    };
    await documentedError(
      () => attn.multiHead(tensor(3 * D, 6), weights, detaching),
      TypeError,
      'invalid_argument',
      'wOut',
    );
  });
});

describe('options are own properties, each read once', () => {
  it('an option on Object.prototype is not an option', async () => {
    const plain = await attn.attention(q, k, v, shape);
    Object.prototype.causal = true; // eslint-disable-line no-extend-native
    Object.prototype.temperature = -1; // eslint-disable-line no-extend-native
    try {
      const r = await attn.attention(q, k, v, { heads: H, headDim: D });
      assert.deepEqual(r.output, plain.output, 'not causal, temperature 1');
      const mask = attn.maskMatrix({ queryLength: 3, keyLength: 3 });
      assert.deepEqual([...mask], [1, 1, 1, 1, 1, 1, 1, 1, 1]);
      assert.equal(tokenize('a b').length, 2);
    } finally {
      delete Object.prototype.causal;
      delete Object.prototype.temperature;
    }
  });

  it('a getter is read once, so it cannot change a value after the check', async () => {
    const reads = {};
    const counted = (name, values) => {
      let n = 0;
      return {
        get() {
          reads[name] = (reads[name] ?? 0) + 1;
          return values[Math.min(n++, values.length - 1)];
        },
        enumerable: true,
      };
    };
    const options = Object.defineProperties(
      {},
      {
        heads: counted('heads', [H, 0]),
        headDim: counted('headDim', [D, 0]),
        scale: counted('scale', [0.5, Infinity]),
        temperature: counted('temperature', [2, -1]),
        causal: counted('causal', [true, 'no']),
      },
    );
    const window = Object.defineProperties(
      {},
      { before: counted('window.before', [2, -5]), after: counted('window.after', [1, -5]) },
    );
    Object.defineProperty(options, 'window', counted('window', [window, 'x']));
    const r = await attn.attention(q, k, v, options);
    const want = await attn.attention(q, k, v, {
      ...shape,
      scale: 0.5,
      temperature: 2,
      causal: true,
      window: { before: 2, after: 1 },
    });
    assert.deepEqual(r.output, want.output);
    for (const [name, count] of Object.entries(reads)) assert.equal(count, 1, name);
    assert.equal(Object.keys(reads).length, 8);
  });
});

describe('errors of the documented form, whatever the value', () => {
  const cyclic = {};
  cyclic.self = cyclic;

  it('BigInts are named as BigInts', async () => {
    const e = await documentedError(
      () => attn.attention(q, k, v, { heads: 1n, headDim: D }),
      TypeError,
      'invalid_argument',
      'heads',
    );
    assert.equal(e.message, 'heads: must be an integer, got 1n (a BigInt)');
    await documentedError(
      () => tokenize('a', { locale: 1n }),
      TypeError,
      'invalid_argument',
      'locale',
    );
    await documentedError(() => analyze('a', { seed: 1n }), TypeError, 'invalid_argument', 'seed');
  });

  it('cyclic objects are reported, not serialised', async () => {
    await documentedError(
      () => tokenize('a', { locale: cyclic }),
      TypeError,
      'invalid_argument',
      'locale',
    );
    await documentedError(
      () => analyze('a', { seed: cyclic }),
      TypeError,
      'invalid_argument',
      'seed',
    );
    await documentedError(
      () => analyze('a', { locale: [cyclic] }),
      TypeError,
      'invalid_argument',
      'locale',
    );
  });

  it("analyze()'s attention must be an instance", async () => {
    const e = await documentedError(
      () => analyze('the cat', { attention: 5 }),
      TypeError,
      'invalid_argument',
      'attention',
    );
    assert.equal(e.message, 'attention: must be an instance from createAttention(), got 5');
    await documentedError(
      () => analyze('the cat', { attention: { multiHead() {} } }),
      TypeError,
      'invalid_argument',
      'attention',
    );
  });
});

describe('one rule for null: a value, never the default', () => {
  const CASES = [
    ['temperature', () => attn.attention(q, k, v, { ...shape, temperature: null })],
    ['scale', () => attn.attention(q, k, v, { ...shape, scale: null })],
    ['window', () => attn.attention(q, k, v, { ...shape, window: null })],
    ['window.before', () => attn.attention(q, k, v, { ...shape, window: { before: null } })],
    ['valueDim', () => attn.attention(q, k, v, { ...shape, valueDim: null })],
    ['head', () => attn.maskMatrix({ queryLength: 2, keyLength: 2, head: null })],
    ['heads', () => attn.maskMatrix({ queryLength: 2, keyLength: 2, heads: null })],
    ['heads', () => analyze('the cat', { heads: null })],
    ['headDim', () => analyze('the cat', { headDim: null })],
    ['additiveHidden', () => analyze('the cat', { additiveHidden: null })],
    ['seed', () => embed(['a'], { seed: null })],
    ['granularity', () => tokenize('a', { granularity: null })],
    ['locale', () => tokenize('a', { locale: null })],
  ];
  for (const [parameter, call] of CASES) {
    it(`${parameter}: null is a TypeError`, async () => {
      const e = await documentedError(call, TypeError, 'invalid_argument', parameter);
      assert.match(e.message, /got null$/);
    });
  }
});

describe('unknown keys are rejected everywhere', () => {
  const CASES = [
    ['tokenize', () => tokenize('a b', { granularty: 'char' })],
    ['embed', () => embed(['a'], { dims: 8 })],
    ['projectionWeights', () => projectionWeights({ heads: 1, headDim: 2, sed: 1 })],
    ['analyze', () => analyze('the cat', { granularty: 'char' })],
    ['multiHead weights', () => attn.multiHead(q, { wquery: q }, shape), 'weights'],
  ];
  for (const [name, call, parameter = 'options'] of CASES) {
    it(name, async () => {
      const e = await documentedError(call, TypeError, 'invalid_argument', parameter);
      assert.match(e.message, /unknown option '\w+'/);
    });
  }

  it("analyze() names its own options among the known ones, not only multiHead()'s", async () => {
    const e = await documentedError(
      () => analyze('the cat', { granularty: 'char' }),
      TypeError,
      'invalid_argument',
      'options',
    );
    assert.match(e.message, /known: .*granularity/);
  });
});

describe('values are checked whenever given and reported as given', () => {
  it("'additive' is checked even while another score is chosen", async () => {
    const CASES = [
      [5, TypeError, 'invalid_argument', 'additive'],
      ['x', TypeError, 'invalid_argument', 'additive'],
      [{ hidden: 2 }, TypeError, 'invalid_argument', 'additive.wQuery'],
      [{ hidden: 1, wQuery: q, wKey: q, v: q }, RangeError, 'shape_mismatch', 'additive.wQuery'],
    ];
    for (const [additive, ErrorClass, code, parameter] of CASES) {
      await documentedError(
        () => attn.attention(q, k, v, { ...shape, score: 'dot', additive }),
        ErrorClass,
        code,
        parameter,
      );
    }
    await documentedError(
      () => attn.workingSetBytes({ queryLength: 2, keyLength: 2, headDim: 2, additive: 5 }),
      TypeError,
      'invalid_argument',
      'additive',
    );
  });

  it('a rejected option is rejected every time, whatever ran before (no loose cache)', async () => {
    await analyze('the cat sat');
    await documentedError(
      () => analyze('the cat sat', { additiveHidden: () => 5 }),
      TypeError,
      'invalid_argument',
      'additiveHidden',
    );
    await documentedError(
      () => analyze('the cat sat', { seed: undefined, shareQueryKey: 'yes' }),
      TypeError,
      'invalid_argument',
      'shareQueryKey',
    );
  });

  it('numbers float32 cannot hold are reported as given, before any conversion', async () => {
    const tiny = await documentedError(
      () => attn.attention(q, k, v, { ...shape, temperature: 1e-300 }),
      RangeError,
      'out_of_range',
      'temperature',
    );
    assert.match(tiny.message, /got 1e-300, which is 0 in float32/);
    const huge = await documentedError(
      () => attn.attention(q, k, v, { ...shape, scale: -1e300 }),
      RangeError,
      'out_of_range',
      'scale',
    );
    assert.match(huge.message, /got -1e\+300, which is -Infinity in float32/);
    const r = await attn.attention(q, k, v, { ...shape, temperature: 1e-30 });
    assert.ok(r.output.every(Number.isFinite), 'a small temperature float32 holds still runs');
  });
});

describe("the model loaders' options follow the same rules", () => {
  const root = mkdtempSync(join(tmpdir(), 'attnlens-hostile-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const nowhere = join(root, 'nowhere');

  it('inherited options are not options, null is no default, a getter is read once', async () => {
    const inherited = Object.create({ cache: 'yes', onProgress: 42 });
    await assert.rejects(loadModelFiles(nowhere, inherited), { code: 'not_found' });
    await documentedError(
      () => loadModelFiles(nowhere, { cache: null }),
      TypeError,
      'invalid_argument',
      'cache',
    );
    let reads = 0;
    const once = {
      get signal() {
        reads += 1;
        return reads === 1 ? undefined : 'not a signal';
      },
    };
    await assert.rejects(loadModelFiles(nowhere, once), { code: 'not_found' });
    assert.equal(reads, 1);
  });
});

describe('seeded fuzz: hostile values in every option', () => {
  // Each call gets one option set to a value drawn from this list (or a getter returning one,
  // or an inherited one); it must succeed or fail in the documented form, leak nothing and
  // leave the instance working.
  const cyclic = {};
  cyclic.self = cyclic;
  const HOSTILE = [
    null,
    undefined,
    0,
    -1,
    0.5,
    1e-300,
    1e300,
    NaN,
    Infinity,
    2n,
    '',
    '2',
    'causal',
    true,
    [],
    [1, 2],
    {},
    cyclic,
    () => 5,
    Symbol('x'),
    new Proxy({}, {}),
    new Proxy(Float32Array.of(1), {}),
    Float32Array.of(1, 2),
    new Uint8Array(3),
    new Date(0),
  ];
  const KEYS = MULTI_HEAD_KEYS; // attention's options and multiHead's few more
  const documented = (error) =>
    (error instanceof TypeError || error instanceof RangeError) &&
    typeof error.code === 'string' &&
    typeof error.parameter === 'string' &&
    error.message.startsWith(`${error.parameter}: `);

  it('attention, maskMatrix, workingSetBytes, tokenize and analyze: 600 draws', async () => {
    const next = random(1515);
    const pick = (list) => list[Math.floor(((next() + 1) / 2) * list.length)];
    const heapBefore = backend.heapBytesInUse();
    for (let i = 0; i < 600; i++) {
      const key = pick(KEYS);
      const value = pick(HOSTILE);
      const how = pick(['plain', 'getter', 'nested']);
      const options = { ...shape };
      if (how === 'plain') options[key] = value;
      else if (how === 'getter')
        Object.defineProperty(options, key, { get: () => value, enumerable: true });
      else options.window = { before: 1, [pick(['before', 'after', 'dilation'])]: value };
      const calls = [
        () => attn.attention(q, k, v, options),
        () => attn.maskMatrix({ queryLength: 4, keyLength: 16, ...options, headDim: undefined }),
        () => attn.workingSetBytes({ queryLength: 4, keyLength: 16, [key]: value, headDim: D }),
        () => tokenize('the cat sat', { [pick(['granularity', 'locale'])]: value }),
        () =>
          analyze('the cat sat', {
            [key === 'heads' ? 'heads' : pick(['seed', 'heads', key])]: value,
          }),
      ];
      const call = pick(calls);
      try {
        await call();
      } catch (error) {
        assert.ok(
          documented(error),
          `draw ${i}: ${key} = ${describeValue(value)} (${how}): ${error.stack}`,
        );
      }
    }
    assert.equal(backend.heapBytesInUse(), heapBefore, 'nothing leaked');
    const r = await attn.attention(q, k, v, shape);
    assertClose(r.output, referenceAttention(q, k, v, shape).output, 'still works', 1e-5);
  });
});
