// dtype 'q4': linear layers kept as 4-bit blocks in wasm memory (src/models/q4.h). A GGUF's Q4_0
// and Q4_K blocks become the core's 4-bit rows with their values unchanged (checked bit for bit
// against gguf-types.js's dequantisation and make_gguf.py's reference values), so a Q4 GGUF
// under 'q4' runs the model it runs under 'f32' (dequantised on load); the Q4_0 quantiser writes
// the blocks of make_gguf.py's port of ggml's quantize_row_q4_0_ref; bad blocks are named errors
// that leave the engine usable; and the accuracy cost of quantising an f32 checkpoint to Q4_0 on
// load is printed on the real stories260K and the tiny fixtures (top-5 agreement of the next-token
// predictions and the largest difference of any attention weight).
//
// Bounds: a Q4 GGUF under 'q4' against the same file under 'f32' differs only where 'q4' keeps
// the embedding (and matrices whose depth is not a multiple of 32) in f16 and where the sums run
// in another order: f16's bound, as models-q8.test.js holds a Q8_0 GGUF under 'q8' (measured on
// wasm-simd: top-5 1.000 everywhere, attention within 4.6e-4 on stories260K, 2.0e-4 on the
// Q4_K llama, 3.9e-3 on the gpt2 fixture, 0 on smollm2 and qwen2). Quantising to Q4_0 rounds
// each weight to 4 bits of its block's largest value (up to 1/16 of it): the bounds there are
// the ones models-gguf.test.js and models-gguf-fixtures.test.js hold the Q4_0 GGUF files to
// (measured: stories260K top-5 0.379, attention 0.54; smollm2 0.656 / 0.050, qwen2 0.295 /
// 0.120, gpt2 0.800 / 0.201: the fixtures' random weights leave their logits near-tied).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { createAttention } from '../src/index.js';
import { describeModel, loadModel, loadModelFiles } from '../src/models/index.js';
import { readGgufHeader } from '../src/models/files/gguf.js';
import { dequantize } from '../src/models/files/gguf-types.js';
import { dequantizeQ4, q4Bytes, q4FromGguf, quantizeQ4_0 } from '../src/models/files/q4.js';
import {
  checkQuantiserLayouts,
  FIXTURE_TEXTS,
  measureDtype,
  STORY_TEXTS,
} from './support/quantized-weights.mjs';
import { tinyModel, tinyModels } from './support/tiny-models.mjs';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

let attention;
let work;
const gguf = (name) => join(work, name);

before(async () => {
  attention = await createAttention({ backend: 'wasm-simd', models: true });
  work = mkdtempSync(join(tmpdir(), 'attnlens-q4-'));
  execFileSync('/usr/bin/python3', [join(REPO, 'tests/models/make_gguf.py'), work, tinyModels()]);
});
after(() => attention?.dispose());

const measure = (label, source, texts, options) =>
  measureDtype(attention, 'q4', label, source, texts, options);

// The bits of each value, a zero's sign cleared: ggml's Q4_0 dequantisation (q - 8) * d gives -0
// for q = 8 where d < 0, s * q - m gives +0. The two are equal as numbers and give the same bits
// in every product sum (which starts at +0: +0 + -0 is +0), so that is the one difference allowed.
const bits = (array) =>
  Uint32Array.from(new Uint32Array(array.buffer, array.byteOffset, array.length), (b) =>
    b === 0x80000000 ? 0 : b,
  );

test('Q4_0 and Q4_K blocks become 4-bit rows of ggml dequantised values, bit for bit', () => {
  const bytes = new Uint8Array(readFileSync(gguf('types.gguf')));
  const reference = new Float32Array(new Uint8Array(readFileSync(gguf('types.f32'))).buffer);
  const header = readGgufHeader(bytes, 'types.gguf');
  let at = 0;
  let checked = 0;
  for (const tensor of header.tensors) {
    if (tensor.type === 'Q4_0' || tensor.type === 'Q4_K') {
      const raw = bytes.subarray(tensor.offset, tensor.offset + tensor.byteLength);
      const rows = q4FromGguf(raw, tensor.type, new Uint8Array(q4Bytes(tensor.count)));
      const ours = dequantizeQ4(rows);
      const want = reference.subarray(at, at + tensor.count);
      const js = dequantize(raw, tensor.type, tensor.count);
      assert.equal(
        bits(ours).findIndex((b, i) => b !== bits(want)[i]),
        -1,
        tensor.type,
      );
      assert.equal(
        bits(ours).findIndex((b, i) => b !== bits(js)[i]),
        -1,
        tensor.type,
      );
      checked++;
    }
    at += tensor.count;
  }
  assert.equal(checked, 2);
});

