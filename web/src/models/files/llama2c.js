// llama2.c's checkpoint format (karpathy/llama2.c, run.c and export.py), read into what the
// rest of loadModel() reads: a llama config.json, tensors under the Hugging Face Llama names, and
// the tokenizer as a Llama-2-style tokenizer.json (llama2c-tokenizer.js).
//
//   version 0 ("legacy")  7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size,
//                         seq_len; vocab_size < 0: the classifier is stored, not shared), then
//                         float32: embedding, attention norms, wq, wk, wv, wo, FFN norms, w1, w2,
//                         w3 (each stacked over layers), final norm, two unused RoPE tables
//                         [seq_len, head_size / 2], and the classifier when not shared.
//   version 1             uint32 magic "ak42", int32 version, the 7 int32, uint8 shared
//                         classifier, zeros to 256 bytes; then float32: attention norms, FFN
//                         norms, final norm, embedding, wq, wk, wv, wo, w1, w2, w3, classifier.
//   version 2 (Q8_0)      version 1's header plus int32 group_size; float32 norms as version 1;
//                         then int8 embedding, wq, wk, wv, wo, w1, w2, w3 (classifier), and after
//                         all of them the float32 scale of every group of group_size values.
//
// Version 2 is dequantised on load (value = int8 * its group's scale, as runq.c reads it): the
// engine computes in float, so the weights it runs are exactly the ones the file stands for, at
// four times the file's size in memory. (runq.c also rounds each activation to int8 before a
// matmul; attnlens does not, so its numbers are the dequantised model's, not runq.c's.)
//
// run.c rotates interleaved pairs (2i, 2i+1) of each head; the Hugging Face layout the llama
// architecture reads rotates halves (i, i + head_size / 2). As llama2.c's export.py does, the
// rows of wq and wk are permuted once on load, which makes the two the same computation.
//
// Every size is computed from the header and checked against the file's length before anything
// is allocated: a header that claims more than the file holds is refused by the size it implies.

import { attnlensError } from '../../errors.js';

/** "ak42" read as a little-endian uint32: the first word of version 1 and 2 files. */
export const LLAMA2C_MAGIC = 0x616b3432;
const VERSIONED_HEADER_BYTES = 256;
const LEGACY_HEADER_BYTES = 28;
// run.c's RMSNorm epsilon and RoPE base (fixed in the format, not stored).
const RMS_NORM_EPS = 1e-5;
const ROPE_THETA = 10000;
// No dimension a real model has comes near this; anything above is a broken header.
const MAX_DIMENSION = 2 ** 24;

const HEADER_FIELDS = ['dim', 'hidden_dim', 'n_layers', 'n_heads', 'n_kv_heads', 'vocab_size'];

/** Is `bytes` (at least its first 4 bytes) the start of a version 1 or 2 file? */
export function hasLlama2cMagic(bytes) {
  return bytes.byteLength >= 4 && view(bytes).getUint32(0, true) === LLAMA2C_MAGIC;
}

const view = (bytes) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * The header of a llama2.c checkpoint: { version, dim, hiddenDim, layers, heads, kvHeads, vocab,
 * seqLen, sharedClassifier, groupSize, headerBytes, expectedBytes }, every field checked and the
 * file's length checked against the one the header implies.
 * @param {Uint8Array} bytes the whole file (or, to describe it, at least its header)
 * @param {string} file its name, for errors
 * @param {number} [fileBytes] the file's length when `bytes` is only its start
 */
