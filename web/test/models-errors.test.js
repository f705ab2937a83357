// What loadModel() and model.run() do with bad input: each mistake gets the documented error
// (TypeError / RangeError with code and parameter, naming the problem), and a model that
// refused a call still runs the next one.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAttention } from '../src/index.js';
import { loadModel, SUPPORTED_MODEL_TYPES } from '../src/models/index.js';
import { rejectsWith, tinyModel, withConfig } from './support/tiny-models.mjs';

let attention;
let gpt2;
let bert;

before(async () => {
  attention = await createAttention({ backend: 'wasm-simd', models: true });
  gpt2 = await loadModel(tinyModel('gpt2'), { attention });
  bert = await loadModel(tinyModel('bert'), { attention });
});

after(() => {
  gpt2.dispose();
  bert.dispose();
  attention.dispose();
});

test('a text longer than the model is refused, or truncated when asked', async () => {
  const long = 'the quick brown fox jumps over the lazy dog '.repeat(6);
  await rejectsWith(gpt2.run(long), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'text',
    message: /more than the model's 32 positions \(max_position_embeddings\).*truncate: true/,
  });
  const cut = await gpt2.run(long, { truncate: true });
  assert.equal(cut.tokens.length, 32);
  assert.equal(cut.attention.length, 2 * 3 * 32 * 32);
  // BERT keeps its closing [SEP] when it cuts.
  const bertCut = await bert.run('the cat sat on the mat and the dog ran in the park '.repeat(3), {
    truncate: true,
  });
  assert.equal(bertCut.tokens.length, 24);
  assert.equal(bertCut.tokens.at(-1).text, '[SEP]');
  assert.equal(bertCut.tokens[0].text, '[CLS]');
});

test('run() options are checked: unknown keys, types, ranges, notation, pairs', async () => {
  await rejectsWith(gpt2.run('hi', { topk: 3 }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'options',
    message: /unknown option 'topk'/,
  });
  await rejectsWith(gpt2.run(42), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'text',
  });
  await rejectsWith(gpt2.run('hi', { topK: 0 }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'topK',
  });
  await rejectsWith(gpt2.run('hi', { topK: 1e6 }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'topK',
  });
  await rejectsWith(gpt2.run('hi', { projections: gpt2.info.layers }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'projections',
  });
  await rejectsWith(gpt2.run('hi', { projections: '1' }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'projections',
  });
  await rejectsWith(gpt2.run('hi', { returnLogits: 'yes' }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'returnLogits',
  });
  await rejectsWith(gpt2.run('hi', { masks: 'causal+lokal:2' }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'masks',
    message: /unknown part "lokal:2"/,
  });
  await rejectsWith(gpt2.run('hi', { masks: ['causal'] }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'masks',
    message: /one mask per layer \(2\), got 1/,
  });
  await rejectsWith(gpt2.run('hi', { masks: ['causal', 'causal+topk:2'] }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'masks[1]',
    message: /topk and lsh do not apply to a model's layers/,
  });
  await rejectsWith(gpt2.run('hi', { masks: ['causal', 7] }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'masks[1]',
  });
  await rejectsWith(gpt2.run('hi', { pair: 'there' }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'pair',
  });
  await rejectsWith(gpt2.run(''), { name: 'RangeError', code: 'out_of_range', parameter: 'text' });
  // Still usable after every refusal.
  const ok = await gpt2.run('The quick brown fox', { topK: 3 });
  assert.equal(ok.predictions.length, 3);
});

test('a BertModel checkpoint (no MLM head): attention, no predictions, no logits', async () => {
  const base = await loadModel(tinyModel('bert-base'), { attention });
  assert.equal(base.info.predicts, false);
  const run = await base.run('the cat [MASK] on the mat');
  assert.deepEqual(run.predictions, []);
  await rejectsWith(base.run('the cat', { returnLogits: true }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'returnLogits',
    message: /no masked-LM head/,
  });
  base.dispose();
});

test('loadModel options are checked before anything loads', async () => {
  await rejectsWith(loadModel(tinyModel('gpt2'), { dtpye: 'f16' }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'options',
    message: /unknown option 'dtpye'/,
  });
  await rejectsWith(loadModel(tinyModel('gpt2'), { dtype: 'bf16' }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'dtype',
  });
  await rejectsWith(loadModel(tinyModel('gpt2'), { attention: { backend: 'wasm' } }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'attention',
    message: /must be an instance from createAttention\(\)/,
  });
});

test('models need the module with their bindings, and say so before any download', async () => {
  const attentionOnly = await createAttention({ backend: 'wasm-simd' });
  let asked = false;
  const onProgress = () => (asked = true);
  await rejectsWith(loadModel(tinyModel('gpt2'), { attention: attentionOnly, onProgress }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'attention',
    message: /attention-only wasm module: create it with createAttention\(\{ models: true \}\)/,
  });
  assert.equal(asked, false, 'nothing was read');
  attentionOnly.dispose();
  await rejectsWith(createAttention({ models: 'yes' }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'models',
  });
  // A wasmUrl that names the attention-only module cannot serve { models: true }.
  const attentionWasm = new URL('../src/wasm/attnlens-simd.wasm', import.meta.url);
  await rejectsWith(
    createAttention({ backend: 'wasm-simd', models: true, wasmUrl: attentionWasm }),
    {
      name: 'TypeError',
      code: 'invalid_argument',
      parameter: 'wasmUrl',
      message: /wrong module/,
    },
  );
});

