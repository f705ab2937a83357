// attnlens/models: real transformer checkpoints run on attnlens' own kernels, by config.json's
// model_type: gpt2, gpt_neo, bert, llama, qwen2 (SUPPORTED_MODEL_TYPES, from
// architectures/index.js; test/block-layouts.test.js holds this list to it).
// Contract: docs/JS_API.md ("attnlens/models"); types: ../../models.d.ts.

export { loadModel, MODEL_OPTIONS } from './load-model.js';
export { RUN_OPTIONS } from './model.js';
export { SUPPORTED_MODEL_TYPES } from './architectures/index.js';
export { describeModel, DESCRIBE_OPTIONS } from './describe-model.js';
export { loadModelFiles, listModelFiles, clearModelCache } from './files/index.js';
export { createTokenizer } from './tokenizer.js';
