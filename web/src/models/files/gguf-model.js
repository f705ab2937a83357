// A GGUF model as what the rest of loadModel() reads: the config.json of the same model (from
// the `<arch>.*` metadata), its tensors under the Hugging Face names of the llama, qwen2 and gpt2
// architectures (web/src/models/architectures/), and its tokenizer (gguf-tokenizer.js).
//
// What llama.cpp's convert_hf_to_gguf.py changes, undone here so the forward pass is the
// original model's:
// - llama: q and k rows (weights and biases) are permuted into Meta's interleaved rotary layout
//   (LlamaModel.permute: per head, reshape (2, head_dim / 2) -> swap -> flatten, so Hugging Face
//   row p * head_dim / 2 + i is stored at row 2i + p). Each head's rows are put back in the
//   rotate_half order the llama architecture computes, as llama2c.js does for run.c's layout.
//   qwen2 is not permuted (its rotation is NEOX-style, rotate_half already).
// - gpt2: Conv1D weights [in, out] are stored transposed, [out, in]; they are read back through
//   strides.
// Quantised tensors are dequantised when the model reads them (gguf-types.js), one at a time,
// so the file and one tensor's floats are all that is held besides the model; under dtype 'q8'
// a Q8_0 tensor, and under 'q4' a Q4_0 or Q4_K one, is handed to the core as blocks instead.

import { attnlensError, describe } from '../../errors.js';
import { dequantize, GGUF_READ_TYPES, isQuantized } from './gguf-types.js';
import { ggufTokenizerFiles } from './gguf-tokenizer.js';
import { Q4_GGUF_TYPES } from './q4.js';
import { readGgufHeader } from './gguf.js';

/** The values of general.architecture that load. */
export const GGUF_ARCHITECTURES = Object.freeze(['llama', 'qwen2', 'gpt2']);

// GGUF tensor names (per layer, after "blk.N.") -> the Hugging Face names, per architecture.
const LLAMA_LAYER = {
  attn_norm: 'input_layernorm',
  attn_q: 'self_attn.q_proj',
  attn_k: 'self_attn.k_proj',
  attn_v: 'self_attn.v_proj',
  attn_output: 'self_attn.o_proj',
  ffn_norm: 'post_attention_layernorm',
  ffn_gate: 'mlp.gate_proj',
  ffn_up: 'mlp.up_proj',
  ffn_down: 'mlp.down_proj',
};
const LLAMA_MODEL = {
  token_embd: 'model.embed_tokens',
  output_norm: 'model.norm',
  output: 'lm_head',
};
const GPT2_LAYER = {
  attn_norm: 'ln_1',
  attn_qkv: 'attn.c_attn',
  attn_output: 'attn.c_proj',
  ffn_norm: 'ln_2',
  ffn_up: 'mlp.c_fc',
  ffn_down: 'mlp.c_proj',
};
const GPT2_MODEL = { token_embd: 'wte', position_embd: 'wpe', output_norm: 'ln_f' };
// GPT-2's Conv1D modules, stored transposed.
const GPT2_CONV1D = new Set(['attn_qkv', 'attn_output', 'ffn_up', 'ffn_down']);

/**
 * { header, config, entries, tokenizer } of a GGUF file: config.json's fields, TensorSet entries
 * under the Hugging Face names and the tokenizer files.
 */
export function readGgufModel(bytes, file) {
  const header = readGgufHeader(bytes, file);
  const { arch, config, meta, byName } = ggufConfig(header, file, bytes);
  const entries = [];
  for (const tensor of header.tensors) {
    const entry = entryOf(tensor, { arch, bytes, file, config, byName });
    if (entry) entries.push(entry);
  }
  const maxLength = config.max_position_embeddings ?? config.n_positions;
  return { header, config, entries, tokenizer: ggufTokenizerFiles(meta, file, maxLength) };
}

/**
 * The config.json a GGUF header stands for: { arch, config, meta (typed metadata access),
 * byName (its tensors) }. `bytes`: the file, or its start (a listing's probe), for the one tensor
 * the config is made from (llama's rope_freqs.weight).
 */
