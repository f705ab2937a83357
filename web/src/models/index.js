// attnlens/models: real transformer checkpoints run on attnlens' own kernels, by config.json's
// model_type: gpt2, gpt_neo, bert, llama, qwen2, vit, dinov2,
// dinov2_with_registers, marian (SUPPORTED_MODEL_TYPES, from architectures/index.js;
// test/block-layouts.test.js holds this list to it), and llama2.c checkpoints
// (files/llama2c.js) on the llama unit. Vision models (vit, dinov2, dinov2_with_registers) load
// as a VisionModel (vision-model.js) whose run() takes a picture; Marian (an encoder-decoder)
// translates (translate.js).
// Contract: docs/JS_API.md ("attnlens/models"); types: ../../models.d.ts.

export { loadModel, MODEL_OPTIONS } from './load-model.js';
export { RUN_OPTIONS } from './model.js';
export { MODEL_BACKENDS, MODEL_WEBGPU_MIN_FLOPS } from './model-backend.js';
export { IMAGE_RUN_OPTIONS } from './vision-model.js';
export { GENERATE_OPTIONS } from './generate.js';
export { TRANSLATE_OPTIONS } from './translate.js';
export { HEAD_SCORE_OPTIONS } from './head-probe.js';
export { HEAD_EFFECTS_OPTIONS } from './head-effects.js';
export { ABLATION_MODES } from './ablation.js';
export { SUPPORTED_MODEL_TYPES, VISION_MODEL_TYPES } from './architectures/index.js';
export { describeModel, DESCRIBE_OPTIONS } from './describe-model.js';
export {
  loadModelFiles,
  listModelFiles,
  clearModelCache,
  BUNDLED_MODELS,
  LLAMA2C_TOKENIZER_URL,
} from './files/index.js';
export { createTokenizer } from './tokenizer.js';
export { attentionRollout, MAX_ROLLOUT_WORK } from '../interpret/rollout.js';
export { attentionFlow, FLOW_LIMITS } from '../interpret/flow.js';
export { attentionSinks } from '../interpret/sinks.js';
export { createMarianTokenizer } from './marian-tokenizer.js';
