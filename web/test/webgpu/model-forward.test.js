// A model's forward pass on WebGPU (loadModel(source, { backend: 'webgpu' })) against the wasm
// forward on the tiny GPT-2, llama-family and ViT models of the model tests (and the bundled
// stories260K), on SwiftShader: every layer's attention within
// 1e-5, logits within 1e-4, the same top predictions; what it refuses and why; a bad call leaves
// the model usable; a lost device hands the runs to wasm.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createAttention } from '../../src/index.js';
import { loadModel } from '../../src/models/index.js';
import { MODEL_WEBGPU_MIN_FLOPS } from '../../src/models/model-backend.js';
import { rejectsWith, tinyModel } from '../support/tiny-models.mjs';
import { gpu, requestDevice } from './support.js';

const ATTENTION_TOLERANCE = 1e-5;
const LOGIT_TOLERANCE = 1e-4;
const TEXTS = ['Hello world, this is a test.', 'a', 'The cat sat on the mat and the dog sat.'];

function maxDifference(actual, expected, label) {
  assert.equal(actual.length, expected.length, `${label}: length`);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const diff = Math.abs(actual[i] - expected[i]);
    assert.ok(Number.isFinite(actual[i]), `${label}: ${actual[i]} at ${i}`);
    worst = Math.max(worst, diff);
  }
  return worst;
}

function assertSameRun(actual, expected, label, tolerance = {}) {
  const {
    attention: attentionTolerance = ATTENTION_TOLERANCE,
    logits: logitTolerance = LOGIT_TOLERANCE,
  } = tolerance;
  const attention = maxDifference(actual.attention, expected.attention, `${label}: attention`);
  assert.ok(attention <= attentionTolerance, `${label}: attention differs by ${attention}`);
  if (expected.logits) {
    const logits = maxDifference(actual.logits, expected.logits, `${label}: logits`);
    assert.ok(logits <= logitTolerance, `${label}: logits differ by ${logits}`);
    console.log(`# ${label}: max |logit diff| ${logits}`);
  }
  assert.deepEqual(
    actual.predictions.map((p) => p.id),
    expected.predictions.map((p) => p.id),
    `${label}: top predictions`,
  );
  assert.deepEqual(actual.tokens, expected.tokens);
  return attention;
}

let wasm;
let onGpu;
let device; // shared by most models here, so the kernels compile once (SwiftShader is slow)
before(async () => {
  device = await requestDevice();
  wasm = await loadModel(tinyModel('gpt2'));
  onGpu = await loadModel(tinyModel('gpt2'), { backend: 'webgpu', webgpu: { device } });
});
after(() => {
  wasm?.dispose();
  onGpu?.dispose();
  device?.destroy();
});

