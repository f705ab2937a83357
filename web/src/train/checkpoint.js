// A trained model as a GPT-2 checkpoint in the Hugging Face layout, which loadModel()
// (attnlens/models) reads back: config.json, model.safetensors (GPT2LMHeadModel's key names,
// Conv1D weights [in, out], f32) and the vocabulary's tokenizer.json.
//
// The trainer's parameters already have GPT-2's names and layouts (gpt.h), so the file is a
// renaming, with two additions: an attention-only model gets MLP blocks of width 1 whose weights
// are zero (gelu(0) = 0, so they add nothing: the same forward pass), and a temperature other
// than 1 is folded into the query projection (q / t gives logits q.k / t), since GPT-2's config
// has no temperature. A model trained without the final layer norm (finalNorm: false) says so in
// the config's own "attnlens" block; only attnlens reads that.

import { gpt2 } from '../models/architectures/gpt2.js';
import { writeSafetensors } from '../models/files/safetensors.js';

const encodeJson = (value) => new TextEncoder().encode(JSON.stringify(value, null, 2));

/**
 * @param {object} config the trainer's checked config (options.js)
 * @param {{ name, shape, data: Float32Array }[]} parameters every parameter (copies)
 * @param {{ temperature, steps, vocabulary }} state the temperature to fold in, the steps
 *   trained and the vocabulary (vocabularies.js)
 * @returns {Record<string, Uint8Array>} file name -> bytes
 */
export function gpt2Checkpoint(config, parameters, { temperature, steps, vocabulary }) {
  const { layers, width } = config;
  const tensors = new Map(parameters.map((p) => [p.name, { shape: p.shape, data: p.data }]));
  for (let l = 0; l < layers; l++) {
    const p = `layers.${l}.`;
    if (config.attentionOnly) {
      const zeros = (shape) => ({ shape, data: new Float32Array(shape[0] * (shape[1] ?? 1)) });
      tensors.set(`${p}mlp_norm.weight`, { shape: [width], data: new Float32Array(width).fill(1) });
      tensors.set(`${p}mlp_norm.bias`, zeros([width]));
      tensors.set(`${p}mlp.input.weight`, zeros([width, 1]));
      tensors.set(`${p}mlp.input.bias`, zeros([1]));
      tensors.set(`${p}mlp.output.weight`, zeros([1, width]));
      tensors.set(`${p}mlp.output.bias`, zeros([width]));
    }
    if (temperature !== 1) {
      const qkv = tensors.get(`${p}attention.qkv.weight`).data; // [width, 3 width]: q | k | v
      for (let i = 0; i < width; i++) {
        for (let j = 0; j < width; j++) qkv[i * 3 * width + j] /= temperature;
      }
      const bias = tensors.get(`${p}attention.qkv.bias`).data;
      for (let j = 0; j < width; j++) bias[j] /= temperature;
    }
  }
  // GPT2LMHeadModel's key names, from the same table loadModel reads them with.
  const keyFor = gpt2.keys({ has: (key) => key.startsWith('transformer.') });
  const entries = new Map(
    [...tensors].map(([name, { shape, data }]) => [keyFor(name), { dtype: 'F32', shape, data }]),
  );
  const files = {
    'config.json': encodeJson({
      model_type: 'gpt2',
      architectures: ['GPT2LMHeadModel'],
      vocab_size: config.vocab,
      n_positions: config.context,
      n_ctx: config.context,
      n_embd: width,
      n_layer: layers,
      n_head: config.heads,
      n_inner: config.attentionOnly ? 1 : config.mlpWidth,
      activation_function: 'gelu_new',
      layer_norm_epsilon: 1e-5,
      scale_attn_weights: true,
      tie_word_embeddings: true,
      attnlens: {
        trainedSteps: steps,
        attentionOnly: config.attentionOnly,
        // false: no ln_f (and no ln_f tensors), which loadModel() reads (architectures/gpt2.js).
        finalNorm: config.finalNorm,
        temperatureFolded: temperature,
        vocabulary: vocabulary.kind,
      },
    }),
    'model.safetensors': writeSafetensors(entries, { format: 'pt' }),
  };
  for (const [name, json] of Object.entries(vocabulary.files())) files[name] = encodeJson(json);
  return files;
}
