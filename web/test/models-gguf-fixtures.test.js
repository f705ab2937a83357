// The suite's tiny llama (SmolLM2 layout, grouped-query heads), qwen2 (q/k/v biases) and gpt2
// fixtures written as GGUF files the way llama.cpp's convert_hf_to_gguf.py lays them out
// (tests/models/make_gguf.py: llama's q/k rows permuted to the interleaved rotary layout, GPT-2's
// Conv1D weights transposed, the tokenizer.json as "gpt2" BPE metadata with llama.cpp's
// pre-tokenizer names). The F32 GGUF must run exactly as the safetensors model (tokens with
// their offsets, attention, logits); F16, BF16, Q8_0 and Q4_0 are reported against it (top-5
// agreement, largest attention difference) and held to bounds. The fixtures' weights are
// bfloat16 (smollm2, qwen2), so BF16 is exact too; their matrices have rows of 24 to 64 values,
// so the 32-value block types quantise those whose rows are whole blocks and K-quants none.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { createAttention } from '../src/index.js';
import { loadModel, loadModelFiles } from '../src/models/index.js';
import { createTokenizer } from '../src/models/tokenizer.js';
import { parseForRewrite, writeGguf } from './support/gguf-writer.mjs';
import { compareRuns, FIXTURE_TEXTS as TEXTS, runTexts } from './support/quantized-weights.mjs';
import { rejectsWith, tinyModel, tinyModels, withConfig } from './support/tiny-models.mjs';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = ['smollm2', 'qwen2', 'gpt2'];
// Bounds on top-5 agreement and attention difference against F32 (the measured values print).
// The fixtures' weights are random: their next-token logits lie close together, so the top-5
// set is fragile under 4 bits (qwen2 Q4_0 measured 0.115); the attention bound carries Q4_0.
const BOUNDS = {
  f16: { top5: 0.9, attention: 0.01 },
  bf16: { top5: 0.75, attention: 0.05 },
  q8_0: { top5: 0.75, attention: 0.05 },
  q4_0: { top5: 0.05, attention: 0.3 },
};

let attention;
let work;

before(async () => {
  attention = await createAttention({ backend: 'wasm-simd', models: true });
  work = mkdtempSync(join(tmpdir(), 'attnlens-gguf-fixtures-'));
  execFileSync('/usr/bin/python3', [join(REPO, 'tests/models/make_gguf.py'), work, tinyModels()]);
});
after(() => attention?.dispose());

async function runAll(source) {
  const model = await loadModel(source, { attention });
  const results = await runTexts(model, TEXTS);
  model.dispose();
  return results;
}

for (const name of FIXTURES) {
  test(`${name} as GGUF: F32 exactly the safetensors model; other types against it`, async () => {
    const expected = await runAll(tinyModel(name));
    const f32 = await runAll(join(work, `${name}-f32.gguf`));
    f32.forEach((run, i) => {
      assert.deepEqual(run.tokens, expected[i].tokens, `${name} tokens of text ${i}`);
      assert.deepEqual(run.attention, expected[i].attention, `${name} attention of text ${i}`);
      assert.deepEqual(run.logits, expected[i].logits, `${name} logits of text ${i}`);
    });
    for (const [type, bound] of Object.entries(BOUNDS)) {
      const measured = compareRuns(await runAll(join(work, `${name}-${type}.gguf`)), f32);
      console.log(
        `${name} ${type.toUpperCase()} against F32: top-5 agreement ` +
          `${measured.top5.toFixed(3)}, max attention difference ` +
          `${measured.attention.toExponential(2)}`,
      );
      assert.ok(measured.top5 >= bound.top5, `${name} ${type} top-5 ${measured.top5}`);
      assert.ok(measured.attention <= bound.attention, `${name} ${type} ${measured.attention}`);
    }
  });
}

test("tokenizer.ggml.pre 'llama-bpe' (Llama 3): digits in runs of at most three", async () => {
  const model = parseForRewrite(readFileSync(join(work, 'qwen2-f32.gguf')));
  model.metadata = model.metadata.map(([k, v]) => [
    k,
    k === 'tokenizer.ggml.pre' ? 'llama-bpe' : v,
  ]);
  const files = await loadModelFiles([new File([writeGguf(model)], 'llama3-pre.gguf')]);
  const split = files.tokenizer.json.pre_tokenizer.pretokenizers[0];
  assert.match(split.pattern.Regex, /\|\\p\{N\}\{1,3\}\|/);
  const tokenizer = await createTokenizer(files.tokenizer);
  const text = '1234567 apples';
  const { tokens } = tokenizer.encode(text);
  assert.equal(tokens.map((t) => text.slice(t.start, t.end)).join(''), text);
  const starts = new Set(tokens.map((t) => t.start));
  for (const boundary of [3, 6]) assert.ok(starts.has(boundary), `a token starts at ${boundary}`);
  assert.ok(!tokens.some((t) => t.start < 3 && t.end > 3), 'no token crosses a run of three');
});

