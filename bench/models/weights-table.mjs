#!/usr/bin/env node
// Download and memory per weight type for the curated models (curated-models.json: the demo's
// catalog and the GGUF models of issue 29), printed as the Markdown tables of docs/benchmarks.md,
// so the numbers come from config.json facts and the file formats and cannot drift:
//
//   memory    the weights in wasm memory as loadModel() allocates them for dtype f32, f16 and
//             q8: the core's own count (coreModelSize, what describeModel() reports), exact.
//             q4 too where the core has it (WEIGHT_DTYPES); until then an estimate: q8's layout
//             with every packed Q8_0 matrix (36 bytes per 32 weights) in the 4-bit panel form
//             (per 32 x 8 block 8 f32 scales, 8 f32 mins and 128 bytes of values: 24 bytes per 32).
//   download  computed from the parameters: safetensors f32 (4 bytes a weight) and f16 / bf16
//             (2), the header left out; for the llama-family models the GGUF files llama.cpp
//             writes (tensor data; the file adds its metadata, mostly the tokenizer, a few MB):
//             F16 (matrices f16, vectors f32), Q8_0 (matrices 34 bytes per 32 weights), Q4_0 as
//             llama-quantize makes it (matrices 18 bytes per 32; the output matrix, or the tied
//             embedding, Q6_K (210 per 256) where its rows are whole 256-blocks, else Q8_0);
//             beside them the sizes the Hub lists, where a listing was found (the JSON names it).
//
//   node bench/models/weights-table.mjs
import { readFileSync } from 'node:fs';
import { wasmBackendOf } from '../../web/src/attention.js';
import { createAttention } from '../../web/src/index.js';
import { architectureOf } from '../../web/src/models/architectures/index.js';
import { coreModelSize } from '../../web/src/models/core-model.js';
import { WEIGHT_DTYPES } from '../../web/src/models/model-block.js';

const { models } = JSON.parse(readFileSync(new URL('curated-models.json', import.meta.url)));
const Q8_PACKED = 36 / 32; // packed Q8_0 in wasm memory: 8 f32 scales + 256 int8 per 32x8 block
const Q4_PACKED = 24 / 32; // the 4-bit panel form in wasm memory
const Q4_0 = 18 / 32;
const Q8_0 = 34 / 32;
const Q6_K = 210 / 256;

const mb = (bytes) =>
  bytes >= 1e9
    ? `${(bytes / 1e9).toFixed(2)} GB`
    : `${(bytes / 1e6).toFixed(bytes < 1e8 ? 1 : 0)} MB`;
