// ViT (model_type 'vit'; ViTForImageClassification as google/vit-base-patch16-224 and the DeiT
// checkpoints published as ViT, ViTModel as DINO's facebook/dino-vits16): pre-LN blocks over a
// class token and patches, GELU (erf), LayerNorm epsilon 1e-12, a final layernorm, and the
// classifier over the class token where the checkpoint has one (its labels from id2label). It
// runs at its trained size only (the transformers library's default, interpolate_pos_encoding
// off). ViTModel's pooler is not the core's: run({ returnPooled }) applies it in JS
// (../vision-pooler.js), since attention and labels do not depend on it.
//
// The core's table lists the class token and position embeddings in the checkpoint's own 3-D
// shapes; the patch convolution [hidden, channels, patch, patch] is read as the linear layer
// [hidden, channels * patch^2] it is (checkpointShape()).

import { rangeError } from '../../argument-checks.js';
import { describe } from '../../errors.js';
import {
  activation,
  booleanField,
  positiveInteger,
  positiveNumber,
  requireHeadsDivide,
} from './config-fields.js';
import { findPrefix, keyMapper } from './keys.js';

export const VISION_CONFIG_KEYS = {
  layers: 'num_hidden_layers',
  heads: 'num_attention_heads',
  hidden: 'hidden_size',
  intermediate: 'intermediate_size',
  layer_norm_eps: 'layer_norm_eps',
  patch_size: 'patch_size',
  channels: 'num_channels',
  image_grid: 'image_size',
};

/**
 * The labels of config.json's id2label, in index order, or null when it has none. Keys must be
 * the indices 0..count-1, each once.
 */
export function labelsOf(config) {
  const map = config.id2label;
  if (map === undefined || map === null) return null;
  if (typeof map !== 'object' || Array.isArray(map)) {
    throw rangeError('config.json', `id2label must be an object, got ${describe(map)}`);
  }
  const keys = Object.keys(map);
  const labels = new Array(keys.length);
  for (const key of keys) {
    const index = Number(key);
    if (!Number.isInteger(index) || index < 0 || index >= keys.length || String(index) !== key) {
      throw rangeError(
        'config.json',
        `id2label's keys must be 0 to ${keys.length - 1}, got '${key}'`,
      );
    }
    labels[index] = String(map[key]);
  }
  return labels;
}

/**
 * The core config of a vision transformer's config.json. `classifierKey`: the tensor whose
 * presence means a classifier (null: the family's head is not read); `mlpRatio`: DINOv2's MLP
 * width as a multiple of hidden (else intermediate_size); `registers`: DINOv2's register tokens,
 * `antialias`: its resize of the position grid with antialiasing (with registers).
 */
export function visionCoreConfig(
  config,
  tensors,
  { classifierKey, mlpRatio, layerScale, interpolate, registers = 0, antialias = false },
) {
  const hidden = positiveInteger(config, 'hidden_size');
  const heads = positiveInteger(config, 'num_attention_heads');
  requireHeadsDivide(hidden, heads, 'hidden_size', 'num_attention_heads');
  if (!booleanField(config, 'qkv_bias', true)) {
    throw rangeError('config.json', 'qkv_bias false is not supported (every Hub ViT has biases)');
  }
  const patchSize = positiveInteger(config, 'patch_size');
  const imageSize = positiveInteger(config, 'image_size');
  if (imageSize < patchSize) {
    throw rangeError(
      'config.json',
      `image_size ${imageSize} is smaller than patch_size ${patchSize}`,
    );
  }
  const imageGrid = Math.floor(imageSize / patchSize);
  const labels = labelsOf(config);
  // Without tensors (describing a model before its weights are read), a classifier is assumed
  // where config.json names labels.
  const classifier =
    classifierKey !== null && (tensors === null ? labels !== null : tensors.has(classifierKey));
  if (classifier && labels === null) {
    throw rangeError('config.json', 'has no id2label, but the checkpoint has a classifier');
  }
  return {
    architecture: 'vit',
    layers: positiveInteger(config, 'num_hidden_layers'),
    heads,
    hidden,
    intermediate: mlpRatio
      ? Math.trunc(hidden * mlpRatio)
      : positiveInteger(config, 'intermediate_size'),
    // The classifier's labels; 1 (never read) without one.
    vocab: classifier ? labels.length : 1,
    maxPositions: imageGrid * imageGrid + 1,
    layerNormEps: positiveNumber(config, 'layer_norm_eps', 1e-12),
    activation: activation(config, 'hidden_act', 'gelu'),
    lmHead: classifier,
    labels: classifier ? labels : null,
    patchSize,
    channels: positiveInteger(config, 'num_channels', 3),
    imageGrid,
    layerScale,
    interpolatePositions: interpolate,
    registers,
    antialiasPositions: antialias,
  };
}

/** The checkpoint shape of a core weight whose table shape flattens it (the patch kernel). */
export function visionCheckpointShape(config) {
  return (name, shape) =>
    name === 'patch_embedding.weight'
      ? [shape[0], config.channels, config.patchSize, config.patchSize]
      : shape;
}

export const vit = {
  modelType: 'vit',
  vision: true,
  causal: false,
  configKeys: VISION_CONFIG_KEYS,
  processor: 'ViTImageProcessor',

  coreConfig(config, tensors) {
    return visionCoreConfig(config, tensors, {
      classifierKey: 'classifier.weight',
      layerScale: false,
      interpolate: false,
    });
  },

  checkpointShape: visionCheckpointShape,

  keys(tensors) {
    return keyMapper(tensors, {
      prefix: findPrefix(tensors, ['vit.', ''], 'embeddings.cls_token', 'ViT'),
      modelWide: {
        class_token: 'embeddings.cls_token',
        position_embedding: 'embeddings.position_embeddings',
        patch_embedding: 'embeddings.patch_embeddings.projection',
        final_norm: 'layernorm',
        classifier: 'classifier',
      },
      layer: (i) => `encoder.layer.${i}.`,
      perLayer: {
        attention_norm: 'layernorm_before',
        'attention.query': 'attention.attention.query',
        'attention.key': 'attention.attention.key',
        'attention.value': 'attention.attention.value',
        'attention.output': 'attention.output.dense',
        mlp_norm: 'layernorm_after',
        'mlp.input': 'intermediate.dense',
        'mlp.output': 'output.dense',
      },
      norms: [],
      unprefixed: ['classifier'],
    });
  },
};
