// The text-to-attention building blocks: tokens, embeddings, seeded weights and their caps.
// (analyze() and analyzePair(), which run them through the engine, live in ../analyze.js.)

export { tokenize } from './tokenize.js';
export { embed, positionEncoding, tokenFeatures } from './embed.js';
export { projectionWeights } from './weights.js';
export { MAX_TEXT_LENGTH, MAX_TOKENS, MAX_MODEL_DIM, MAX_HEADS } from './limits.js';
export { fingerprint } from './hash.js';
