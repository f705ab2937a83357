// model.run() against the independent PyTorch reference (tests/models/reference.py): every
// architecture, both GPT-2 layouts, old BERT names and a BertModel without a head, each from
// model.safetensors and from pytorch_model.bin; every layer's and head's attention and the
// logits of every position. Mask overrides, f16 storage and the info are checked here too.
//
// Tolerances (float32 kernels against float64 torch, 2-3 layers, activations O(1)):
// attention weights abs 5e-6, logits abs 5e-5 + rel 2e-5 (measured worst: a seventh of these).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAttention } from '../src/index.js';
import { loadModel } from '../src/models/index.js';
import { assertClose, referenceForward, tinyModel } from './support/tiny-models.mjs';

const ATTENTION_TOL = { abs: 5e-6 };
const LOGIT_TOL = { abs: 5e-5, rel: 2e-5 };
const PROJECTION_TOL = { abs: 5e-5, rel: 2e-5 };
// The layer whose q, k and v every run also returns (each tiny model has at least two).
const PROJECTED_LAYER = 1;

const GPT_TEXTS = ['The quick brown fox', 'Once upon a time there was a little girl named Lily.'];
const BERT_TEXTS = [
  { text: 'the cat [MASK] on the mat' },
  { text: 'the first sentence', pair: 'the [MASK] sentence' },
];
const MODELS = ['gpt2', 'gpt2-lmhead', 'gpt-neo', 'bert', 'bert-gamma', 'bert-base'];
// One engine for every model (the same bits in Node and Chromium: no relaxed FMA).
let attention;

const runs = []; // { name, format, model info, case, result }
let reference;

before(async () => {
  attention = await createAttention({ backend: 'wasm-simd', models: true });
  for (const name of MODELS) {
    for (const format of ['safetensors', 'bin']) {
      const model = await loadModel(tinyModel(name, format), { attention });
      const inputs = name.startsWith('bert') ? BERT_TEXTS : GPT_TEXTS.map((text) => ({ text }));
      for (const input of inputs) {
        const options = input.pair ? { pair: input.pair } : {};
        options.projections = PROJECTED_LAYER;
        if (model.info.predicts) options.returnLogits = true;
        const result = await model.run(input.text, options);
        runs.push({ name, format, info: model.info, input, result });
      }
      model.dispose();
    }
  }
  reference = referenceForward(
    runs.map(({ name, format, result, info }) => ({
      folder: tinyModel(name, format),
      ids: result.tokens.map((t) => t.id),
      types: info.causal ? null : result.tokens.map((t) => t.segment),
      projections: PROJECTED_LAYER,
    })),
  );
});

for (const name of MODELS) {
  for (const format of ['safetensors', 'bin']) {
    test(`${name} from ${format}: every head's attention, the logits, a layer's q, k, v`, () => {
      const cases = runs.map((run, i) => ({ run, expected: reference[i] }));
      const mine = cases.filter(({ run }) => run.name === name && run.format === format);
      assert.ok(mine.length > 0);
      for (const { run, expected } of mine) {
        const { info, result } = run;
        const n = result.tokens.length;
        const dims = { layer: info.layers, head: info.heads, query: n, key: n };
        assertClose(result.attention, expected.attention, ATTENTION_TOL, `${name} attention`, dims);
        const { projections } = result;
        assert.equal(projections.layer, PROJECTED_LAYER);
        assert.equal(projections.headDim, info.hidden / info.heads);
        const qkv = Float32Array.from([...projections.q, ...projections.k, ...projections.v]);
        assertClose(qkv, expected.projections, PROJECTION_TOL, `${name} q, k, v`, {
          part: 3,
          head: info.heads,
          token: n,
          dim: projections.headDim,
        });
        const unscaled = info.modelType === 'gpt_neo';
        assert.equal(
          projections.scale,
          Math.fround(unscaled ? 1 : 1 / Math.sqrt(projections.headDim)),
        );
        if (!info.predicts) {
          assert.equal(expected.logits, null);
          assert.deepEqual(result.predictions, []);
          continue;
        }
        assertClose(result.logits, expected.logits, LOGIT_TOL, `${name} logits`, {
          position: n,
          token: info.vocab,
        });
        checkPredictions(run, expected.logits);
      }
    });
  }
}

// The predictions are the reference's most likely tokens, with its softmax probabilities.
function checkPredictions({ info, result }, logits) {
  const n = result.tokens.length;
  const row = (position) => logits.slice(position * info.vocab, (position + 1) * info.vocab);
  const check = (top, position) => {
    const values = row(position);
    const max = Math.max(...values);
    const sum = values.reduce((s, x) => s + Math.exp(x - max), 0);
    assert.equal(top.length, 10);
    const best = values.indexOf(max);
    assert.equal(top[0].id, best);
    for (const { id, p } of top) assert.ok(Math.abs(p - Math.exp(values[id] - max) / sum) < 1e-4);
    for (let i = 1; i < top.length; i++) assert.ok(top[i].p <= top[i - 1].p);
  };
  if (info.causal) {
    check(result.predictions, n - 1);
  } else {
    const masks = result.tokens.flatMap((t, i) => (t.text === '[MASK]' ? [i] : []));
    assert.deepEqual(
      result.predictions.map((p) => p.position),
      masks,
    );
    for (const { position, top } of result.predictions) check(top, position);
  }
}

