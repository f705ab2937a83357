// The llama family through loadModel() and model.run(), against the independent PyTorch
// reference (tests/models/reference.py): SmolLM2's and Qwen2.5's layouts in miniature (bfloat16
// weights, tied heads, grouped K/V heads, Qwen2's biases), a llama with every option (untied
// lm_head, attention and MLP biases, its own head_dim, Llama 3.1's rope_scaling) and Qwen2's
// sliding windows, each from model.safetensors and pytorch_model.bin; every layer's and head's
// attention and the logits. Then config.json's llama fields and the memory check.
//
// Tolerances as models-run.test.js: attention abs 5e-6, logits abs 5e-5 + rel 2e-5.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAttention } from '../src/index.js';
import { loadModel } from '../src/models/index.js';
import {
  assertClose,
  referenceForward,
  rejectsWith,
  tinyModel,
  withConfig,
} from './support/tiny-models.mjs';

const ATTENTION_TOL = { abs: 5e-6 };
const LOGIT_TOL = { abs: 5e-5, rel: 2e-5 };
const TEXTS = ['The quick brown fox', 'Once upon a time there was a little girl named Lily.'];
const MODELS = [
  ['smollm2', ['safetensors', 'bin']],
  ['qwen2', ['safetensors', 'bin']],
  ['llama-untied', ['safetensors', 'bin']],
  ['qwen2-sliding', ['safetensors']],
];

let attention;
const runs = []; // { name, format, info, result }
let reference;

before(async () => {
  attention = await createAttention({ backend: 'wasm-simd', models: true });
  for (const [name, formats] of MODELS) {
    for (const format of formats) {
      const model = await loadModel(tinyModel(name, format), { attention });
      for (const text of TEXTS) {
        runs.push({
          name,
          format,
          info: model.info,
          result: await model.run(text, { returnLogits: true }),
        });
      }
      model.dispose();
    }
  }
  reference = referenceForward(
    runs.map(({ name, format, result }) => ({
      folder: tinyModel(name, format),
      ids: result.tokens.map((t) => t.id),
    })),
  );
});

after(() => {
  runs.length = 0;
  attention.dispose();
});

for (const [name, formats] of MODELS) {
  for (const format of formats) {
    test(`${name} from ${format}: each layer's and head's attention and the logits`, () => {
      const mine = runs.flatMap((run, i) =>
        run.name === name && run.format === format ? [{ run, expected: reference[i] }] : [],
      );
      assert.equal(mine.length, TEXTS.length);
      for (const { run, expected } of mine) {
        const { info, result } = run;
        const n = result.tokens.length;
        const dims = { layer: info.layers, head: info.heads, query: n, key: n };
        assertClose(result.attention, expected.attention, ATTENTION_TOL, `${name} attention`, dims);
        assertClose(result.logits, expected.logits, LOGIT_TOL, `${name} logits`, {
          position: n,
          token: info.vocab,
        });
        // The next-token predictions are the reference's best tokens after the last one.
        const last = expected.logits.slice((n - 1) * info.vocab, n * info.vocab);
        assert.equal(result.predictions[0].id, last.indexOf(Math.max(...last)));
      }
    });
  }
}

test('info: grouped K/V heads, head size, the core architecture and each layer own mask', () => {
  const info = (name) => runs.find((run) => run.name === name).info;
  const smol = info('smollm2');
  assert.equal(smol.architecture, 'llama');
  assert.equal(smol.modelType, 'llama');
  assert.deepEqual([smol.heads, smol.kvHeads, smol.headDim, smol.hidden], [6, 2, 8, 48]);
  assert.equal(smol.causal, true);
  assert.deepEqual(smol.layerMasks, ['causal', 'causal']);
  // Embeddings (tied: no lm_head) + 2 layers of norms, q, k, v, o, gate, up, down + the norm.
  const h = 48;
  const perLayer = 2 * h + h * h + 2 * (h * 16) + h * h + 3 * h * 64;
  assert.equal(smol.parameters, smol.vocab * h + 2 * perLayer + h);
  const qwen = info('qwen2');
  assert.equal(qwen.architecture, 'llama');
  assert.equal(qwen.modelType, 'qwen2');
  assert.deepEqual([qwen.heads, qwen.kvHeads, qwen.headDim], [4, 2, 8]);
  const untied = info('llama-untied');
  assert.equal(untied.headDim, 12); // its own head_dim: 4 heads of 12 over a width of 48
  assert.deepEqual(info('qwen2-sliding').layerMasks, ['causal', 'causal+local:2']);
});

test('Qwen2 sliding windows: a sliding layer sees the query and the two keys before it', () => {
  const { info, result } = runs.find((run) => run.name === 'qwen2-sliding');
  const n = result.tokens.length;
  const { heads } = info;
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const full = result.attention[((0 * heads + h) * n + i) * n + j];
        const sliding = result.attention[((1 * heads + h) * n + i) * n + j];
        if (j > i) assert.equal(full, 0);
        if (j > i || j <= i - 3) assert.equal(sliding, 0, `head ${h}, query ${i}, key ${j}`);
      }
    }
  }
});

