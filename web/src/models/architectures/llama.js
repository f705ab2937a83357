// Llama (model_type 'llama'; LlamaForCausalLM, e.g. SmolLM2): pre-RMSNorm blocks, rotary
// position embeddings (rope_theta; rope_scaling 'linear', 'dynamic' or 'llama3'), grouped-query
// attention (num_key_value_heads), the SwiGLU MLP (gate_proj, up_proj, down_proj; hidden_act
// 'silu'), an optional head_dim, attention_bias and mlp_bias, and the LM head tied to
// embed_tokens when tie_word_embeddings says so (else lm_head.weight). Causal. Qwen2 (qwen2.js)
// is the same family with its own biases and sliding windows.

import { rangeError, typeError } from '../../argument-checks.js';
import { describe } from '../../errors.js';
import {
  activation,
  booleanField,
  positiveInteger,
  positiveNumber,
  requireHeadsDivide,
} from './config-fields.js';
import { findPrefix, keyMapper } from './keys.js';

const FILE = 'config.json';

// hidden_act values that name SiLU (the transformers library's ACT2FN has both).
const GATE_ACTIVATIONS = { silu: 'silu', swish: 'silu' };

// The RoPE types this package computes, and why 'dynamic' is the plain one here: dynamic NTK
// changes the frequencies only past max_position_embeddings, which run() never goes.
const ROPE_TYPES = { default: 'none', linear: 'linear', dynamic: 'none', llama3: 'llama3' };

/** RoPE settings from config.json: rope_theta + rope_scaling, or (newer files) rope_parameters. */
function ropeOf(config) {
  const parameters = config.rope_parameters ?? null;
  const scaling = parameters ?? config.rope_scaling ?? null;
  const field = parameters ? 'rope_parameters' : 'rope_scaling';
  if (scaling !== null && (typeof scaling !== 'object' || Array.isArray(scaling))) {
    throw typeError(FILE, `${field} must be an object or null, got ${describe(scaling)}`);
  }
  const theta = positiveNumber(parameters ?? config, 'rope_theta', 10000);
  const type = scaling?.rope_type ?? scaling?.type ?? 'default';
  if (!Object.hasOwn(ROPE_TYPES, type)) {
    throw rangeError(
      FILE,
      `${field} type ${describe(type)} is not supported (supported: ` +
        `${Object.keys(ROPE_TYPES).join(', ')})`,
    );
  }
  const rope = {
    theta,
    scaling: ROPE_TYPES[type],
    factor: 1,
    lowFreqFactor: 1,
    highFreqFactor: 4,
    originalMaxPositions: 8192,
  };
  const inScaling = (key) => `${field}.${key}`;
  const number = (key) => {
    const value = scaling[key];
    if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
      throw rangeError(FILE, `${inScaling(key)} must be a positive number, got ${describe(value)}`);
    }
    return value;
  };
  if (rope.scaling !== 'none') rope.factor = number('factor');
  if (rope.scaling === 'llama3') {
    rope.lowFreqFactor = number('low_freq_factor');
    rope.highFreqFactor = number('high_freq_factor');
    if (!(rope.highFreqFactor > rope.lowFreqFactor)) {
      throw rangeError(
        FILE,
        `${inScaling('high_freq_factor')} (${rope.highFreqFactor}) must be greater than ` +
          `low_freq_factor (${rope.lowFreqFactor})`,
      );
    }
    rope.originalMaxPositions = positiveInteger(scaling, 'original_max_position_embeddings');
  }
  return rope;
}

/**
 * The core config of a llama-family config.json. `family`: { qkvBias, outputBias, mlpBias }
 * (true / false, or undefined to read attention_bias / mlp_bias) and `localWindows(layers)`,
 * the sliding window of each layer (0 for full attention).
 */