export function ggufConfig(header, file, bytes) {
  const meta = metadataReader(header.metadata, file);
  const arch = meta.string('general.architecture');
  if (!GGUF_ARCHITECTURES.includes(arch)) {
    throw attnlensError(
      'invalid_argument',
      file,
      `general.architecture ${describe(arch)} is not supported (supported: ` +
        `${GGUF_ARCHITECTURES.join(', ')})`,
    );
  }
  const byName = new Map(header.tensors.map((t) => [t.name, t]));
  const embedding = byName.get('token_embd.weight');
  if (!embedding || embedding.shape.length !== 2) {
    throw attnlensError('not_found', file, 'holds no 2-D token_embd.weight');
  }
  const vocab = embedding.shape[0];
  const config =
    arch === 'gpt2' ? gpt2Config(meta, vocab) : llamaConfig(meta, arch, byName, vocab, file, bytes);
  return { arch, config, meta, byName };
}

// Typed access to the metadata: each reader names the key when it is missing or of the wrong kind.
function metadataReader(metadata, file) {
  const bad = (key, what, value) =>
    attnlensError(
      'invalid_argument',
      file,
      `metadata ${key} must be ${what}, got ${value === undefined ? 'nothing' : describe(value)}`,
    );
  const get = (key, fallback) => (metadata.has(key) ? metadata.get(key) : fallback);
  return {
    has: (key) => metadata.has(key),
    get,
    string(key, fallback) {
      const value = get(key, fallback);
      if (typeof value !== 'string') throw bad(key, 'a string', value);
      return value;
    },
    count(key, fallback) {
      const value = get(key, fallback);
      if (!Number.isSafeInteger(value) || value < 1) throw bad(key, 'a positive integer', value);
      return value;
    },
    number(key, fallback) {
      const value = get(key, fallback);
      if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
        throw bad(key, 'a positive number', value);
      }
      return value;
    },
    array(key) {
      const value = get(key);
      if (!Array.isArray(value)) throw bad(key, 'an array', value);
      return value;
    },
  };
}

function llamaConfig(meta, arch, byName, vocab, file, bytes) {
  const key = (name) => `${arch}.${name}`;
  const heads = meta.count(key('attention.head_count'));
  const hidden = meta.count(key('embedding_length'));
  const headDim = meta.has(key('attention.key_length'))
    ? meta.count(key('attention.key_length'))
    : hidden / heads;
  const ropeDims = meta.has(key('rope.dimension_count'))
    ? meta.count(key('rope.dimension_count'))
    : headDim;
  if (ropeDims !== headDim) {
    throw attnlensError(
      'out_of_range',
      file,
      `${key('rope.dimension_count')} is ${ropeDims}, but heads have ${headDim} dimensions: ` +
        'partial rotary is not supported',
    );
  }
  const theta = meta.number(key('rope.freq_base'), 10000);
  const ropeFreqs = byName.get('rope_freqs.weight');
  const config = {
    model_type: arch,
    hidden_size: hidden,
    intermediate_size: meta.count(key('feed_forward_length')),
    num_hidden_layers: meta.count(key('block_count')),
    num_attention_heads: heads,
    num_key_value_heads: meta.count(key('attention.head_count_kv'), heads),
    vocab_size: vocab,
    max_position_embeddings: meta.count(key('context_length')),
    rms_norm_eps: meta.number(key('attention.layer_norm_rms_epsilon')),
    rope_theta: theta,
    rope_scaling: ropeFreqs
      ? llama3Scaling(ropeFreqs, bytes, theta, headDim, file)
      : ropeScaling(meta, key, file),
    hidden_act: 'silu',
    tie_word_embeddings: !byName.has('output.weight'),
  };
  if (meta.has(key('attention.key_length'))) config.head_dim = headDim;
  // llama files may carry attention biases (qwen2's are implied by its architecture).
  if (arch === 'llama') config.attention_bias = byName.has('blk.0.attn_q.bias');
  return config;
}

// Linear scaling maps to config.json's rope_scaling; anything else (yarn, longrope) is refused.
function ropeScaling(meta, key, file) {
  const type = meta.has(key('rope.scaling.type')) ? meta.string(key('rope.scaling.type')) : 'none';
  if (type === 'none') return null;
  if (type === 'linear') return { type: 'linear', factor: meta.number(key('rope.scaling.factor')) };
  throw attnlensError(
    'invalid_argument',
    file,
    `${key('rope.scaling.type')} ${describe(type)} is not supported (supported: none, linear)`,
  );
}