describe("GPT-2 on backend 'webgpu'", () => {
  it('says where it runs and why', () => {
    assert.equal(onGpu.info.backend, 'webgpu');
    assert.match(onGpu.info.backendReason, /^backend 'webgpu': run\(\) on .*software adapter/);
    assert.match(wasm.info.backendReason, /^backend 'wasm'/);
    assert.equal(wasm.info.backend.startsWith('wasm-'), true);
  });

  it('matches the wasm forward: attention, logits and top-k', async () => {
    for (const text of TEXTS) {
      const options = { returnLogits: true, topK: 10 };
      const [expected, actual] = [await wasm.run(text, options), await onGpu.run(text, options)];
      assert.equal(actual.backend, 'webgpu');
      assert.equal(expected.backend, undefined, 'a wasm model adds nothing to its results');
      const worst = assertSameRun(actual, expected, JSON.stringify(text));
      console.log(
        `# ${JSON.stringify(text)}: N=${actual.tokens.length} max |attention diff| ${worst}`,
      );
    }
  });

  it("the last position's logits only, as run() asks by default", async () => {
    const text = TEXTS[2];
    const [expected, actual] = [await wasm.run(text), await onGpu.run(text)];
    assertSameRun(actual, expected, 'last position');
    for (let i = 0; i < expected.predictions.length; i++) {
      assert.ok(Math.abs(actual.predictions[i].p - expected.predictions[i].p) < 1e-5);
    }
  });

  it('runs what the GPU forward lacks (masks, ablate) on wasm, saying so', async () => {
    const text = TEXTS[0];
    for (const options of [
      { masks: ['causal+local:2', 'causal'] },
      { ablate: [{ layer: 0, head: 1 }] },
    ]) {
      const [expected, actual] = [await wasm.run(text, options), await onGpu.run(text, options)];
      assert.equal(actual.backend, wasm.info.backend);
      assert.deepEqual(actual.attention, expected.attention);
    }
  });

  it('keeps working after bad calls, and runs calls one at a time', async () => {
    await rejectsWith(onGpu.run('x'.repeat(10), { topK: 0 }), {
      name: 'RangeError',
      code: 'out_of_range',
      parameter: 'topK',
    });
    await rejectsWith(onGpu.run('word '.repeat(40)), {
      name: 'RangeError',
      code: 'out_of_range',
      parameter: 'text',
    });
    await rejectsWith(onGpu.run(42), {
      name: 'TypeError',
      code: 'invalid_argument',
      parameter: 'text',
    });
    const [expected, ...together] = await Promise.all([
      wasm.run(TEXTS[0]),
      onGpu.run(TEXTS[0]),
      onGpu.run(TEXTS[1]),
      onGpu.run(TEXTS[0]),
    ]);
    assertSameRun(together[0], expected, 'concurrent first');
    assertSameRun(together[2], expected, 'concurrent third');
    const truncated = await onGpu.run('word '.repeat(40), { truncate: true });
    assert.equal(truncated.tokens.length, onGpu.info.maxPositions);
    assertSameRun(truncated, await wasm.run('word '.repeat(40), { truncate: true }), 'N = max');
  });

  it('generate() and headScores() still run (on wasm)', async () => {
    const options = { maxTokens: 3, temperature: 0 };
    assert.deepEqual(
      (await onGpu.generate('Hello', options)).ids,
      (await wasm.generate('Hello', options)).ids,
    );
  });
});

describe("the llama family on backend 'webgpu'", () => {
  // llama-untied: biases everywhere, llama3 rope scaling, an untied head, 2 K/V heads for 4;
  // qwen2: q/k/v biases only, tied; smollm2: 6 heads on 2 K/V heads, no biases.
  for (const name of ['llama-untied', 'qwen2', 'smollm2', 'stories260K']) {
    it(`${name} matches the wasm forward`, async () => {
      const source = name === 'stories260K' ? name : tinyModel(name);
      const reference = await loadModel(source);
      const model = await loadModel(source, { backend: 'webgpu', webgpu: { device } });
      try {
        assert.equal(model.info.backend, 'webgpu');
        const text = name === 'stories260K' ? 'Once upon a time, Lily saw a cat.' : TEXTS[2];
        const options = { returnLogits: true };
        const [expected, actual] = [
          await reference.run(text, options),
          await model.run(text, options),
        ];
        assert.equal(actual.backend, 'webgpu');
        const worst = assertSameRun(actual, expected, name);
        console.log(`# ${name}: N=${actual.tokens.length} max |attention diff| ${worst}`);
      } finally {
        reference.dispose();
        model.dispose();
      }
    });
  }
});

