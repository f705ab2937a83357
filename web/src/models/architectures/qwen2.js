// Qwen2 (model_type 'qwen2'; Qwen2ForCausalLM, e.g. Qwen2.5-0.5B): the llama family (llama.js)
// with biases on q/k/v_proj and none on o_proj or the MLP, whatever attention_bias says, and
// optional sliding windows: with use_sliding_window, the layers from max_window_layers on (or
// those layer_types calls 'sliding_attention') let query i see keys i - sliding_window < j <= i.

import { typeError } from '../../argument-checks.js';
import { describe } from '../../errors.js';
import { booleanField, positiveInteger } from './config-fields.js';
import { LLAMA_CONFIG_KEYS, llamaCoreConfig, llamaFamilyKeys } from './llama.js';

const LAYER_TYPES = ['full_attention', 'sliding_attention'];

// Each layer's window (0: full attention), as Qwen2Config.__post_init__ derives layer_types.
function slidingWindows(config, layers) {
  const bad = (detail) => typeError('config.json', detail);
  let types = config.layer_types ?? null;
  const sliding = booleanField(config, 'use_sliding_window', false);
  if (types === null) {
    if (!sliding) return [];
    const first = config.max_window_layers ?? 28;
    if (!Number.isInteger(first) || first < 0) {
      throw bad(`max_window_layers must be a whole number >= 0, got ${describe(first)}`);
    }
    types = Array.from({ length: layers }, (_, i) =>
      i >= first ? 'sliding_attention' : 'full_attention',
    );
  }
  if (!Array.isArray(types) || types.length !== layers) {
    throw bad(`layer_types must list one of ${LAYER_TYPES.join(', ')} per layer (${layers})`);
  }
  const unknown = types.find((type) => !LAYER_TYPES.includes(type));
  if (unknown !== undefined) {
    throw bad(`layer_types names ${describe(unknown)} (only ${LAYER_TYPES.join(', ')} exist)`);
  }
  if (!types.includes('sliding_attention')) return [];
  // Qwen2Config drops sliding_window unless use_sliding_window is set.
  if (!sliding) return [];
  const window = positiveInteger(config, 'sliding_window');
  return types.map((type) => (type === 'sliding_attention' ? window : 0));
}

export const qwen2 = {
  modelType: 'qwen2',
  causal: true,
  configKeys: LLAMA_CONFIG_KEYS,

  coreConfig(config) {
    return llamaCoreConfig(config, {
      qkvBias: true,
      outputBias: false,
      mlpBias: false,
      localWindows: (layers) => slidingWindows(config, layers),
    });
  },

  keys(tensors) {
    return llamaFamilyKeys(tensors, 'Qwen2');
  },
};
