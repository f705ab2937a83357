// DINOv2 (model_type 'dinov2'; Dinov2Model as facebook/dinov2-small): ViT's blocks (vit.js) with
// a layer scale on each block's output (layer_scale1/2.lambda1), norm1 / norm2 and mlp.fc1 /
// fc2 names, an MLP of mlp_ratio * hidden, LayerNorm epsilon 1e-6, and position embeddings
// trained at 518 px (37 x 37 patches) resized to the image's grid (bicubic, as
// Dinov2Embeddings.interpolate_pos_encoding does). The SwiGLU MLP of the giant model is not
// supported; the mask token (used only in pre-training) is not read, nor is the head of
// Dinov2ForImageClassification (over the class token and the patches' mean, 2 x hidden wide):
// such a checkpoint gives attention and no labels.

import { rangeError } from '../../argument-checks.js';
import { booleanField, positiveInteger, positiveNumber } from './config-fields.js';
import { VISION_CONFIG_KEYS, visionCheckpointShape, visionCoreConfig } from './vit.js';
import { findPrefix, keyMapper } from './keys.js';

// DINOv2 and DINOv2 with registers (model_type 'dinov2_with_registers', facebook/dinov2-with-
// registers-small): num_register_tokens tokens after the class token, and the position grid
// resized with antialias=True, as Dinov2WithRegistersEmbeddings does.
function dinov2Family(modelType, withRegisters) {
  return {
    modelType,
    vision: true,
    causal: false,
    configKeys: {
      ...VISION_CONFIG_KEYS,
      intermediate: 'mlp_ratio',
      registers: 'num_register_tokens',
    },
    processor: 'BitImageProcessor',

    coreConfig(config, tensors) {
      if (booleanField(config, 'use_swiglu_ffn', false)) {
        throw rangeError('config.json', 'use_swiglu_ffn (DINOv2 giant) is not supported');
      }
      return visionCoreConfig({ layer_norm_eps: 1e-6, ...config }, tensors, {
        classifierKey: null,
        mlpRatio: positiveNumber(config, 'mlp_ratio', 4),
        layerScale: true,
        interpolate: true,
        registers: withRegisters ? positiveInteger(config, 'num_register_tokens', 4) : 0,
        antialias: withRegisters,
      });
    },

    checkpointShape: visionCheckpointShape,

    keys(tensors) {
      return dinov2Keys(tensors, withRegisters);
    },
  };
}

export const dinov2 = dinov2Family('dinov2', false);
export const dinov2WithRegisters = dinov2Family('dinov2_with_registers', true);

function dinov2Keys(tensors, withRegisters) {
  const prefix = findPrefix(
    tensors,
    ['dinov2.', 'dinov2_with_registers.', ''],
    'embeddings.cls_token',
    'DINOv2',
  );
  const layerScales = {};
  // Layer scales are named lambda1, not weight: listed one by one, for the layers present.
  for (let i = 0; tensors.has(`${prefix}encoder.layer.${i}.norm1.weight`); i++) {
    layerScales[`layers.${i}.attention_scale.weight`] = `encoder.layer.${i}.layer_scale1.lambda1`;
    layerScales[`layers.${i}.mlp_scale.weight`] = `encoder.layer.${i}.layer_scale2.lambda1`;
  }
  return keyMapper(tensors, {
    prefix,
    modelWide: {
      class_token: 'embeddings.cls_token',
      position_embedding: 'embeddings.position_embeddings',
      patch_embedding: 'embeddings.patch_embeddings.projection',
      final_norm: 'layernorm',
      ...(withRegisters ? { register_tokens: 'embeddings.register_tokens' } : {}),
      ...layerScales,
    },
    layer: (i) => `encoder.layer.${i}.`,
    perLayer: {
      attention_norm: 'norm1',
      'attention.query': 'attention.attention.query',
      'attention.key': 'attention.attention.key',
      'attention.value': 'attention.attention.value',
      'attention.output': 'attention.output.dense',
      mlp_norm: 'norm2',
      'mlp.input': 'mlp.fc1',
      'mlp.output': 'mlp.fc2',
    },
    norms: [],
  });
}