describe("vision transformers on backend 'webgpu'", () => {
  const vision = mkdtempSync(join(tmpdir(), 'attnlens-gpu-vision-'));
  const width = 60;
  const height = 45;
  const data = new Uint8ClampedArray(width * height * 4);
  before(() => {
    const repo = fileURLToPath(new URL('../../../', import.meta.url));
    execFileSync('/usr/bin/python3', [join(repo, 'tests/models/make_tiny_vit.py'), vision]);
    let state = 7;
    for (let i = 0; i < data.length; i++) {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      data[i] = state >>> 24;
    }
  });

  // vit: ViTForImageClassification (a classifier over 5 labels); dino-vit: ViTModel (none);
  // vit under dtype 'f16' / 'q8': its matrices halves / Q8_0 rows on the GPU, its class token and
  // positions f32.
  for (const [name, dtype] of [
    ['vit', 'f32'],
    ['dino-vit', 'f32'],
    ['vit', 'f16'],
    ['vit', 'q8'],
  ]) {
    it(`${name} (${dtype}) matches the wasm forward`, async () => {
      const reference = await loadModel(join(vision, name), { dtype });
      const model = await loadModel(join(vision, name), {
        dtype,
        backend: 'webgpu',
        webgpu: { device },
      });
      try {
        assert.equal(model.info.backend, 'webgpu');
        assert.match(model.info.backendReason, /returnPooled or returnHiddenStates/);
        const options = model.info.predicts ? { returnLogits: true } : {};
        const image = { data, width, height };
        const [expected, actual] = [
          await reference.run(image, options),
          await model.run(image, options),
        ];
        assert.equal(actual.backend, 'webgpu');
        // The GPU holds the weights in the model's dtype, as wasm does.
        assert.ok(model.info.gpuBytes < 1.1 * model.info.bytes, `${model.info.gpuBytes} bytes`);
        const worst = maxDifference(actual.attention, expected.attention, `${name}: attention`);
        assert.ok(worst <= ATTENTION_TOLERANCE, `${name}: attention differs by ${worst}`);
        if (expected.logits) {
          const logits = maxDifference(actual.logits, expected.logits, `${name}: logits`);
          assert.ok(logits <= LOGIT_TOLERANCE, `${name}: logits differ by ${logits}`);
        }
        assert.deepEqual(
          actual.labels?.map((l) => l.index),
          expected.labels?.map((l) => l.index),
        );
        console.log(`# ${name} ${dtype}: N=${actual.tokens} max |attention diff| ${worst}`);
        // A camera loop's buffer receives the GPU's maps, and the pixel values are the ones the
        // wasm forward would take.
        const buffer = new Float32Array(actual.attention.length).fill(Number.NaN);
        const into = await model.run(image, {
          attentionBuffer: buffer,
          returnPixelValues: true,
        });
        assert.equal(into.backend, 'webgpu');
        assert.equal(into.attention, buffer);
        assert.deepEqual(buffer, actual.attention);
        const wasmPixels = await reference.run(image, { returnPixelValues: true });
        assert.deepEqual(into.pixelValues, wasmPixels.pixelValues);
        // Hidden states come from the wasm forward, which says so.
        const states = await model.run(image, { returnHiddenStates: true });
        assert.equal(states.backend, wasm.info.backend);
      } finally {
        reference.dispose();
        model.dispose();
      }
    });
  }

  it('DINOv2 (layer scale, registers) is refused by name', async () => {
    for (const name of ['dinov2', 'dinov2-registers']) {
      await rejectsWith(loadModel(join(vision, name), { backend: 'webgpu', webgpu: { device } }), {
        name: 'RangeError',
        code: 'out_of_range',
        parameter: 'backend',
        message: /the WebGPU forward has no DINOv2 \(layer scale, registers\) yet/,
      });
    }
  });
});

