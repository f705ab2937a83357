// GPT-Neo (model_type 'gpt_neo'; GPTNeoForCausalLM, e.g. TinyStories): GPT-2's blocks with
// nn.Linear weights [out, in], q/k/v without bias, attention NOT scaled by 1/sqrt(head_dim), and
// each layer global or local as `attention_types` says (a local layer's query i sees keys
// i - window_size < j <= i). The LM head is tied to wte.

import { typeError } from '../../argument-checks.js';
import { describe } from '../../errors.js';
import {
  activation,
  positiveInteger,
  positiveNumber,
  requireHeadsDivide,
} from './config-fields.js';
import { gptFamilyKeys } from './gpt2.js';

// GPTNeoConfig's default when config.json has none.
const DEFAULT_ATTENTION_TYPES = [[['global', 'local'], 12]];

// [[["global", "local"], 4]] -> ["global", "local", "global", ...]: each entry's kinds, repeated
// its count of times (GPTNeoConfig.expand_attention_types_params).
function expandAttentionTypes(types) {
  const bad = (detail) =>
    typeError('config.json', `attention_types ${detail}, got ${describe(types)}`);
  if (!Array.isArray(types)) throw bad('must be a list of [kinds, count] pairs');
  const layers = [];
  for (const entry of types) {
    if (!Array.isArray(entry) || entry.length !== 2 || !Array.isArray(entry[0])) {
      throw bad('must be a list of [kinds, count] pairs');
    }
    const [kinds, count] = entry;
    if (!Number.isInteger(count) || count < 0 || count > 4096) throw bad('has a bad count');
    for (const kind of kinds) {
      if (kind !== 'global' && kind !== 'local') {
        throw bad(`names '${kind}' (only 'global' and 'local' exist)`);
      }
    }
    // Bounded before it is built: a small file must not describe millions of layers.
    if (layers.length + kinds.length * count > 4096) throw bad('describes more than 4096 layers');
    for (let i = 0; i < count; i++) for (const kind of kinds) layers.push(kind);
  }
  return layers;
}

export const gptNeo = {
  modelType: 'gpt_neo',
  causal: true,
  configKeys: {
    layers: 'num_layers',
    heads: 'num_heads',
    hidden: 'hidden_size',
    intermediate: 'intermediate_size',
    vocab: 'vocab_size',
    max_positions: 'max_position_embeddings',
    layer_norm_eps: 'layer_norm_epsilon',
    local_windows: 'window_size',
  },

  coreConfig(config) {
    const hidden = positiveInteger(config, 'hidden_size');
    const heads = positiveInteger(config, 'num_heads');
    requireHeadsDivide(hidden, heads, 'hidden_size', 'num_heads');
    const layers = positiveInteger(config, 'num_layers');
    const kinds = expandAttentionTypes(config.attention_types ?? DEFAULT_ATTENTION_TYPES);
    if (kinds.length !== layers) {
      throw typeError(
        'config.json',
        `attention_types describe ${kinds.length} layers but num_layers is ${layers}`,
      );
    }
    const window = kinds.includes('local') ? positiveInteger(config, 'window_size') : 0;
    return {
      architecture: 'gpt_neo',
      layers,
      heads,
      hidden,
      intermediate: positiveInteger(config, 'intermediate_size', 4 * hidden),
      vocab: positiveInteger(config, 'vocab_size'),
      maxPositions: positiveInteger(config, 'max_position_embeddings'),
      layerNormEps: positiveNumber(config, 'layer_norm_epsilon', 1e-5),
      activation: activation(config, 'activation_function', 'gelu_new'),
      lmHead: true,
      localWindows: kinds.map((kind) => (kind === 'local' ? window : 0)),
    };
  },

  keys(tensors) {
    return gptFamilyKeys(tensors, 'GPT-Neo', {
      'attention.query': 'attn.attention.q_proj',
      'attention.key': 'attn.attention.k_proj',
      'attention.value': 'attn.attention.v_proj',
      'attention.output': 'attn.attention.out_proj',
    });
  },
};
