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
import { tinyModel, tinyModels } from './support/tiny-models.mjs';

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
