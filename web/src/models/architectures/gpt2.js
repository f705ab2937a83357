// GPT-2 (model_type 'gpt2'; GPT2LMHeadModel / GPT2Model): pre-LN blocks, Conv1D weights
// [in, out], c_attn packing q | k | v, the LM head tied to wte. Files from the original
// repository have no "transformer." prefix and carry h.N.attn.bias / masked_bias buffers,
// which are not read.

import {
  activation,
  booleanField,
  positiveInteger,
  positiveNumber,
  requireHeadsDivide,
} from './config-fields.js';
import { findPrefix, keyMapper } from './keys.js';
import { typeError } from '../../argument-checks.js';
import { describe } from '../../errors.js';

/**
 * Key names GPT-2 and GPT-Neo share: the embeddings, ln_1 / ln_2, the MLP (c_fc, c_proj), ln_f,
 * blocks under h.N., the whole under "transformer." or nothing; `attention` maps the core's
 * attention modules to the family member's own.
 */
export function gptFamilyKeys(tensors, name, attention) {
  return keyMapper(tensors, {
    prefix: findPrefix(tensors, ['transformer.', ''], 'wte.weight', name),
    modelWide: {
      token_embedding: 'wte.weight',
      position_embedding: 'wpe.weight',
      final_norm: 'ln_f',
    },
    layer: (i) => `h.${i}.`,
    perLayer: {
      attention_norm: 'ln_1',
      ...attention,
      mlp_norm: 'ln_2',
      'mlp.input': 'mlp.c_fc',
      'mlp.output': 'mlp.c_proj',
    },
    norms: [],
  });
}

// attnlens/train's own field: a model trained without ln_f (finalNorm: false) says so, and its
// file has no ln_f tensors. No Hub checkpoint has it.
function finalNorm(config) {
  const own = config.attnlens ?? {};
  if (typeof own !== 'object' || own === null || Array.isArray(own)) {
    throw typeError('config.json', `attnlens must be an object, got ${describe(own)}`);
  }
  return booleanField({ 'attnlens.finalNorm': own.finalNorm }, 'attnlens.finalNorm', true);
}

export const gpt2 = {
  modelType: 'gpt2',
  causal: true,
  // The core's name of each config field (its errors' parameter) -> config.json's.
  configKeys: {
    layers: 'n_layer',
    heads: 'n_head',
    hidden: 'n_embd',
    intermediate: 'n_inner',
    vocab: 'vocab_size',
    max_positions: 'n_positions',
    layer_norm_eps: 'layer_norm_epsilon',
  },

  coreConfig(config) {
    const hidden = positiveInteger(config, 'n_embd');
    const heads = positiveInteger(config, 'n_head');
    requireHeadsDivide(hidden, heads, 'n_embd', 'n_head');
    return {
      architecture: 'gpt2',
      layers: positiveInteger(config, 'n_layer'),
      heads,
      hidden,
      intermediate: positiveInteger(config, 'n_inner', 4 * hidden),
      vocab: positiveInteger(config, 'vocab_size'),
      maxPositions: positiveInteger(config, ['n_positions', 'n_ctx']),
      layerNormEps: positiveNumber(config, 'layer_norm_epsilon', 1e-5),
      activation: activation(config, 'activation_function', 'gelu_new'),
      scaleAttnWeights: booleanField(config, 'scale_attn_weights', true),
      scaleAttnByInverseLayerIdx: booleanField(config, 'scale_attn_by_inverse_layer_idx', false),
      lmHead: true,
      finalNorm: finalNorm(config),
    };
  },

  keys(tensors) {
    return gptFamilyKeys(tensors, 'GPT-2', {
      'attention.qkv': 'attn.c_attn',
      'attention.output': 'attn.c_proj',
    });
  },
};