test("dtype 'f16' on a bfloat16 checkpoint: half the bytes, the results within f16", async () => {
  const folder = tinyModel('qwen2');
  const f32 = await loadModel(folder, { attention });
  const f16 = await loadModel(folder, { dtype: 'f16', attention });
  assert.ok(f16.info.bytes < 0.6 * f32.info.bytes);
  const a = await f32.run(TEXTS[1], { returnLogits: true });
  const b = await f16.run(TEXTS[1], { returnLogits: true });
  // bfloat16's 8 significant bits fit in half's 11: only values below half's normal range round.
  assertClose(b.attention, a.attention, { abs: 1e-5 }, 'f16 attention');
  assertClose(b.logits, a.logits, { abs: 1e-4, rel: 1e-4 }, 'f16 logits');
  f32.dispose();
  f16.dispose();
});

const configError = (message, name = 'RangeError') => ({
  name,
  code: name === 'RangeError' ? 'out_of_range' : 'invalid_argument',
  parameter: 'config.json',
  message,
});

test('config.json: the llama fields are checked, each error naming its field', async () => {
  const load = (edit, name = 'qwen2') => loadModel(withConfig(name, edit), { attention });
  await rejectsWith(
    load((c) => ({ ...c, num_key_value_heads: 3 })),
    configError(/num_attention_heads \(4\) is not a multiple of num_key_value_heads \(3\)/),
  );
  await rejectsWith(
    load((c) => ({ ...c, head_dim: 7 })),
    configError(/head_dim 7 must be even/),
  );
  await rejectsWith(
    load((c) => ({ ...c, hidden_act: 'gelu' })),
    configError(/hidden_act 'gelu' is not supported \(supported: silu, swish\)/),
  );
  await rejectsWith(
    load((c) => ({ ...c, rope_scaling: { rope_type: 'yarn', factor: 4 } })),
    configError(
      /rope_scaling type 'yarn' is not supported \(supported: default, linear, dynamic, llama3\)/,
    ),
  );
  await rejectsWith(
    load((c) => ({ ...c, rope_scaling: { rope_type: 'llama3', factor: 8 } })),
    configError(/rope_scaling.low_freq_factor must be a positive number, got undefined/),
  );
  await rejectsWith(
    load((c) => ({ ...c, partial_rotary_factor: 0.5 })),
    configError(/partial_rotary_factor 0.5 is not supported/),
  );
  await rejectsWith(
    load((c) => ({ ...c, rope_theta: -1 })),
    configError(/rope_theta must be a positive number, got -1/),
  );
  await rejectsWith(
    load((c) => ({ ...c, use_sliding_window: true, layer_types: ['full_attention'] })),
    configError(
      /layer_types must list one of full_attention, sliding_attention per layer \(2\)/,
      'TypeError',
    ),
  );
  // tie_word_embeddings false on a tied checkpoint: its lm_head.weight is missing, by name.
  await rejectsWith(
    load((c) => ({ ...c, tie_word_embeddings: false })),
    {
      name: 'Error',
      code: 'not_found',
      parameter: 'lm_head.weight',
      message: /missing from the checkpoint/,
    },
  );
  // A head_dim of 16 where the checkpoint's heads have 8: the tensor and both shapes.
  await rejectsWith(
    load((c) => ({ ...c, head_dim: 16 })),
    {
      name: 'RangeError',
      code: 'shape_mismatch',
      parameter: 'model.layers.0.self_attn.q_proj.weight',
      message: /has shape \[32, 32\], but config.json implies \[64, 32\]/,
    },
  );
});

test('rope_parameters (newer config.json files) and dynamic scaling: the same RoPE', async () => {
  const run = async (edit) => {
    const model = await loadModel(withConfig('llama-untied', edit), { attention });
    const { logits } = await model.run(TEXTS[0], { returnLogits: true });
    model.dispose();
    return logits;
  };
  const plain = await run((c) => ({ ...c, rope_scaling: null }));
  const moved = await run(({ rope_theta, rope_scaling, ...c }) => ({
    ...c,
    rope_parameters: { rope_type: 'default', rope_theta },
  }));
  assert.deepEqual(moved, plain);
  // Dynamic NTK only changes the frequencies past max_position_embeddings.
  const dynamic = await run((c) => ({ ...c, rope_scaling: { type: 'dynamic', factor: 2.0 } }));
  assert.deepEqual(dynamic, plain);
  const linear = await run((c) => ({ ...c, rope_scaling: { type: 'linear', factor: 2.0 } }));
  assert.notDeepEqual(linear, plain);
});

test('a llama too large for wasm memory is refused before anything is allocated', async () => {
  // Qwen2.5-1.5B's config (1.54 billion parameters): 2.87 GiB even with f16 matrices. (The
  // 0.5B's decision, 1.84 GiB at f32 and 0.93 GiB at f16, is tested in the C++ suite.)
  const qwen15 = withConfig('qwen2', (c) => ({
    ...c,
    hidden_size: 1536,
    intermediate_size: 8960,
    num_hidden_layers: 28,
    num_attention_heads: 12,
    num_key_value_heads: 2,
    vocab_size: 151936,
  }));
  for (const dtype of ['f32', 'f16']) {
    await rejectsWith(loadModel(qwen15, { attention, dtype }), {
      name: 'RangeError',
      code: 'out_of_range',
      parameter: 'model',
      message: new RegExp(
        String.raw`needs \d+\.\d+ GiB \(1543714304 parameters, weights \d+\.\d+ GiB with ` +
          `matrices as ${dtype}.*more than the .* of memory available`,
      ),
    });
  }
  // The engine still runs models.
  const model = await loadModel(tinyModel('qwen2'), { attention });
  assert.equal((await model.run('hi')).predictions.length, 10);
  model.dispose();
});
