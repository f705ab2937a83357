// What the tests of quantised weights share (models-q8, models-q4, models-gguf,
// models-gguf-fixtures). The accuracy cost, measured the same way by every test that prints it:
// top-5 agreement of the next-token predictions (the same set of five ids at a position) and the
// largest and mean differences of any attention weight, between two runs of the same texts. And
// the quantisers' (q8.js, q4.js) handling of a checkpoint's two matrix layouts and their refusals.

import assert from 'node:assert/strict';
import { loadModel } from '../../src/models/index.js';

// stories260K's kind of text, and text for the tiny fixtures' byte-level tokenizers.
export const STORY_TEXTS = [
  'Once upon a time, there was a little girl named Lily. She loved to play outside.',
  'Tom and his dog went to the park. They saw a big red ball and ran to get it.',
];
export const FIXTURE_TEXTS = [
  'Hello world, the cat sat on 12 mats.',
  ' two  spaces\nand café 你好 🐱!',
];

/** Each text's run with its logits, cut to the model's positions. */
export async function runTexts(model, texts) {
  const results = [];
  for (const text of texts) {
    results.push(await model.run(text, { returnLogits: true, truncate: true }));
  }
  return results;
}

/**
 * Runs `actual` against runs `expected` of the same texts (the same tokens, asserted): the share
 * of positions whose top-5 sets agree, the largest and the mean attention difference.
 */
export function compareRuns(actual, expected) {
  const vocab = expected[0].logits.length / expected[0].tokens.length;
  const top5 = (logits, row) =>
    [...logits.subarray(row * vocab, (row + 1) * vocab)]
      .map((value, id) => [value, id])
      .sort((x, y) => y[0] - x[0])
      .slice(0, 5)
      .map(([, id]) => id)
      .sort((x, y) => x - y)
      .join();
  let same = 0;
  let positions = 0;
  let max = 0;
  let sum = 0;
  let count = 0;
  expected.forEach((want, i) => {
    assert.deepEqual(actual[i].tokens, want.tokens);
    for (let row = 0; row < want.tokens.length; row++, positions++) {
      if (top5(actual[i].logits, row) === top5(want.logits, row)) same++;
    }
    want.attention.forEach((value, k) => {
      const d = Math.abs(value - actual[i].attention[k]);
      max = Math.max(max, d);
      sum += d;
      count++;
    });
  });
  return { top5: same / positions, attention: max, meanAttention: sum / count };
}

/**
 * Loads `source` as f32 and as `dtype` ('q8', 'q4'), runs `texts` on both and prints and returns
 * the comparison with the weights' bytes ({ f32, [dtype] }) and the dtype model's weight types.
 */
export async function measureDtype(attention, dtype, label, source, texts, options = {}) {
  const f32 = await loadModel(source, { attention, ...options });
  const quantized = await loadModel(source, { attention, dtype, ...options });
  assert.equal(quantized.info.dtype, dtype);
  const measured = compareRuns(await runTexts(quantized, texts), await runTexts(f32, texts));
  const bytes = { f32: f32.info.bytes, [dtype]: quantized.info.bytes };
  const types = quantized.info.weightTypes;
  f32.dispose();
  quantized.dispose();
  console.log(
    `${label} ${dtype} against f32: top-5 agreement ${measured.top5.toFixed(3)}, attention ` +
      `difference max ${measured.attention.toExponential(2)}, mean ` +
      `${measured.meanAttention.toExponential(2)}; weights ${bytes[dtype]} bytes ` +
      `(f32 ${bytes.f32}), ${dtype} ${types[dtype]?.bytes ?? 0} bytes in ` +
      `${types[dtype]?.tensors ?? 0} tensors`,
  );
  return { ...measured, bytes, types };
}

/**
 * Quantises with `quantize` (quantizeQ8_0, quantizeQ4_0) a 64 x 3 matrix of the integers -8..8
 * in Conv1D's layout [in, out] and in nn.Linear's [out, in] (into buffers of `bytesOf(elements)`),
 * asserts the same blocks from both, and that a depth of 48 and values whose scale overflows f16
 * (`overflowing`) are refused. Returns the [out, in] values and their blocks.
 */
export function checkQuantiserLayouts(quantize, bytesOf, overflowing) {
  const inFeatures = 64;
  const outFeatures = 3;
  const values = Float32Array.from({ length: inFeatures * outFeatures }, (_, i) => (i % 17) - 8);
  const transposed = new Float32Array(values.length);
  for (let p = 0; p < inFeatures; p++) {
    for (let o = 0; o < outFeatures; o++) {
      transposed[o * inFeatures + p] = values[p * outFeatures + o];
    }
  }
  const size = bytesOf(values.length);
  const a = new Uint8Array(size);
  const b = new Uint8Array(size);
  quantize(values, { inFeatures, outFeatures, transposed: false }, a, 'w');
  quantize(transposed, { inFeatures, outFeatures, transposed: true }, b, 'w');
  assert.deepEqual(a, b);
  assert.throws(() => quantize(new Float32Array(48), { inFeatures: 48, outFeatures: 1 }, a, 'w'), {
    name: 'TypeError',
    code: 'invalid_argument',
    message: /48 input features.*multiple of 32/,
  });
  assert.throws(
    () =>
      quantize(new Float32Array(32).fill(overflowing), { inFeatures: 32, outFeatures: 1 }, a, 'w'),
    { name: 'RangeError', code: 'out_of_range', message: /beyond f16's 65504/ },
  );
  return { transposed, blocks: b };
}