test('the Q4_0 quantiser writes the blocks of ggml quantize_row_q4_0_ref', async () => {
  const f32 = await loadModelFiles(gguf('stories260K-f32.gguf'));
  const q4 = await loadModelFiles(gguf('stories260K-q4_0.gguf'));
  let checked = 0;
  for (const name of f32.tensors.names) {
    const { shape } = f32.tensors.info(name);
    // The Q4_0 file keeps the tied embedding at Q8_0 (a head), which readQ4 would re-quantise.
    if (shape.length !== 2 || shape[1] % 32 !== 0 || name.includes('embed')) continue;
    const layout = { inFeatures: shape[1], outFeatures: shape[0], transposed: true };
    const size = q4Bytes(shape[0] * shape[1]);
    const ours = f32.tensors.readQ4(name, new Uint8Array(size), layout);
    const ggml = q4.tensors.readQ4(name, new Uint8Array(size), layout);
    assert.ok(Buffer.from(ours).equals(Buffer.from(ggml)), `${name}: the same Q4_0 blocks`);
    checked++;
  }
  assert.ok(checked >= 5 * 6, `${checked} matrices compared`);
});

test('the quantiser: a Conv1D [in, out] matrix as rows of [out, in]; refusals', () => {
  const { transposed, blocks: b } = checkQuantiserLayouts(quantizeQ4_0, q4Bytes, 1e6);
  // Integers -8..8 with -8 the largest magnitude: d = 1, so every value is exact.
  const back = dequantizeQ4(b);
  for (let i = 0; i < 32; i++) {
    if (transposed[i] !== 8) assert.equal(back[i], transposed[i], `value ${i}`);
  }
});

// A Q4 GGUF under 'q4' against the same file under 'f32' (its blocks dequantised on load).
async function sameFile(label, file, texts) {
  const m = await measure(label, gguf(file), texts);
  assert.ok(m.types.q4?.tensors > 0, `${label}: some tensors are 4-bit`);
  assert.ok(m.bytes.q4 < 0.5 * m.bytes.f32, `${label}: ${m.bytes.q4} of ${m.bytes.f32} bytes`);
  assert.ok(m.attention <= 5e-3, `${label}: attention difference ${m.attention}`);
  assert.ok(m.top5 >= 0.9, `${label}: top-5 agreement ${m.top5}`);
}

test("a Q4_0 GGUF (stories260K) under dtype 'q4' keeps its blocks: the model 'f32' runs", () =>
  sameFile('stories260K-q4_0.gguf', 'stories260K-q4_0.gguf', STORY_TEXTS));

test("decoding on the one-row 4-bit kernels: a Q4_0 GGUF continues as under 'f32'", async () => {
  // Each step after the prompt is one row: q4_panel_gemv, on the row rounded to 16 bits.
  const path = gguf('stories260K-q4_0.gguf');
  const stories = [];
  for (const dtype of ['f32', 'q4']) {
    const model = await loadModel(path, { attention, dtype });
    const story = await model.generate(STORY_TEXTS[0], { maxTokens: 24, returnLogits: true });
    stories.push(story);
    model.dispose();
  }
  const [f32, q4] = stories;
  assert.deepEqual(q4.ids, f32.ids);
  let max = 0;
  q4.tokens.forEach((token, i) => {
    token.logits.forEach((v, j) => (max = Math.max(max, Math.abs(v - f32.tokens[i].logits[j]))));
  });
  console.log(`stories260K-q4_0.gguf decoding under q4 against f32: logits within ${max}`);
  // Only the f16 embedding differs (as in the run() comparison above).
  assert.ok(max < 0.05, `largest logit difference ${max}`);
});

test("a Q4_K GGUF (wide llama, rows of 256) under dtype 'q4': the model 'f32' runs", () =>
  sameFile('wide-q4_k.gguf', 'wide-q4_k.gguf', STORY_TEXTS));

for (const name of ['smollm2', 'qwen2', 'gpt2']) {
  test(`tiny ${name} Q4_0 GGUF under dtype 'q4': the model 'f32' runs`, () =>
    sameFile(`${name}-q4_0.gguf`, `${name}-q4_0.gguf`, FIXTURE_TEXTS));
}