test('a tensor of a shape the config does not imply: the tensor and both shapes', async () => {
  await rejectsWith(loadModel(tinyModel('gpt2-bad-shape')), {
    name: 'RangeError',
    code: 'shape_mismatch',
    parameter: 'transformer.h.1.mlp.c_fc.weight',
    message: /has shape \[24, 40\], but config.json implies \[24, 96\]/,
  });
});

test('a missing tensor and a NaN weight are named by their checkpoint keys', async () => {
  await rejectsWith(loadModel(tinyModel('gpt2-missing')), {
    name: 'Error',
    code: 'not_found',
    parameter: 'transformer.h.0.ln_2.bias',
    message: /missing from the checkpoint/,
  });
  await rejectsWith(loadModel(tinyModel('gpt2-nan')), {
    name: 'RangeError',
    code: 'non_finite',
    parameter: 'transformer.h.1.attn.c_proj.weight',
    message: /transformer\.h\.1\.attn\.c_proj\.weight\[53\] is NaN/,
  });
});

test('config.json: an unknown model_type, and bad fields, are named', async () => {
  await rejectsWith(loadModel(withConfig('gpt2', (c) => ({ ...c, model_type: 'mamba' }))), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'model_type',
    message: new RegExp(
      `'mamba' is not supported \\(supported: ${SUPPORTED_MODEL_TYPES.join(', ')}\\)`,
    ),
  });
  await rejectsWith(loadModel(withConfig('gpt2', (c) => ({ ...c, n_head: 5 }))), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'config.json',
    message: /n_embd \(24\) is not a multiple of n_head \(5\)/,
  });
  await rejectsWith(
    loadModel(withConfig('gpt2', (c) => ({ ...c, activation_function: 'swish' }))),
    {
      name: 'RangeError',
      code: 'out_of_range',
      parameter: 'config.json',
      message: /activation_function 'swish' is not supported/,
    },
  );
  // A config with more layers than the checkpoint: the first missing tensor is named.
  await rejectsWith(loadModel(withConfig('gpt2', (c) => ({ ...c, n_layer: 3 }))), {
    name: 'Error',
    code: 'not_found',
    parameter: 'h.2.ln_1.weight',
  });
});

test('a model too large for wasm memory is refused before anything is allocated', async () => {
  // GPT-2 XL's widths at f32 (1.56 billion parameters, 5.8 GiB): the tiny checkpoint's tensors
  // never get read, the size check comes first.
  const huge = withConfig('gpt2', (c) => ({
    ...c,
    n_embd: 1600,
    n_head: 25,
    n_layer: 48,
    vocab_size: 50257,
  }));
  await rejectsWith(loadModel(huge, { attention }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'model',
    message: new RegExp(
      String.raw`needs \d+\.\d+ GiB \(1556024000 parameters.*more than the .* of memory ` +
        String.raw`available \(a wasm32 module addresses at most 2 GiB\); ` +
        'f16 storage halves the matrices',
    ),
  });
});

test('a disposed model refuses to run; so does one whose engine was disposed', async () => {
  const model = await loadModel(tinyModel('gpt-neo'), { attention });
  model.dispose();
  model.dispose(); // twice is fine
  await assert.rejects(model.run('hi'), /run: this model was disposed/);
  assert.throws(() => model.info, /info: this model was disposed/);
  // The shared engine outlives its models; a model outlived by its engine says so.
  const engine = await createAttention({ backend: 'wasm-scalar', models: true });
  const onScalar = await loadModel(tinyModel('gpt2'), { attention: engine });
  assert.equal(onScalar.info.backend, 'wasm-scalar');
  assert.equal((await onScalar.run('The quick brown fox')).predictions.length, 10);
  engine.dispose();
  await assert.rejects(
    onScalar.run('hi'),
    /run: the attention instance this model runs on was disposed/,
  );
  onScalar.dispose();
  // A model that opened its own engine closes it.
  const own = await loadModel(tinyModel('gpt2'));
  own.dispose();
});

test('models on one engine share its wasm memory and give it back when disposed', async () => {
  const engine = await createAttention({ backend: 'wasm-simd', models: true });
  const bytesInUse = () => engine.wasmMemoryBytes; // whole pages: grows, never shrinks
  const first = await loadModel(tinyModel('bert'), { attention: engine });
  first.dispose();
  const grown = bytesInUse();
  for (let i = 0; i < 5; i++) (await loadModel(tinyModel('bert'), { attention: engine })).dispose();
  assert.equal(bytesInUse(), grown, 'five more loads reuse the memory the first one freed');
  engine.dispose();
});
