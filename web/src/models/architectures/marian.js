// Marian (model_type 'marian'; MarianMTModel, Helsinki-NLP/opus-mt-*): an encoder and a decoder
// of post-LN layers (src/models/units/marian.cpp), embeddings times sqrt(d_model), static
// sinusoidal positions, SiLU ("swish"), no final layer norm, the shared embeddings as the LM
// head plus final_logits_bias. The core numbers the encoder's layers first, then the decoder's.
//
// Config fields the opus-mt files carry from BART's config and that would change the model
// (normalize_before, add_final_layer_norm, normalize_embedding, learned positions, untied
// embeddings, different encoder and decoder widths) are refused by name rather than ignored.

import { rangeError } from '../../argument-checks.js';
import { describe } from '../../errors.js';
import { activation, booleanField, positiveInteger } from './config-fields.js';
import { findPrefix, keyMapper } from './keys.js';

// The transformers library's activation names Marian's MLP may use, by core form.
const ACTIVATIONS = { swish: 'silu', silu: 'silu', gelu: 'gelu_erf', gelu_new: 'gelu_tanh' };
// MarianConfig's fields that are settings of BART's family Marian does not use; the value a
// Marian model must have.
const FIXED = {
  normalize_before: false,
  add_final_layer_norm: false,
  normalize_embedding: false,
  static_position_embeddings: true,
  share_encoder_decoder_embeddings: true,
};

export const marian = {
  modelType: 'marian',
  causal: false,
  encoderDecoder: true,
  configKeys: {
    layers: 'encoder_layers + decoder_layers',
    encoder_layers: 'encoder_layers',
    heads: 'encoder_attention_heads',
    hidden: 'd_model',
    intermediate: 'encoder_ffn_dim',
    vocab: 'vocab_size',
    max_positions: 'max_position_embeddings',
  },

  coreConfig(config) {
    for (const [key, value] of Object.entries(FIXED)) {
      if (booleanField(config, key, value) !== value) {
        throw rangeError('config.json', `${key} ${!value} is not supported for Marian models`);
      }
    }
    const same = (encoderKey, decoderKey) => {
      const encoder = positiveInteger(config, encoderKey);
      const decoder = positiveInteger(config, decoderKey, encoder);
      if (decoder !== encoder) {
        throw rangeError(
          'config.json',
          `${encoderKey} (${encoder}) and ${decoderKey} (${decoder}) differ, which this ` +
            'package does not support',
        );
      }
      return encoder;
    };
    const hidden = positiveInteger(config, 'd_model');
    const heads = same('encoder_attention_heads', 'decoder_attention_heads');
    if (hidden % heads !== 0) {
      throw rangeError(
        'config.json',
        `d_model (${hidden}) is not a multiple of the heads (${heads})`,
      );
    }
    const vocab = same('vocab_size', 'decoder_vocab_size');
    const encoderLayers = positiveInteger(config, 'encoder_layers');
    return {
      architecture: 'marian',
      layers: encoderLayers + positiveInteger(config, 'decoder_layers'),
      encoderLayers,
      heads,
      hidden,
      intermediate: same('encoder_ffn_dim', 'decoder_ffn_dim'),
      vocab,
      maxPositions: positiveInteger(config, 'max_position_embeddings'),
      // nn.LayerNorm's default: MarianConfig has no epsilon.
      layerNormEps: 1e-5,
      activation: activation(config, 'activation_function', 'swish', ACTIVATIONS),
      scaleEmbedding: booleanField(config, 'scale_embedding', false),
      lmHead: true,
      generation: generationConfig(config, vocab),
    };
  },

  keys(tensors, core) {
    const prefix = findPrefix(tensors, ['model.', ''], 'shared.weight', 'Marian');
    const keyFor = keyMapper(tensors, {
      prefix,
      modelWide: {
        token_embedding: 'shared.weight',
        final_logits_bias: 'final_logits_bias',
        position_embedding: 'encoder.embed_positions.weight',
      },
      layer: (i) =>
        i < core.encoderLayers
          ? `encoder.layers.${i}.`
          : `decoder.layers.${i - core.encoderLayers}.`,
      perLayer: {
        'attention.query': 'self_attn.q_proj',
        'attention.key': 'self_attn.k_proj',
        'attention.value': 'self_attn.v_proj',
        'attention.output': 'self_attn.out_proj',
        attention_norm: 'self_attn_layer_norm',
        'cross_attention.query': 'encoder_attn.q_proj',
        'cross_attention.key': 'encoder_attn.k_proj',
        'cross_attention.value': 'encoder_attn.v_proj',
        'cross_attention.output': 'encoder_attn.out_proj',
        cross_attention_norm: 'encoder_attn_layer_norm',
        'mlp.input': 'fc1',
        'mlp.output': 'fc2',
        mlp_norm: 'final_layer_norm',
      },
      norms: [],
      unprefixed: ['final_logits_bias'],
    });
    return keyFor;
  },

  /**
   * Weights the checkpoint may leave out, computed as the library computes them: the static
   * position table (MarianSinusoidalPositionalEmbedding; the Hub's files carry it, and then
   * theirs is read) and a zero final_logits_bias (a registered buffer some files drop).
   */
  computedWeight(name, core) {
    if (name === 'position_embedding') return sinusoidalPositions(core.maxPositions, core.hidden);
    if (name === 'final_logits_bias') return new Float32Array(core.vocab);
    return null;
  },
};