const mib = (bytes) =>
  bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(2)} GiB` : `${(bytes / 2 ** 20).toFixed(0)} MiB`;

/** A llama-family model's GGUF tensors: [{ name, rows, columns }] (columns 1: a vector). */
function llamaTensors(c) {
  const h = c.hidden_size;
  const d = c.head_dim ?? h / c.num_attention_heads;
  const q = c.num_attention_heads * d;
  const kv = c.num_key_value_heads * d;
  const inner = c.intermediate_size;
  const qwen2 = c.model_type === 'qwen2';
  const tensors = [{ name: 'token_embd', rows: c.vocab_size, columns: h }];
  for (let l = 0; l < c.num_hidden_layers; l++) {
    tensors.push(
      { name: 'attn_norm', rows: h, columns: 1 },
      { name: 'attn_q', rows: q, columns: h },
      { name: 'attn_k', rows: kv, columns: h },
      { name: 'attn_v', rows: kv, columns: h },
      { name: 'attn_output', rows: h, columns: q },
      { name: 'ffn_norm', rows: h, columns: 1 },
      { name: 'ffn_gate', rows: inner, columns: h },
      { name: 'ffn_up', rows: inner, columns: h },
      { name: 'ffn_down', rows: h, columns: inner },
    );
    if (qwen2) {
      tensors.push(
        { name: 'attn_q.bias', rows: q, columns: 1 },
        { name: 'attn_k.bias', rows: kv, columns: 1 },
        { name: 'attn_v.bias', rows: kv, columns: 1 },
      );
    }
  }
  tensors.push({ name: 'output_norm', rows: h, columns: 1 });
  if (!c.tie_word_embeddings) tensors.push({ name: 'output', rows: c.vocab_size, columns: h });
  if (c.rope_scaling?.rope_type === 'llama3')
    tensors.push({ name: 'rope_freqs', rows: d / 2, columns: 1 });
  return tensors;
}

/** Tensor-data bytes of a llama-family GGUF file of `type` ('F16', 'Q8_0' or 'Q4_0'). */
function ggufBytes(tensors, tied, type) {
  let bytes = 0;
  for (const t of tensors) {
    const n = t.rows * t.columns;
    if (t.columns === 1) bytes += 4 * n;
    else if (type === 'F16') bytes += 2 * n;
    else if (type === 'Q8_0') bytes += Q8_0 * n;
    else {
      const head = t.name === 'output' || (tied && t.name === 'token_embd');
      bytes += (head ? (t.columns % 256 === 0 ? Q6_K : Q8_0) : Q4_0) * n;
    }
  }
  return bytes;
}

const attention = await createAttention({ backend: 'wasm-simd', models: true });
const module = wasmBackendOf(attention, 'attention').module;
const memoryRows = [];
const downloadRows = [];
for (const { id, config, gguf, published = {} } of models) {
  const architecture = architectureOf(config);
  const size = (dtype) =>
    coreModelSize(module, { ...architecture.coreConfig(config, null), dtype });
  const [f32, f16, q8] = ['f32', 'f16', 'q8'].map(size);
  // The Q8_0 matrices' weights (panels padded to 8 columns): f16 keeps them at 2 bytes, q8 at 36/32.
  const q8Weights = (f16.weightBytes - q8.weightBytes) / (2 - Q8_PACKED);
  const q4 = WEIGHT_DTYPES.includes('q4')
    ? size('q4').weightBytes
    : q8.weightBytes - q8Weights * (Q8_PACKED - Q4_PACKED);
  const q4Cell = WEIGHT_DTYPES.includes('q4') ? mib(q4) : `≈ ${mib(q4)}`;
  const fits = (s) => (s.fits ? '' : ' (refused: over wasm32)');
  memoryRows.push(
    `| ${id} | ${(f32.parameters / 1e6).toFixed(1)}M | ${mib(f32.weightBytes)}${fits(f32)} | ` +
      `${mib(f16.weightBytes)}${fits(f16)} | ${mib(q8.weightBytes)}${fits(q8)} | ${q4Cell} |`,
  );
  const listed = Object.entries(published)
    .map(([file, { size: s }]) => `${file} ${s}`)
    .join('; ');
  let ggufCells = '| — |';
  if (gguf) {
    const tensors = llamaTensors(config);
    // rope_freqs (llama3 scaling) is computed from config.json, not a parameter.
    const counted = tensors
      .filter((t) => t.name !== 'rope_freqs')
      .reduce((sum, t) => sum + t.rows * t.columns, 0);
    if (counted !== f32.parameters) {
      throw new Error(
        `${id}: the GGUF tensor list has ${counted} weights, the core ${f32.parameters}`,
      );
    }
    const tied = config.tie_word_embeddings;
    ggufCells = `| ${['F16', 'Q8_0', 'Q4_0'].map((t) => mb(ggufBytes(tensors, tied, t))).join(' / ')} |`;
  }
  downloadRows.push(
    `| ${id} | ${mb(4 * f32.parameters)} / ${mb(2 * f32.parameters)} ${ggufCells} ${listed} |`,
  );
}
attention.dispose();

console.log('Download (computed from the parameters; MB = 10^6 bytes):\n');
console.log(
  '| model | safetensors f32 / f16 | GGUF F16 / Q8_0 / Q4_0 (tensor data) | the Hub lists |',
);
console.log('| --- | --- | --- | --- |');
console.log(downloadRows.join('\n'));
console.log('\nWeights in wasm memory (the core’s count; MiB = 2^20 bytes):\n');
console.log('| model | parameters | f32 | f16 | q8 | q4 (≈: estimated) |');
console.log('| --- | --- | --- | --- | --- | --- |');
console.log(memoryRows.join('\n'));