describe('choosing the backend', () => {
  it("'auto' keeps wasm on a software adapter, and says why", async () => {
    const model = await loadModel(tinyModel('gpt2'), { backend: 'auto', webgpu: { gpu } });
    try {
      assert.equal(model.info.backend, wasm.info.backend);
      assert.match(model.info.backendReason, /^auto: no WebGPU forward \(.*software.*\): wasm$/);
      assert.equal((await model.run(TEXTS[0])).backend, wasm.info.backend);
    } finally {
      model.dispose();
    }
  });

  it("'auto' takes the GPU for runs of at least webgpu.minFlops", async () => {
    const model = await loadModel(tinyModel('gpt2'), {
      backend: 'auto',
      webgpu: { device, allowSoftwareAdapter: true, minFlops: 4e5 },
    });
    try {
      assert.equal(model.info.backend, 'webgpu');
      assert.match(model.info.backendReason, /^auto: run\(\) on .* from 400000 flops/);
      assert.equal((await model.run('a')).backend, wasm.info.backend);
      const long = await model.run(TEXTS[2]);
      assert.equal(long.backend, 'webgpu');
      assertSameRun(long, await wasm.run(TEXTS[2]), 'auto, long');
    } finally {
      model.dispose();
    }
    assert.ok(MODEL_WEBGPU_MIN_FLOPS > 4e5);
  });

  it("'webgpu' refuses an architecture it does not run yet, by name", async () => {
    const refusals = {
      bert: /'webgpu': the WebGPU forward runs gpt2, llama, vit so far, not bert; /,
      'gpt-neo': /'webgpu': the WebGPU forward runs gpt2, llama, vit so far, not gpt_neo; /,
      'qwen2-sliding': /'webgpu': the WebGPU forward has no sliding-window layers/,
    };
    for (const [name, message] of Object.entries(refusals)) {
      await rejectsWith(loadModel(tinyModel(name), { backend: 'webgpu', webgpu: { gpu } }), {
        name: 'RangeError',
        code: 'out_of_range',
        parameter: 'backend',
        message,
      });
    }
    const model = await loadModel(tinyModel('bert'), {
      backend: 'auto',
      webgpu: { gpu, allowSoftwareAdapter: true },
    });
    assert.match(
      model.info.backendReason,
      /^auto: the WebGPU forward runs gpt2, llama, vit so far/,
    );
    model.dispose();
  });

  it("'webgpu' without WebGPU, and bad options, are errors naming the option", async () => {
    await assert.rejects(loadModel(tinyModel('gpt2'), { backend: 'webgpu' }), (error) => {
      assert.equal(error.code, 'unavailable');
      assert.equal(error.parameter, 'backend');
      assert.match(error.message, /no navigator\.gpu/);
      return true;
    });
    await rejectsWith(loadModel(tinyModel('gpt2'), { backend: 'gpu' }), {
      name: 'RangeError',
      code: 'out_of_range',
      parameter: 'backend',
    });
    await rejectsWith(loadModel(tinyModel('gpt2'), { webgpu: { gpu } }), {
      name: 'TypeError',
      code: 'invalid_argument',
      parameter: 'webgpu',
    });
    await rejectsWith(loadModel(tinyModel('gpt2'), { backend: 'auto', webgpu: { minFlops: -1 } }), {
      name: 'RangeError',
      code: 'out_of_range',
      parameter: 'webgpu.minFlops',
    });
  });

  it("runs larger than the bindings go to wasm; weights larger refuse 'webgpu'", async () => {
    // The tiny GPT-2's largest weight, wte, is 377 x 24 floats: 36,192 bytes. The logits of 26
    // tokens (26 x 377 floats) no longer fit one binding of that size; those of 22 do.
    const model = await loadModel(tinyModel('gpt2'), {
      backend: 'webgpu',
      webgpu: { device, maxBufferBytes: 36192 },
    });
    try {
      const short = await model.run(TEXTS[0]);
      assert.equal(short.tokens.length, 22);
      assert.equal(short.backend, 'webgpu');
      const long = await model.run(TEXTS[2]);
      assert.equal(long.tokens.length, 26);
      assert.equal(long.backend, wasm.info.backend);
      assertSameRun(long, await wasm.run(TEXTS[2]), 'declined run');
      assert.equal(model.info.backend, 'webgpu', 'one declined run keeps the GPU forward');
    } finally {
      model.dispose();
    }
    await rejectsWith(
      loadModel(tinyModel('gpt2'), {
        backend: 'webgpu',
        webgpu: { device, maxBufferBytes: 36188 },
      }),
      {
        name: 'RangeError',
        code: 'out_of_range',
        parameter: 'backend',
        message: /token_embedding takes 36192 bytes, more than one WebGPU binding holds here/,
      },
    );
  });

  it('Q8_0 and 4-bit weights stay as they are on the GPU: the same dtype on wasm', async () => {
    // gpt2: Conv1D matrices, whose quantised rows are [out, in]; stories260K: its 172-wide down
    // projections stay f16 and its embedding f16, so three storages meet in one forward.
    for (const [name, dtype] of [
      ['gpt2', 'q8'],
      ['gpt2', 'q4'],
      ['llama-untied', 'q8'],
      ['stories260K', 'q4'],
    ]) {
      const source = name === 'stories260K' ? name : tinyModel(name);
      const reference = await loadModel(source, { dtype });
      const model = await loadModel(source, { dtype, backend: 'webgpu', webgpu: { device } });
      try {
        assert.match(model.info.backendReason, /weights \(widened to f32 as read\)/);
        assert.ok(model.info.gpuBytes < 1.1 * model.info.bytes, `${model.info.gpuBytes} bytes`);
        for (const text of TEXTS) {
          const options = { returnLogits: true, topK: 10 };
          const label = `${name} ${dtype} ${JSON.stringify(text)}`;
          const expected = await reference.run(text, options);
          // Up to 2 tokens wasm runs the one-row integer kernels, which round each row to 16
          // bits (src/models/int16_row.h); the GPU multiplies the f32 rows.
          const tolerance = expected.tokens.length <= 2 ? { attention: 5e-4, logits: 1e-2 } : {};
          const worst = assertSameRun(await model.run(text, options), expected, label, tolerance);
          console.log(`# ${label}: max |attention diff| ${worst}`);
        }
      } finally {
        reference.dispose();
        model.dispose();
      }
    }
  });

  it('f16 weights stay halves on the GPU: half the bytes, the f16 model on wasm', async () => {
    for (const name of ['gpt2', 'llama-untied']) {
      const half = await loadModel(tinyModel(name), { dtype: 'f16' });
      const [f32Gpu, halfGpu] = await Promise.all(
        ['f32', 'f16'].map((dtype) =>
          loadModel(tinyModel(name), { dtype, backend: 'webgpu', webgpu: { device } }),
        ),
      );
      try {
        assert.match(halfGpu.info.backendReason, /f16 weights \(halves, widened to f32 as read\)/);
        // Every matrix is halves; the norms and biases (a few hundred values) stay f32.
        const ratio = halfGpu.info.gpuBytes / f32Gpu.info.gpuBytes;
        console.log(
          `${name}: GPU weights f16 ${halfGpu.info.gpuBytes} bytes, f32 ${f32Gpu.info.gpuBytes}`,
        );
        assert.ok(ratio > 0.5 && ratio < 0.6, `${name}: f16 takes ${ratio} of f32's GPU bytes`);
        for (const text of TEXTS) {
          const options = { returnLogits: true, topK: 10 };
          const expected = await half.run(text, options);
          assertSameRun(await halfGpu.run(text, options), expected, `${name} f16 ${text}`);
        }
      } finally {
        for (const model of [half, f32Gpu, halfGpu]) model.dispose();
      }
    }
    // Storage 'f16' asked of an f32 model: its weights stay f32 on the GPU, and it says so.
    const model = await loadModel(tinyModel('gpt2'), {
      backend: 'webgpu',
      webgpu: { device, storage: 'f16' },
    });
    try {
      assert.match(model.info.backendReason, /f32 weights \(a model's GPU weights keep its dtype/);
    } finally {
      model.dispose();
    }
  });

  it('a lost device hands the runs to wasm', async () => {
    const own = await requestDevice();
    const model = await loadModel(tinyModel('gpt2'), {
      backend: 'webgpu',
      webgpu: { device: own },
    });
    try {
      assert.equal((await model.run(TEXTS[0])).backend, 'webgpu');
      own.destroy();
      await own.lost;
      const result = await model.run(TEXTS[0]);
      assert.equal(result.backend, wasm.info.backend);
      assertSameRun(result, await wasm.run(TEXTS[0]), 'after the loss');
      assert.equal(model.info.backend, wasm.info.backend);
      assert.match(model.info.backendReason, /device was lost.*wasm from then on/);
    } finally {
      model.dispose();
    }
  });

  it('a model whose engine instance was disposed refuses GPU runs too', async () => {
    const engine = await createAttention({ backend: 'wasm', models: true });
    const model = await loadModel(tinyModel('gpt2'), {
      attention: engine,
      backend: 'webgpu',
      webgpu: { device },
    });
    assert.equal((await model.run(TEXTS[1])).backend, 'webgpu');
    engine.dispose();
    await assert.rejects(model.run(TEXTS[1]), (error) => error.code === 'disposed');
    model.dispose();
  });

  it('dispose() during a GPU run rejects the run as disposed', async () => {
    const model = await loadModel(tinyModel('gpt2'), { backend: 'webgpu', webgpu: { device } });
    const running = model.run(TEXTS[2]);
    model.dispose();
    await assert.rejects(running, (error) => error.code === 'disposed');
  });
});
