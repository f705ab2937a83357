// When WebGPU is absent, refuses, or goes away, 'auto' runs on wasm with the same results, and
// 'webgpu' says why it cannot start. A fake navigator.gpu stands in only for the failures a real
// one cannot be made to produce here (no adapter, a throwing requestAdapter/requestDevice); the
// device losses are real (device.destroy() on SwiftShader).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAttention } from '../../src/index.js';
import { tensor } from '../support/helpers.js';
import {
  assertSameResults,
  gpu,
  openGpuAttention,
  openWasmAttention,
  requestDevice,
} from './support.js';

const SHAPE = { heads: 2, headDim: 3, valueDim: 5 };
const N = 24;
const q = tensor(2 * N * 3, 1);
const k = tensor(2 * N * 3, 2);
const v = tensor(2 * N * 5, 3);
const OPTIONS = { ...SHAPE, causal: true, window: { before: 5 } };

// Runs on the GPU whatever its size, and accepts SwiftShader.
const EAGER = { minFlops: 0, allowSoftwareAdapter: true };

let wasm;
let expected;
before(async () => {
  wasm = await openWasmAttention();
  expected = await wasm.attention(q, k, v, OPTIONS);
});
after(() => wasm.dispose());

/** Calls `run` and returns the 'backendchange' events `attn` fired meanwhile. */
async function changesDuring(attn, run) {
  const events = [];
  const listener = (event) => events.push(event);
  attn.addEventListener('backendchange', listener);
  try {
    await run();
  } finally {
    attn.removeEventListener('backendchange', listener);
  }
  return events;
}

// A navigator.gpu whose requestAdapter() behaves as given.
const fakeGpu = (requestAdapter) => ({ requestAdapter });

describe('without a usable WebGPU', () => {
  const unavailable = [
    ['no navigator.gpu (Node)', {}, /no navigator\.gpu/],
    [
      'requestAdapter() returns null',
      { gpu: fakeGpu(async () => null) },
      /requestAdapter\(\) returned null/,
    ],
    [
      'requestAdapter() throws',
      {
        gpu: fakeGpu(async () => {
          throw new Error('adapter blocked');
        }),
      },
      /requestAdapter\(\) failed: adapter blocked/,
    ],
    [
      'requestDevice() rejects',
      {
        gpu: fakeGpu(async () => ({
          features: new Set(),
          limits: {},
          info: {},
          requestDevice: async () => {
            throw new Error('device limit exceeded');
          },
        })),
      },
      /requestDevice\(\) failed: device limit exceeded/,
    ],
  ];
  for (const [name, webgpu, reason] of unavailable) {
    it(`${name}: 'webgpu' rejects naming why, 'auto' runs on wasm`, async () => {
      await assert.rejects(
        createAttention({ backend: 'webgpu', webgpu }),
        (error) =>
          error instanceof Error &&
          /^backend: 'webgpu' is not available: /.test(error.message) &&
          reason.test(error.message),
      );
      const attn = await createAttention({ backend: 'auto', webgpu: { ...webgpu, ...EAGER } });
      assert.equal(attn.webgpu, null);
      assert.match(attn.webgpuUnavailable, reason);
      const r = await attn.attention(q, k, v, OPTIONS);
      assert.equal(r.stats.backend, wasm.backend);
      assert.deepEqual(r.output, expected.output);
      attn.dispose();
    });
  }

  it("'auto' leaves software adapters (SwiftShader) alone unless allowed", async () => {
    const attn = await createAttention({ backend: 'auto', webgpu: { gpu } });
    assert.equal(attn.backend, wasm.backend);
    assert.match(attn.webgpuUnavailable, /software implementation/);
    attn.dispose();
  });
});

describe("'auto' with a GPU", () => {
  it('sends small problems to wasm and large ones to the GPU (webgpu.minFlops)', async () => {
    const attn = await createAttention({
      backend: 'auto',
      webgpu: { gpu, allowSoftwareAdapter: true, minFlops: 1e5 },
    });
    assert.equal(attn.backend, 'webgpu');
    const small = await attn.attention(q, k, v, OPTIONS); // 2 * 2 * 24 * 24 * 8 = 18432 flops
    assert.equal(small.stats.backend, wasm.backend);
    assert.match(small.stats.fallbackReason, /below webgpu\.minFlops/);
    const n = 128;
    const big = [tensor(2 * n * 3, 4), tensor(2 * n * 3, 5), tensor(2 * n * 5, 6)];
    const large = await attn.attention(...big, OPTIONS);
    assert.equal(large.stats.backend, 'webgpu');
    assertSameResults(large, await wasm.attention(...big, OPTIONS), 'large');
    attn.dispose();
  });
});