test('a BERT text pair gets token types 0 then 1, as the tokenizer template says', () => {
  const run = runs.find((r) => r.name === 'bert' && r.input.pair);
  const segments = run.result.tokens.map((t) => t.segment);
  const firstSep = run.result.tokens.findIndex((t) => t.text === '[SEP]');
  assert.ok(firstSep > 0);
  assert.deepEqual(segments.slice(0, firstSep + 1), Array(firstSep + 1).fill(0));
  assert.ok(segments.slice(firstSep + 1).every((s) => s === 1));
});

test('mask overrides change attention and predictions, and match the reference', async () => {
  const folder = tinyModel('gpt-neo');
  const model = await loadModel(folder, { attention });
  const text = 'Once upon a time there was a little girl named Lily.';
  const own = await model.run(text);
  const one = await model.run(text, { masks: 'causal+local:1', returnLogits: true });
  const perLayer = ['causal', 'causal+local:1', 'global'];
  const each = await model.run(text, { masks: perLayer, returnLogits: true });
  const ids = own.tokens.map((t) => t.id);
  const [refOne, refEach] = referenceForward([
    { folder, ids, masks: Array(model.info.layers).fill('causal+local:1') },
    { folder, ids, masks: perLayer },
  ]);
  assertClose(one.attention, refOne.attention, ATTENTION_TOL, 'one mask: attention');
  assertClose(one.logits, refOne.logits, LOGIT_TOL, 'one mask: logits');
  assertClose(each.attention, refEach.attention, ATTENTION_TOL, 'per layer: attention');
  assertClose(each.logits, refEach.logits, LOGIT_TOL, 'per layer: logits');
  // Query i may now look at most one token back: everything before i - 1 is exactly 0.
  const n = ids.length;
  for (let h = 0; h < model.info.layers * model.info.heads; h++) {
    for (let i = 2; i < n; i++) {
      for (let j = 0; j < i - 1; j++) assert.equal(one.attention[(h * n + i) * n + j], 0);
    }
  }
  assert.notDeepEqual(one.attention, own.attention);
  assert.notDeepEqual(
    one.predictions.map((p) => p.p),
    own.predictions.map((p) => p.p),
  );
  model.dispose();
});

test("info: sizes, parameters, bytes and each layer's own mask in the mask notation", async () => {
  const neo = await loadModel(tinyModel('gpt-neo', 'bin'), { attention });
  assert.deepEqual(neo.info.layerMasks, ['causal', 'causal+local:2', 'causal']);
  assert.equal(neo.info.architecture, 'gpt_neo');
  assert.equal(neo.info.layers, 3);
  assert.equal(neo.info.heads, 2);
  assert.equal(neo.info.hidden, 16);
  assert.equal(neo.info.maxPositions, 32);
  // wte + wpe + 3 layers of (2 norms, q/k/v/out, MLP 16 -> 64 -> 16) + ln_f
  const h = 16;
  const perLayer = 4 * h + 4 * h * h + h + (h * 4 * h + 4 * h) + (4 * h * h + h);
  assert.equal(neo.info.parameters, 377 * h + 32 * h + 3 * perLayer + 2 * h);
  assert.equal(neo.info.bytes, 4 * neo.info.parameters);
  neo.dispose();
  const bert = await loadModel(tinyModel('bert'), { attention });
  assert.deepEqual(bert.info.layerMasks, ['global', 'global']);
  assert.equal(bert.info.causal, false);
  bert.dispose();
});

test("dtype 'f16' halves the matrices and stays within f16's rounding of f32", async () => {
  const folder = tinyModel('gpt2-lmhead');
  const f32 = await loadModel(folder, { attention });
  const f16 = await loadModel(folder, { dtype: 'f16', attention });
  assert.equal(f16.info.dtype, 'f16');
  assert.ok(f16.info.bytes < 0.6 * f32.info.bytes);
  const text = GPT_TEXTS[1];
  const a = await f32.run(text, { returnLogits: true });
  const b = await f16.run(text, { returnLogits: true });
  // Every weight rounded to half (up to 2^-12 relative) moves attention by up to ~2e-3 here.
  assertClose(b.attention, a.attention, { abs: 5e-3 }, 'f16 attention');
  assertClose(b.logits, a.logits, { abs: 2e-2, rel: 1e-2 }, 'f16 logits');
  assert.equal(b.predictions[0].id, a.predictions[0].id);
  f32.dispose();
  f16.dispose();
});

after(() => {
  runs.length = 0;
  attention.dispose();
});