export function llamaCoreConfig(config, family) {
  const hidden = positiveInteger(config, 'hidden_size');
  const heads = positiveInteger(config, 'num_attention_heads');
  const kvHeads = positiveInteger(config, 'num_key_value_heads', heads);
  if (heads % kvHeads !== 0) {
    throw rangeError(
      FILE,
      `num_attention_heads (${heads}) is not a multiple of num_key_value_heads (${kvHeads})`,
    );
  }
  let headDim = config.head_dim ?? null;
  if (headDim === null) {
    requireHeadsDivide(hidden, heads, 'hidden_size', 'num_attention_heads');
    headDim = hidden / heads;
  } else {
    headDim = positiveInteger(config, 'head_dim');
  }
  if (headDim % 2 !== 0) {
    throw rangeError(FILE, `head_dim ${headDim} must be even (rotary embeddings rotate halves)`);
  }
  const partial = config.partial_rotary_factor ?? 1;
  if (partial !== 1) {
    throw rangeError(
      FILE,
      `partial_rotary_factor ${describe(partial)} is not supported (only 1: every dimension)`,
    );
  }
  const attentionBias = booleanField(config, 'attention_bias', false);
  const layers = positiveInteger(config, 'num_hidden_layers');
  return {
    architecture: 'llama',
    layers,
    heads,
    kvHeads,
    headDim,
    hidden,
    intermediate: positiveInteger(config, 'intermediate_size'),
    vocab: positiveInteger(config, 'vocab_size'),
    maxPositions: positiveInteger(config, 'max_position_embeddings'),
    layerNormEps: positiveNumber(config, 'rms_norm_eps', 1e-6),
    activation: activation(config, 'hidden_act', 'silu', GATE_ACTIVATIONS),
    qkvBias: family.qkvBias ?? attentionBias,
    outputBias: family.outputBias ?? attentionBias,
    mlpBias: family.mlpBias ?? booleanField(config, 'mlp_bias', false),
    // LlamaConfig's and Qwen2Config's default is False (PretrainedConfig's own is True).
    tieWordEmbeddings: booleanField(config, 'tie_word_embeddings', false),
    rope: ropeOf(config),
    localWindows: family.localWindows(layers),
    lmHead: true,
  };
}

/** Key names of LlamaForCausalLM and Qwen2ForCausalLM (under "model.", or none: a bare model). */
export function llamaFamilyKeys(tensors, name) {
  return keyMapper(tensors, {
    prefix: findPrefix(tensors, ['model.', ''], 'embed_tokens.weight', name),
    modelWide: {
      token_embedding: 'embed_tokens.weight',
      final_norm: 'norm',
      lm_head: 'lm_head.weight',
    },
    layer: (i) => `layers.${i}.`,
    perLayer: {
      attention_norm: 'input_layernorm',
      'attention.query': 'self_attn.q_proj',
      'attention.key': 'self_attn.k_proj',
      'attention.value': 'self_attn.v_proj',
      'attention.output': 'self_attn.o_proj',
      mlp_norm: 'post_attention_layernorm',
      'mlp.gate': 'mlp.gate_proj',
      'mlp.input': 'mlp.up_proj',
      'mlp.output': 'mlp.down_proj',
    },
    norms: [],
    unprefixed: ['lm_head.'],
  });
}

/** The core's name of each config field (its errors' parameter) -> config.json's. */
export const LLAMA_CONFIG_KEYS = Object.freeze({
  layers: 'num_hidden_layers',
  heads: 'num_attention_heads',
  kv_heads: 'num_key_value_heads',
  head_dim: 'head_dim',
  hidden: 'hidden_size',
  intermediate: 'intermediate_size',
  vocab: 'vocab_size',
  max_positions: 'max_position_embeddings',
  layer_norm_eps: 'rms_norm_eps',
  rope_theta: 'rope_theta',
  rope_factor: 'rope_scaling.factor',
  rope_low_freq_factor: 'rope_scaling.low_freq_factor',
  rope_high_freq_factor: 'rope_scaling.high_freq_factor',
  rope_original_max_positions: 'rope_scaling.original_max_position_embeddings',
  local_windows: 'sliding_window',
});

export const llama = {
  modelType: 'llama',
  causal: true,
  configKeys: LLAMA_CONFIG_KEYS,

  coreConfig(config) {
    // Llama has no sliding windows: every layer is causal over the whole text.
    return llamaCoreConfig(config, { localWindows: () => [] });
  },

  keys(tensors) {
    return llamaFamilyKeys(tensors, 'Llama');
  },
};