describe('attentionBackward on a WebGPU instance', () => {
  it('runs on wasm, says why, and gives the wasm instance its bits', async () => {
    const attn = await openGpuAttention(EAGER);
    assert.equal(attn.backend, 'webgpu');
    const dOutput = tensor(2 * N * 5, 7);
    const r = await attn.attentionBackward(q, k, v, dOutput, OPTIONS);
    const onWasm = await wasm.attentionBackward(q, k, v, dOutput, OPTIONS);
    assert.equal(r.stats.backend, wasm.backend);
    assert.match(r.stats.fallbackReason, /WebGPU backend has no attentionBackward/);
    for (const key of ['dq', 'dk', 'dv']) assert.deepEqual(r[key], onWasm[key], key);
    assert.equal(attn.backend, 'webgpu', 'the instance keeps its GPU for attention()');
    attn.dispose();
  });
});

describe('device loss', () => {
  it("a caller's device destroyed: the next call runs on wasm, 'backendchange' fires", async () => {
    const device = await requestDevice();
    const attn = await createAttention({ backend: 'auto', webgpu: { device, ...EAGER } });
    assert.equal((await attn.attention(q, k, v, OPTIONS)).stats.backend, 'webgpu');
    device.destroy();
    let r;
    const events = await changesDuring(attn, async () => {
      r = await attn.attention(q, k, v, OPTIONS);
    });
    assert.equal(r.stats.backend, wasm.backend);
    assert.deepEqual(r.output, expected.output);
    assert.equal(events.length, 1);
    assert.equal(events[0].type, 'backendchange');
    assert.equal(events[0].from, 'webgpu');
    assert.equal(events[0].to, wasm.backend);
    assert.match(events[0].reason, /device was lost .*passed in by the caller/);
    assert.equal(attn.backend, wasm.backend);
    attn.dispose();
  });

  it('calls in flight together when the device goes recover once', async () => {
    const device = await requestDevice();
    const attn = await createAttention({ backend: 'webgpu', webgpu: { device } });
    await attn.attention(q, k, v, OPTIONS);
    let results;
    const events = await changesDuring(attn, async () => {
      const calls = [
        attn.attention(q, k, v, OPTIONS),
        attn.attention(q, k, v, OPTIONS),
        attn.attention(q, k, v, OPTIONS),
      ];
      device.destroy();
      results = await Promise.all(calls);
    });
    for (const r of results) assert.deepEqual(r.output, expected.output);
    assert.equal(events.length, 1);
    attn.dispose();
  });

  it('a device attnlens created: the next call re-creates it and stays on WebGPU', async () => {
    const devices = [];
    // The real GPU object, watched: it records each device attnlens requests.
    const watched = {
      async requestAdapter(options) {
        const adapter = await gpu.requestAdapter(options);
        return {
          features: adapter.features,
          limits: adapter.limits,
          info: adapter.info,
          async requestDevice(descriptor) {
            const device = await adapter.requestDevice(descriptor);
            devices.push(device);
            return device;
          },
        };
      },
    };
    const attn = await createAttention({ backend: 'webgpu', webgpu: { gpu: watched } });
    await attn.attention(q, k, v, OPTIONS);
    devices[0].destroy();
    let r;
    const events = await changesDuring(attn, async () => {
      r = await attn.attention(q, k, v, OPTIONS);
    });
    assert.equal(devices.length, 2, 'a second device was requested');
    assert.equal(r.stats.backend, 'webgpu');
    assertSameResults(r, expected, 'after re-creation');
    assert.deepEqual(
      events.map((e) => [e.from, e.to]),
      [['webgpu', 'webgpu']],
    );

    // Lost in the middle of a call: the call still resolves, on the next device.
    const pending = attn.attention(q, k, v, OPTIONS);
    devices[1].destroy();
    assertSameResults(await pending, expected, 'lost during the call');
    assert.equal(devices.length, 3);
    attn.dispose();
  });
});

describe('calls the GPU declines run on wasm', () => {
  let attn;
  before(async () => {
    attn = await openGpuAttention();
  });
  after(() => attn.dispose());

  it('logits that could overflow float32 (the core checks them exactly)', async () => {
    // max|q| * max|k| * D exceeds FLT_MAX / 4, but the large entries never meet in a dot product.
    const bigQ = tensor(2 * N * 3, 7);
    const bigK = tensor(2 * N * 3, 8);
    bigQ[0] = 3e19;
    bigK[1] = 3e19;
    const r = await attn.attention(bigQ, bigK, v, OPTIONS);
    assert.equal(r.stats.backend, wasm.backend);
    assert.match(r.stats.fallbackReason, /overflow/);
    assert.deepEqual(r.output, (await wasm.attention(bigQ, bigK, v, OPTIONS)).output);

    // When they do meet, the error is the core's.
    bigK[0] = 3e19;
    const error = await attn.attention(bigQ, bigK, v, OPTIONS).catch((e) => e);
    const reference = await wasm.attention(bigQ, bigK, v, OPTIONS).catch((e) => e);
    assert.ok(error instanceof RangeError && reference instanceof RangeError);
    assert.equal(error.message, reference.message);
    assert.equal(error.code, 'non_finite');
  });
});