test("stories260K (the real bundled model) as Q4_0 on load: 'q4' against f32", async () => {
  const m = await measure('stories260K', 'stories260K', STORY_TEXTS);
  // Its down projections (172 inputs) are not whole blocks and stay f16, its embedding is f16.
  assert.ok(m.bytes.q4 < 0.4 * m.bytes.f32, `q4 takes ${m.bytes.q4} of ${m.bytes.f32} bytes`);
  assert.ok(m.top5 >= 0.2, `top-5 agreement ${m.top5}`);
  assert.ok(m.attention <= 0.7, `attention difference ${m.attention}`);
});

for (const name of ['smollm2', 'qwen2', 'gpt2']) {
  test(`tiny ${name} fixture quantised to Q4_0 on load: dtype 'q4' against f32`, async () => {
    const m = await measure(`tiny ${name}`, tinyModel(name), FIXTURE_TEXTS);
    assert.ok(m.bytes.q4 < m.bytes.f32);
    assert.ok(m.top5 >= 0.05, `top-5 agreement ${m.top5}`);
    assert.ok(m.attention <= 0.3, `attention difference ${m.attention}`);
  });
}

test("describeModel counts the memory 'q4' takes before loading; info.weightTypes", async () => {
  const about = await describeModel('stories260K', { attention, dtype: 'q4' });
  const q8 = await describeModel('stories260K', { attention, dtype: 'q8' });
  const model = await loadModel('stories260K', { attention, dtype: 'q4' });
  assert.equal(about.dtype, 'q4');
  assert.equal(about.memoryBytes, model.info.bytes);
  assert.ok(about.memoryBytes < q8.memoryBytes);
  // 5 layers of q, o [64, 64], k, v [32, 64], gate and up [172, 64] as 4-bit (64 inputs: 24
  // bytes per 32 values); the 172-wide down projections and the embedding f16; the norms f32.
  const { f32, f16, q4 } = model.info.weightTypes;
  assert.deepEqual(
    [q4.tensors, f16.tensors, f32.tensors],
    [30, 6, 11],
    JSON.stringify(model.info.weightTypes),
  );
  assert.equal(q4.bytes, (5 * 2 * (64 * 64 + 32 * 64 + 172 * 64) * 24) / 32);
  model.dispose();
});

// `file` with the first block of its first self-attention query matrix patched, written anew.
function withBlock(file, patch) {
  const bytes = new Uint8Array(readFileSync(gguf(file)));
  const tensor = readGgufHeader(bytes, file).tensors.find((t) => t.name === 'blk.0.attn_q.weight');
  patch(bytes, tensor.offset);
  const path = gguf(`bad-${file}`);
  writeFileSync(path, bytes);
  return { path, tensor };
}

test('bad 4-bit blocks are named errors, and the engine stays usable', async () => {
  // A NaN scale (half 0x7e00) in Q4_0's first block, a NaN dmin in Q4_K's first super-block.
  for (const [file, type, at] of [
    ['stories260K-q4_0.gguf', 'Q4_0', 0],
    ['wide-q4_k.gguf', 'Q4_K', 2],
  ]) {
    const { path, tensor } = withBlock(file, (bytes, offset) => {
      bytes[offset + at] = 0x00;
      bytes[offset + at + 1] = 0x7e;
    });
    assert.equal(tensor.type, type);
    await assert.rejects(loadModel(path, { attention, dtype: 'q4' }), (error) => {
      assert.equal(error.code, 'non_finite', error.message);
      assert.match(
        error.message,
        /q_proj\.weight: the (scale|min) of 4-bit block 0 \(row 0\) is NaN/,
      );
      return true;
    });
  }
  // A file cut inside its last tensor.
  const whole = readFileSync(gguf('stories260K-q4_0.gguf'));
  const cut = gguf('cut-q4_0.gguf');
  writeFileSync(cut, whole.subarray(0, whole.length - 100));
  await assert.rejects(loadModel(cut, { attention, dtype: 'q4' }), (error) => {
    assert.ok(['out_of_range', 'invalid_argument'].includes(error.code), error.message);
    assert.match(error.message, /past the end|truncated|bytes/);
    return true;
  });
  // The engine loads and runs the good file after.
  const model = await loadModel(gguf('stories260K-q4_0.gguf'), { attention, dtype: 'q4' });
  const result = await model.run(STORY_TEXTS[0]);
  assert.ok(result.attention.every(Number.isFinite));
  model.dispose();
});
