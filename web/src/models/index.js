// attnlens/models: real transformer checkpoints (GPT-2, GPT-Neo, BERT, Llama, Qwen2, llama2.c)
// run on attnlens' own kernels. Contract: docs/JS_API.md ("attnlens/models"); types:
// ../../models.d.ts.

export { loadModel, MODEL_OPTIONS } from './load-model.js';
export { RUN_OPTIONS } from './model.js';
export { HEAD_SCORE_OPTIONS } from './head-probe.js';
export { SUPPORTED_MODEL_TYPES } from './architectures/index.js';
export { describeModel, DESCRIBE_OPTIONS } from './describe-model.js';
export {
  loadModelFiles,
  listModelFiles,
  clearModelCache,
  BUNDLED_MODELS,
  LLAMA2C_TOKENIZER_URL,
} from './files/index.js';
export { createTokenizer } from './tokenizer.js';