describe('storage and subgroup preferences', () => {
  it("storage 'f16' without 'shader-f16' (SwiftShader) stays f32 and says why", async () => {
    const attn = await openGpuAttention({ storage: 'f16' });
    assert.equal(attn.webgpu.storage, 'f32');
    assert.ok(
      attn.webgpu.notes.some((note) => /shader-f16/.test(note)),
      attn.webgpu.notes.join('; '),
    );
    const r = await attn.attention(q, k, v, OPTIONS);
    assert.equal(r.stats.gpu.storage, 'f32');
    assertSameResults(r, expected, 'f16 requested');
    attn.dispose();
  });

  it('subgroups: false forces the plain reductions (agreement.test.js runs them)', async () => {
    const attn = await openGpuAttention({ subgroups: false });
    assert.equal(attn.webgpu.subgroups, false);
    attn.dispose();
  });

  it('webgpu options are checked like every other argument', async () => {
    const bad = [
      [{ storage: 'f64' }, RangeError, 'webgpu.storage'],
      [{ minFlops: -1 }, RangeError, 'webgpu.minFlops'],
      [{ subgroups: 'yes' }, TypeError, 'webgpu.subgroups'],
      [{ maxBufferBytes: 10 }, RangeError, 'webgpu.maxBufferBytes'],
      [{ gpu: 'navigator.gpu' }, TypeError, 'webgpu.gpu'],
      [{ fp16: true }, TypeError, 'webgpu'],
    ];
    for (const [webgpu, ErrorClass, parameter] of bad) {
      await assert.rejects(
        createAttention({ backend: 'webgpu', webgpu: { gpu, ...webgpu } }),
        (error) => error instanceof ErrorClass && error.parameter === parameter,
        JSON.stringify(webgpu),
      );
    }
  });
});

describe('problems beyond the binding limit are split', () => {
  const shape = { heads: 3, headDim: 3, valueDim: 5 };
  const n = 40;
  const tensors = [tensor(3 * n * 3, 9), tensor(3 * n * 3, 10), tensor(3 * n * 5, 11)];
  // One head's largest tensor is 40 * 5 floats = 800 bytes: one head per group; one head's score
  // matrix (6400 bytes) is cut into bands of 6 rows.
  let attn;
  before(async () => {
    attn = await openGpuAttention({ maxBufferBytes: 1024 });
  });
  after(() => attn.dispose());

  for (const [name, options] of [
    ['streaming, head by head', { ...shape, causal: true, keyLengths: [30, 40, 0] }],
    [
      'materialized, in bands of rows',
      { ...shape, window: 4, returnWeights: true, returnScores: true },
    ],
    [
      'additive score, materialized',
      {
        ...shape,
        score: 'additive',
        returnWeights: true,
        additive: {
          hidden: 4,
          wQuery: tensor(3 * 4 * 3, 12),
          wKey: tensor(3 * 4 * 3, 13),
          v: tensor(3 * 4, 14),
        },
      },
    ],
  ]) {
    it(name, async () => {
      const r = await attn.attention(...tensors, options);
      assert.equal(r.stats.backend, 'webgpu', r.stats.fallbackReason);
      assertSameResults(r, await wasm.attention(...tensors, options), name);
    });
  }

  it('heads in uneven groups (5 + 2), score chunks of two heads', async () => {
    // 10 x 5 floats (200 bytes) per head tensor: 5 heads per group; 400-byte score matrices: 2 per
    // chunk.
    const m = 10;
    const uneven = [tensor(7 * m * 3, 18), tensor(7 * m * 3, 19), tensor(7 * m * 5, 20)];
    for (const options of [
      { causal: true },
      { causal: true, returnWeights: true, returnScores: true },
    ]) {
      const all = { heads: 7, headDim: 3, valueDim: 5, ...options };
      const r = await attn.attention(...uneven, all);
      assert.equal(r.stats.backend, 'webgpu', r.stats.fallbackReason);
      assertSameResults(r, await wasm.attention(...uneven, all), JSON.stringify(options));
    }
  });

  it('a head too large for one binding runs on wasm', async () => {
    const m = 64; // 64 * 5 * 4 = 1280 bytes per head
    const big = [tensor(m * 3, 15), tensor(m * 3, 16), tensor(m * 5, 17)];
    const r = await attn.attention(...big, { heads: 1, headDim: 3, valueDim: 5 });
    assert.equal(r.stats.backend, wasm.backend);
    assert.match(r.stats.fallbackReason, /largest storage binding/);
  });
});