export function readLlama2cHeader(bytes, file, fileBytes = bytes.byteLength) {
  const fail = (code, detail) => attnlensError(code, file, detail);
  const versioned = hasLlama2cMagic(bytes);
  const headerBytes = versioned ? VERSIONED_HEADER_BYTES : LEGACY_HEADER_BYTES;
  if (bytes.byteLength < headerBytes) {
    throw fail(
      'shape_mismatch',
      `is ${bytes.byteLength} bytes, shorter than a llama2.c header (${headerBytes} bytes)`,
    );
  }
  const data = view(bytes);
  const version = versioned ? data.getInt32(4, true) : 0;
  if (versioned && version !== 1 && version !== 2) {
    throw fail(
      'out_of_range',
      `is a llama2.c file of version ${version}; versions 0 (legacy), 1 and 2 are supported`,
    );
  }
  const base = versioned ? 8 : 0;
  const raw = {};
  [...HEADER_FIELDS, 'seq_len'].forEach((name, i) => {
    raw[name] = data.getInt32(base + 4 * i, true);
  });
  // The legacy header says "classifier stored separately" with a negative vocab_size.
  const sharedClassifier = versioned ? data.getUint8(base + 28) : raw.vocab_size > 0 ? 1 : 0;
  if (!versioned) raw.vocab_size = Math.abs(raw.vocab_size);
  for (const name of [...HEADER_FIELDS, 'seq_len']) {
    if (!(raw[name] >= 1 && raw[name] <= MAX_DIMENSION)) {
      throw fail(
        'out_of_range',
        `header field ${name} is ${raw[name]}, not a size between 1 and ${MAX_DIMENSION}`,
      );
    }
  }
  if (sharedClassifier > 1) {
    throw fail(
      'out_of_range',
      `header's shared-classifier flag is ${sharedClassifier}, not 0 or 1`,
    );
  }
  const { dim, n_heads: heads, n_kv_heads: kvHeads } = raw;
  if (dim % heads !== 0) {
    throw fail('out_of_range', `dim (${dim}) is not a multiple of n_heads (${heads})`);
  }
  if (heads % kvHeads !== 0) {
    throw fail('out_of_range', `n_heads (${heads}) is not a multiple of n_kv_heads (${kvHeads})`);
  }
  const headSize = dim / heads;
  if (headSize % 2 !== 0) {
    throw fail('out_of_range', `head size dim / n_heads = ${headSize} must be even (RoPE pairs)`);
  }
  let groupSize = 0;
  if (version === 2) {
    groupSize = data.getInt32(base + 29, true);
    if (!(groupSize >= 1 && groupSize <= dim && dim % groupSize === 0)) {
      throw fail(
        'out_of_range',
        `header's group_size is ${groupSize}, not a divisor of dim (${dim}) as export.py writes`,
      );
    }
  }
  const header = {
    version,
    dim,
    hiddenDim: raw.hidden_dim,
    layers: raw.n_layers,
    heads,
    kvHeads,
    headSize,
    vocab: raw.vocab_size,
    seqLen: raw.seq_len,
    sharedClassifier: sharedClassifier === 1,
    groupSize,
    headerBytes,
  };
  // Checked before any per-layer list is made: a header claiming 2^24 layers is refused here.
  header.expectedBytes = fileBytesOf(header);
  if (fileBytes !== header.expectedBytes) {
    throw fail(
      'shape_mismatch',
      `is ${fileBytes} bytes, but its header (version ${version}, dim ${dim}, ` +
        `hidden_dim ${header.hiddenDim}, ${header.layers} layers, vocab ${header.vocab}, ` +
        `seq_len ${header.seqLen}) implies ${bytesText(header.expectedBytes)} bytes`,
    );
  }
  return header;
}

const bytesText = (bytes) =>
  Number.isSafeInteger(bytes) ? String(bytes) : `about ${bytes.toExponential(2)}`;

// The file length a header implies, computed in doubles: exact up to 2^53, and a header past that
// implies more than any file holds. export.py makes version 2's group_size divide dim, and every
// matrix has dim as one side, so every tensor is whole groups.
function fileBytesOf({
  version,
  dim,
  hiddenDim,
  layers,
  heads,
  kvHeads,
  headSize,
  vocab,
  seqLen,
  sharedClassifier,
  groupSize,
  headerBytes,
}) {
  const norms = (2 * layers + 1) * dim;
  const classifier = sharedClassifier ? 0 : vocab * dim;
  const matrices =
    vocab * dim +
    layers * (2 * heads * headSize * dim + 2 * kvHeads * headSize * dim + 3 * hiddenDim * dim) +
    classifier;
  if (version === 2) return headerBytes + 4 * norms + matrices + (4 * matrices) / groupSize;
  const ropeTables = version === 0 ? seqLen * headSize : 0;
  return headerBytes + 4 * (norms + matrices + ropeTables);
}

// The tensors in file order, as { name, shape, count, offset } (offsets in bytes; version 2's
// int8 tensors also have scaleOffset: their scales follow them all). Only for a header whose
// length was checked.
function tensorLayout(header) {
  const { dim, hiddenDim, layers, heads, kvHeads, headSize, vocab, seqLen } = header;
  const kvDim = kvHeads * headSize;
  const perLayer = (name, shape) =>
    Array.from({ length: layers }, (_, l) => ({ name: `model.layers.${l}.${name}`, shape }));
  const attentionNorms = perLayer('input_layernorm.weight', [dim]);
  const ffnNorms = perLayer('post_attention_layernorm.weight', [dim]);
  const finalNorm = [{ name: 'model.norm.weight', shape: [dim] }];
  const embedding = [{ name: 'model.embed_tokens.weight', shape: [vocab, dim] }];
  const matrices = [
    ...perLayer('self_attn.q_proj.weight', [heads * headSize, dim]),
    ...perLayer('self_attn.k_proj.weight', [kvDim, dim]),
    ...perLayer('self_attn.v_proj.weight', [kvDim, dim]),
    ...perLayer('self_attn.o_proj.weight', [dim, heads * headSize]),
  ];
  const mlp = [
    ...perLayer('mlp.gate_proj.weight', [hiddenDim, dim]), // w1
    ...perLayer('mlp.down_proj.weight', [dim, hiddenDim]), // w2
    ...perLayer('mlp.up_proj.weight', [hiddenDim, dim]), // w3
  ];
  const classifier = header.sharedClassifier
    ? []
    : [{ name: 'lm_head.weight', shape: [vocab, dim] }];
  const ropeTables = [
    { name: 'freq_cis_real', shape: [seqLen, headSize / 2], unused: true },
    { name: 'freq_cis_imag', shape: [seqLen, headSize / 2], unused: true },
  ];
  let order;
  let quantized = [];
  if (header.version === 0) {
    const split = (list) => [0, 1, 2, 3].map((k) => list.slice(k * layers, (k + 1) * layers));
    const [wq, wk, wv, wo] = split(matrices);
    const [w1, w2, w3] = split(mlp);
    order = [
      ...embedding,
      ...attentionNorms,
      ...wq,
      ...wk,
      ...wv,
      ...wo,
      ...ffnNorms,
      ...w1,
      ...w2,
      ...w3,
      ...finalNorm,
      ...ropeTables,
      ...classifier,
    ];
  } else if (header.version === 1) {
    order = [
      ...attentionNorms,
      ...ffnNorms,
      ...finalNorm,
      ...embedding,
      ...matrices,
      ...mlp,
      ...classifier,
    ];
  } else {
    order = [...attentionNorms, ...ffnNorms, ...finalNorm];
    quantized = [...embedding, ...matrices, ...mlp, ...classifier];
  }
  let offset = header.headerBytes;
  const place = (tensor, bytesPerValue) => {
    tensor.count = tensor.shape.reduce((a, b) => a * b, 1);
    tensor.offset = offset;
    offset += tensor.count * bytesPerValue;
  };
  for (const tensor of order) place(tensor, 4);
  for (const tensor of quantized) place(tensor, 1);
  for (const tensor of quantized) {
    tensor.scaleOffset = offset;
    offset += (tensor.count / (header.groupSize || 1)) * 4;
  }
  return [...order, ...quantized];
}