// Llama 3.1+ GGUFs carry rope_scaling as llama.cpp's converter writes it: rope_freqs.weight, one
// factor per inverse frequency. The tiny llama (head_dim 8) at Llama 3's rope_theta 500000 has
// one frequency of each kind (kept, smoothed, divided by the factor), so a file with those
// factors must run exactly as the safetensors model with config.json's llama3 rope_scaling.
const LLAMA3 = {
  rope_type: 'llama3',
  factor: 8,
  low_freq_factor: 1,
  high_freq_factor: 4,
  original_max_position_embeddings: 8192,
};

// The factors as convert_hf_to_gguf.py's LlamaModel computes them (written here, not imported).
function converterFactors(
  theta,
  headDim,
  { factor, low_freq_factor: low, high_freq_factor: high },
) {
  const factors = new Float32Array(headDim / 2);
  for (let i = 0; i < headDim / 2; i++) {
    const freq = 1 / theta ** ((2 * i) / headDim);
    const wavelen = (2 * Math.PI) / freq;
    if (wavelen < 8192 / high) factors[i] = 1;
    else if (wavelen > 8192 / low) factors[i] = factor;
    else {
      const smooth = (8192 / wavelen - low) / (high - low);
      factors[i] = 1 / ((1 - smooth) / factor + smooth);
    }
  }
  return factors;
}

function withRopeFreqs(factors, theta = 500000) {
  const model = parseForRewrite(readFileSync(join(work, 'smollm2-f32.gguf')));
  model.metadata = model.metadata.map(([k, v]) => [k, k === 'llama.rope.freq_base' ? theta : v]);
  const data = new Uint8Array(factors.buffer.slice(0));
  model.tensors.unshift({ name: 'rope_freqs.weight', dims: [factors.length], typeId: 0, data });
  return new File([writeGguf(model)], 'llama3-rope.gguf');
}

test("rope_freqs.weight (Llama 3.1+) is read as config.json's llama3 rope_scaling", async () => {
  const factors = converterFactors(500000, 8, LLAMA3);
  assert.deepEqual(Array.from(factors.map((f) => (f === 1 ? 1 : f === 8 ? 8 : 0))), [1, 1, 0, 8]);
  const files = await loadModelFiles([withRopeFreqs(factors)]);
  assert.deepEqual(files.config.rope_scaling, LLAMA3);
  const folder = withConfig('smollm2', (c) => ({ ...c, rope_theta: 500000, rope_scaling: LLAMA3 }));
  const expected = await runAll(folder);
  const unscaled = await runAll(withConfig('smollm2', (c) => ({ ...c, rope_theta: 500000 })));
  const actual = await runAll([withRopeFreqs(factors)]);
  actual.forEach((run, i) => {
    assert.deepEqual(run.attention, expected[i].attention, `attention of text ${i}`);
    assert.deepEqual(run.logits, expected[i].logits, `logits of text ${i}`);
  });
  assert.notDeepEqual(actual[0].attention, unscaled[0].attention, 'the scaling changes attention');
});

test("rope_freqs.weight that is not Llama 3's scaling is refused by name", async () => {
  const good = converterFactors(500000, 8, LLAMA3);
  const smoothed = Float32Array.from(good, (f, i) => (i === 2 ? f * 1.01 : f));
  const cases = [
    [smoothed, /rope_freqs\.weight is not Llama 3's rope scaling .* differs by 1\.0/],
    [good.subarray(0, 3).slice(), /rope_freqs\.weight must be 4 F32 values \(head_dim \/ 2\)/],
    [Float32Array.from(good, (f, i) => (i === 1 ? NaN : f)), /not a positive finite number/],
  ];
  for (const [factors, message] of cases) {
    await rejectsWith(loadModel([withRopeFreqs(factors)], { attention }), {
      name: 'TypeError',
      code: 'invalid_argument',
      parameter: 'llama3-rope.gguf',
      message,
    });
  }
  // The engine is usable after each refusal.
  const model = await loadModel([withRopeFreqs(good)], { attention });
  assert.equal(model.info.layers, 2);
  model.dispose();
});
