// BERT (model_type 'bert'; BertForMaskedLM, BertForPreTraining, BertModel): post-LN blocks,
// GELU (erf), LayerNorm epsilon from the config (1e-12), word + position + token type
// embeddings and a LayerNorm, no attention mask for one sequence. The masked-LM head
// (cls.predictions: dense, activation, LayerNorm, then the word embeddings transposed plus a
// bias) is there when the checkpoint has it; BertModel files have none. Old checkpoints name
// LayerNorm parameters gamma / beta; pooler and cls.seq_relationship are not read.

import { rangeError } from '../../argument-checks.js';
import { describe } from '../../errors.js';
import {
  activation,
  positiveInteger,
  positiveNumber,
  requireHeadsDivide,
} from './config-fields.js';
import { findPrefix, keyMapper } from './keys.js';

const HEAD_PROBE = 'cls.predictions.transform.dense.weight';

export const bert = {
  modelType: 'bert',
  causal: false,
  configKeys: {
    layers: 'num_hidden_layers',
    heads: 'num_attention_heads',
    hidden: 'hidden_size',
    intermediate: 'intermediate_size',
    vocab: 'vocab_size',
    max_positions: 'max_position_embeddings',
    token_types: 'type_vocab_size',
    layer_norm_eps: 'layer_norm_eps',
  },

  coreConfig(config, tensors) {
    const hidden = positiveInteger(config, 'hidden_size');
    const heads = positiveInteger(config, 'num_attention_heads');
    requireHeadsDivide(hidden, heads, 'hidden_size', 'num_attention_heads');
    const positionType = config.position_embedding_type ?? 'absolute';
    if (positionType !== 'absolute') {
      throw rangeError(
        'config.json',
        `position_embedding_type ${describe(positionType)} is not supported (only 'absolute')`,
      );
    }
    return {
      architecture: 'bert',
      layers: positiveInteger(config, 'num_hidden_layers'),
      heads,
      hidden,
      intermediate: positiveInteger(config, 'intermediate_size'),
      vocab: positiveInteger(config, 'vocab_size'),
      maxPositions: positiveInteger(config, 'max_position_embeddings'),
      typeVocabSize: positiveInteger(config, 'type_vocab_size', 2),
      layerNormEps: positiveNumber(config, 'layer_norm_eps', 1e-12),
      activation: activation(config, 'hidden_act', 'gelu'),
      // Without tensors (describing a model before its weights are read), the head is assumed.
      lmHead: tensors === null || tensors.has(HEAD_PROBE),
    };
  },

  keys(tensors) {
    return keyMapper(tensors, {
      prefix: findPrefix(tensors, ['bert.', ''], 'embeddings.word_embeddings.weight', 'BERT'),
      modelWide: {
        token_embedding: 'embeddings.word_embeddings.weight',
        position_embedding: 'embeddings.position_embeddings.weight',
        token_type_embedding: 'embeddings.token_type_embeddings.weight',
        embedding_norm: 'embeddings.LayerNorm',
        'head.dense': 'cls.predictions.transform.dense',
        'head.norm': 'cls.predictions.transform.LayerNorm',
        // Some files keep the bias only under the (tied) decoder's name.
        'head.bias': ['cls.predictions.bias', 'cls.predictions.decoder.bias'],
      },
      layer: (i) => `encoder.layer.${i}.`,
      perLayer: {
        'attention.query': 'attention.self.query',
        'attention.key': 'attention.self.key',
        'attention.value': 'attention.self.value',
        'attention.output': 'attention.output.dense',
        attention_norm: 'attention.output.LayerNorm',
        'mlp.input': 'intermediate.dense',
        'mlp.output': 'output.dense',
        mlp_norm: 'output.LayerNorm',
      },
      norms: ['embedding_norm', 'head.norm', 'attention_norm', 'mlp_norm'],
      unprefixed: ['cls.'],
    });
  },
};