/**
 * A llama2.c checkpoint as loadModelFiles' parts: { header, config, entries } where `config` is
 * the config.json of the same model in the Hugging Face Llama layout and `entries` the
 * TensorSet entries under its names (F32; wq and wk permuted to rotate_half order; version 2
 * dequantised).
 */
export function readLlama2cCheckpoint(bytes, file) {
  const header = readLlama2cHeader(bytes, file);
  const tensors = tensorLayout(header);
  const entries = [];
  for (const tensor of tensors) {
    if (tensor.unused) continue;
    let values =
      header.version === 2
        ? dequantize(bytes, tensor, header.groupSize)
        : floats(bytes, tensor.offset, tensor.count);
    if (tensor.name.endsWith('q_proj.weight') || tensor.name.endsWith('k_proj.weight')) {
      values = toRotateHalf(values, tensor.shape, header.headSize);
    }
    entries.push({
      name: tensor.name,
      dtype: 'F32',
      shape: tensor.shape,
      file,
      bytes: new Uint8Array(values.buffer, values.byteOffset, values.byteLength),
    });
  }
  return { header, config: llamaConfig(header), entries };
}

/** The config.json of a llama2.c model, as the transformers library would write it. */
export function llamaConfig(header) {
  return {
    model_type: 'llama',
    architectures: ['LlamaForCausalLM'],
    hidden_size: header.dim,
    intermediate_size: header.hiddenDim,
    num_hidden_layers: header.layers,
    num_attention_heads: header.heads,
    num_key_value_heads: header.kvHeads,
    vocab_size: header.vocab,
    max_position_embeddings: header.seqLen,
    rms_norm_eps: RMS_NORM_EPS,
    rope_theta: ROPE_THETA,
    hidden_act: 'silu',
    tie_word_embeddings: header.sharedClassifier,
    bos_token_id: 1,
    eos_token_id: 2,
  };
}

// float32 values at a byte offset: a view where it is 4-aligned (versions 0 and 1 always are),
// else a copy (version 2's scales follow int8 blocks of any length).
function floats(bytes, offset, count) {
  const at = bytes.byteOffset + offset;
  if (at % 4 === 0) return new Float32Array(bytes.buffer, at, count);
  return new Float32Array(bytes.slice(offset, offset + count * 4).buffer);
}

function dequantize(bytes, tensor, groupSize) {
  if (tensor.scaleOffset === undefined) return floats(bytes, tensor.offset, tensor.count);
  const values = new Int8Array(bytes.buffer, bytes.byteOffset + tensor.offset, tensor.count);
  const scales = floats(bytes, tensor.scaleOffset, tensor.count / groupSize);
  const out = new Float32Array(tensor.count);
  for (let g = 0; g < scales.length; g++) {
    const scale = scales[g];
    for (let i = g * groupSize, end = i + groupSize; i < end; i++) out[i] = values[i] * scale;
  }
  return out;
}

// Row r = h * headSize + 2i + p (run.c's interleaved pairs) moves to h * headSize +
// p * headSize / 2 + i (the rotate_half layout), as export.py's permute for Hugging Face.
function toRotateHalf(values, [rows, columns], headSize) {
  const out = new Float32Array(values.length);
  const half = headSize / 2;
  for (let r = 0; r < rows; r++) {
    const head = Math.floor(r / headSize);
    const within = r % headSize;
    const target = head * headSize + (within % 2) * half + (within >> 1);
    out.set(values.subarray(r * columns, (r + 1) * columns), target * columns);
  }
  return out;
}
