// attnlens/train: a small GPT trained in a worker on attnlens' own kernels, with every head's
// attention to watch as it learns. Contract: docs/JS_API.md ("Training"); types: ../../train.d.ts.

export { createTrainer, Trainer } from './trainer.js';
export { TRAINER_OPTIONS, TRAIN_OPTIONS } from './options.js';
export { SAMPLE_TEXTS, repeatedRandomSequences, RepeatedSequences } from './corpora.js';
export { headScores, HEAD_LABEL_THRESHOLD } from '../interpret/head-scores.js';