// llama.cpp's converter writes Llama 3.1+'s rope_scaling (rope_type llama3) as rope_freqs.weight:
// head_dim / 2 f32 factors, each dividing one inverse frequency. They are read back as the
// llama3 parameters they come from: the factor is the largest, and low_freq_factor 1,
// high_freq_factor 4 and an original context of 8192 are every Llama 3.1, 3.2 and 3.3
// checkpoint's; the parameters are kept only if they give the file's factors (to 1e-5), so a
// file with other factors is refused rather than run with the wrong rotation.
const LLAMA3_ROPE = {
  low_freq_factor: 1,
  high_freq_factor: 4,
  original_max_position_embeddings: 8192,
};
const ROPE_FACTORS_TOLERANCE = 1e-5;

function llama3Scaling(tensor, bytes, theta, headDim, file) {
  const half = headDim / 2;
  const refuse = (why) => {
    throw attnlensError('invalid_argument', file, `rope_freqs.weight ${why}`, {
      tensor: tensor.name,
    });
  };
  if (tensor.type !== 'F32' || tensor.shape.length !== 1 || tensor.shape[0] !== half) {
    refuse(`must be ${half} F32 values (head_dim / 2), got ${tensor.type} [${tensor.shape}]`);
  }
  if (!bytes || tensor.offset + tensor.byteLength > bytes.byteLength) {
    refuse(`lies past the ${bytes?.byteLength ?? 0} bytes read of the file`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset + tensor.offset, tensor.byteLength);
  const factors = Array.from({ length: half }, (_, i) => view.getFloat32(4 * i, true));
  if (!factors.every((f) => Number.isFinite(f) && f > 0)) {
    refuse('holds a factor that is not a positive finite number');
  }
  const scaling = { rope_type: 'llama3', factor: Math.max(...factors), ...LLAMA3_ROPE };
  const expected = llama3Factors(scaling, theta, headDim);
  const worst = Math.max(...factors.map((f, i) => Math.abs(f - expected[i]) / expected[i]));
  if (!(worst <= ROPE_FACTORS_TOLERANCE)) {
    refuse(
      `is not Llama 3's rope scaling (factor ${scaling.factor}, low_freq_factor 1, ` +
        `high_freq_factor 4, original context 8192): a factor differs by ${worst.toExponential(2)}`,
    );
  }
  return scaling;
}

// The factors llama.cpp's converter writes for llama3 scaling (LlamaModel.generate_extra_tensors,
// as the transformers library's _compute_llama3_parameters scales each inverse frequency).
function llama3Factors(scaling, theta, headDim) {
  const { factor, low_freq_factor: low, high_freq_factor: high } = scaling;
  const original = scaling.original_max_position_embeddings;
  return Array.from({ length: headDim / 2 }, (_, i) => {
    const wavelength = 2 * Math.PI * theta ** ((2 * i) / headDim);
    if (wavelength < original / high) return 1;
    if (wavelength > original / low) return factor;
    const smooth = (original / wavelength - low) / (high - low);
    return 1 / ((1 - smooth) / factor + smooth);
  });
}

function gpt2Config(meta, vocab) {
  return {
    model_type: 'gpt2',
    n_embd: meta.count('gpt2.embedding_length'),
    n_head: meta.count('gpt2.attention.head_count'),
    n_layer: meta.count('gpt2.block_count'),
    n_positions: meta.count('gpt2.context_length'),
    n_inner: meta.count('gpt2.feed_forward_length'),
    layer_norm_epsilon: meta.number('gpt2.attention.layer_norm_epsilon'),
    activation_function: 'gelu_new',
    vocab_size: vocab,
  };
}

// The Hugging Face name of a GGUF tensor, or null for one the architecture does not read
// (gpt2's output.weight, a copy of token_embd); a name of no known kind is refused, since a
// tensor left out would silently change the model.
function hfNameOf(name, arch, file) {
  const gpt2 = arch === 'gpt2';
  const layerMatch = /^blk\.(\d+)\.([a-z_]+)\.(weight|bias)$/.exec(name);
  if (layerMatch) {
    const [, layer, part, kind] = layerMatch;
    const mapped = (gpt2 ? GPT2_LAYER : LLAMA_LAYER)[part];
    if (mapped && Number(layer) < 2 ** 24) {
      return {
        hf: gpt2 ? `h.${layer}.${mapped}.${kind}` : `model.layers.${layer}.${mapped}.${kind}`,
        part,
        kind,
      };
    }
  }
  const modelMatch = /^([a-z_]+)\.(weight|bias)$/.exec(name);
  if (modelMatch) {
    const [, part, kind] = modelMatch;
    if (gpt2 && part === 'output' && kind === 'weight') return null;
    const mapped = (gpt2 ? GPT2_MODEL : LLAMA_MODEL)[part];
    if (mapped) return { hf: `${mapped}.${kind}`, part, kind };
  }
  throw attnlensError(
    'invalid_argument',
    file,
    `tensor ${describe(name)} is not one a ${arch} model has in GGUF`,
  );
}

function entryOf(tensor, { arch, bytes, file, config, byName }) {
  // Llama 3's rotary factors became the config's rope_scaling (llama3Scaling).
  if (arch !== 'gpt2' && tensor.name === 'rope_freqs.weight') return null;
  const mapped = hfNameOf(tensor.name, arch, file);
  if (!mapped) {
    requireCopyOf(tensor, byName.get('token_embd.weight'), bytes, file);
    return null;
  }
  if (!GGUF_READ_TYPES.includes(tensor.type)) {
    throw attnlensError(
      'invalid_argument',
      file,
      `tensor ${tensor.name} is of type ${tensor.type}; GGUF types read: ` +
        GGUF_READ_TYPES.join(', '),
      { tensor: tensor.name },
    );
  }
  const raw = bytes.subarray(tensor.offset, tensor.offset + tensor.byteLength);
  const quantized = isQuantized(tensor.type);
  const { shape } = tensor;
  const entry = { name: mapped.hf, dtype: quantized ? 'F32' : tensor.type, shape, file };
  const values = quantized ? () => floatBytes(dequantize(raw, tensor.type, tensor.count)) : null;
  if (arch === 'llama' && (mapped.part === 'attn_q' || mapped.part === 'attn_k')) {
    const headDim = config.head_dim ?? config.hidden_size / config.num_attention_heads;
    if (!Number.isInteger(headDim) || shape[0] % headDim !== 0) {
      throw attnlensError(
        'shape_mismatch',
        file,
        `tensor ${tensor.name} has ${shape[0]} rows, not whole heads of ${headDim} values`,
      );
    }
    entry.bytes = () => interleavedToHalves(values ? values() : raw, shape[0], headDim);
    keepBlocks(entry, tensor.type, () => interleavedToHalves(raw, shape[0], headDim));
  } else {
    entry.bytes = values ?? raw;
    keepBlocks(entry, tensor.type, raw);
  }
  if (arch === 'gpt2' && GPT2_CONV1D.has(mapped.part) && mapped.kind === 'weight') {
    // Stored [out, in]; the architecture reads Conv1D's [in, out]: the same bytes, strided.
    entry.shape = [shape[1], shape[0]];
    entry.strides = [1, shape[1]];
  }
  return entry;
}

// Kept as they are for dtype 'q8' (a Q8_0 tensor) and 'q4' (Q4_0, Q4_K): rows of [out, in]
// (ne0 = in), the layout the core takes. `blocks`: the bytes, or a function returning them.
function keepBlocks(entry, type, blocks) {
  if (type === 'Q8_0') entry.q8_0 = blocks;
  if (Q4_GGUF_TYPES.includes(type)) entry.q4 = { type, blocks };
}

const floatBytes = (values) => new Uint8Array(values.buffer, values.byteOffset, values.byteLength);

// Rows stored as h * headDim + 2i + p (interleaved rotary pairs) moved to h * headDim +
// p * headDim / 2 + i (rotate_half), undoing llama.cpp's LlamaModel.permute.
function interleavedToHalves(bytes, rows, headDim) {
  const rowBytes = bytes.byteLength / rows;
  const out = new Uint8Array(bytes.byteLength);
  const half = headDim / 2;
  for (let r = 0; r < rows; r++) {
    const within = r % headDim;
    const target = r - within + (within % 2) * half + (within >> 1);
    out.set(bytes.subarray(r * rowBytes, (r + 1) * rowBytes), target * rowBytes);
  }
  return out;
}

// gpt2's output.weight is llama.cpp's copy of token_embd (GPT-2 ties its head): one that differs
// would be a head the architecture cannot hold.
function requireCopyOf(tensor, embedding, bytes, file) {
  const same =
    tensor.type === embedding.type &&
    tensor.byteLength === embedding.byteLength &&
    tensor.dims.every((size, d) => size === embedding.dims[d]) &&
    sameBytes(bytes, tensor.offset, embedding.offset, tensor.byteLength);
  if (!same) {
    throw attnlensError(
      'invalid_argument',
      file,
      'output.weight differs from token_embd.weight, but GPT-2 ties its head to the embedding',
    );
  }
}

function sameBytes(bytes, a, b, length) {
  for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
  return true;
}