/**
 * How the model decodes, from config.json as the transformers library's generate() reads it:
 * the decoder's start token (the pad token), EOS, the pad token, bad_words_ids (never
 * generated), forced_eos_token_id (forced at the last position max_length allows), num_beams,
 * length_penalty, early_stopping, max_length (start token included).
 */
function generationConfig(config, vocab) {
  const id = (key, fallback) => {
    const value = config[key] ?? fallback;
    if (value === null) return null;
    if (!Number.isInteger(value) || value < 0 || value >= vocab) {
      throw rangeError(
        'config.json',
        `${key} must be a token id below ${vocab}, got ${describe(value)}`,
      );
    }
    return value;
  };
  const pad = id('pad_token_id');
  const badWords = config.bad_words_ids ?? [];
  if (
    !Array.isArray(badWords) ||
    badWords.length > 1024 ||
    !badWords.every(
      (words) =>
        Array.isArray(words) &&
        words.length >= 1 &&
        words.length <= 64 &&
        words.every((w) => Number.isInteger(w) && w >= 0 && w < vocab),
    )
  ) {
    throw rangeError(
      'config.json',
      `bad_words_ids must be lists of token ids below ${vocab}, got ${describe(badWords)}`,
    );
  }
  const lengthPenalty = config.length_penalty ?? 1;
  if (typeof lengthPenalty !== 'number' || !Number.isFinite(lengthPenalty)) {
    throw rangeError(
      'config.json',
      `length_penalty must be a number, got ${describe(lengthPenalty)}`,
    );
  }
  return Object.freeze({
    decoderStartTokenId: id('decoder_start_token_id', pad),
    eosTokenId: id('eos_token_id'),
    padTokenId: pad,
    badWordsIds: badWords.map((words) => [...words]),
    forcedEosTokenId: id('forced_eos_token_id', null),
    numBeams: positiveInteger(config, 'num_beams', 1),
    lengthPenalty,
    earlyStopping: booleanField(config, 'early_stopping', false),
    maxLength: positiveInteger(config, 'max_length', 512),
  });
}

/**
 * Marian's sinusoidal table [positions, dim]: column j < dim/2 (rounded up) holds
 * sin(pos / 10000^(2j/dim)), column dim/2 + j holds cos(pos / 10000^(2j/dim)).
 */
export function sinusoidalPositions(positions, dim) {
  if (!Number.isInteger(positions) || !Number.isInteger(dim) || positions < 1 || dim < 1) {
    throw rangeError(
      'positions',
      `needs whole sizes, got ${describe(positions)} x ${describe(dim)}`,
    );
  }
  const table = new Float32Array(positions * dim);
  const half = Math.ceil(dim / 2);
  for (let pos = 0; pos < positions; pos++) {
    for (let j = 0; j < dim; j++) {
      const angle = pos / 10000 ** ((2 * Math.floor(j / 2)) / dim);
      if (j % 2 === 0) table[pos * dim + j / 2] = Math.sin(angle);
      else table[pos * dim + half + (j - 1) / 2] = Math.cos(angle);
    }
  }
  return table;
}
