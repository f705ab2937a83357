// Type declarations of the attnlens/train entry (hand-written; checked by test/types with
// `tsc --noEmit --strict`). The contract they describe is docs/JS_API.md ("Training").

import type { ErrorCode } from './index.js';

export interface TokenizerFiles {
  json: Record<string, unknown>;
  config?: Record<string, unknown> | null;
}

export type TrainerVocabulary =
  | 'bytes'
  | { characters: string }
  | {
      /** A loaded model's tokenizer (attnlens/models' model.tokenizer), or its files. */
      tokenizer: { readonly files: TokenizerFiles } | TokenizerFiles;
    };

export interface TrainerConfig {
  /** 1..64, default 2. */
  layers?: number;
  /** 1..256, dividing width; default 4. */
  heads?: number;
  /** Model width, 1..8192, default 64. */
  width?: number;
  /** Positions, 1..8192, default 64. */
  context?: number;
  /** Default 'bytes'. */
  vocabulary?: TrainerVocabulary;
  /** No MLP blocks (default false). */
  attentionOnly?: boolean;
  /** Default 4 * width. */
  mlpWidth?: number;
  /**
   * false leaves out GPT-2's final layer norm (default true). On repeated random sequences this
   * (with tokenEmbeddingStd 0.2) is what lets an induction head form in seconds; save() then
   * writes a checkpoint that attnlens reads back and the transformers library does not.
   */
  finalNorm?: boolean;
  /** The token embedding's initial standard deviation, in (0, 1] (default 0.02, GPT-2's). */
  tokenEmbeddingStd?: number;
  /** The initial parameters' seed, and the batches' default (default 1). */
  seed?: number;
  /** The worker's wasm flavour (default 'wasm': the best the engine validates). */
  backend?: 'wasm' | 'wasm-relaxed' | 'wasm-simd' | 'wasm-scalar';
  /** Threads of the worker's engine (default 1; 'auto' as createAttention). */
  threads?: 'auto' | number;
  /** The .wasm to load instead of the packaged one. */
  wasmUrl?: string | URL;
}

export interface TemperatureSchedule {
  /** The temperature at step 0. */
  from: number;
  /** The temperature from step `steps` on. */
  to: number;
  steps: number;
  /** Default 'geometric'. */
  curve?: 'geometric' | 'linear';
}

export interface TrainStepEvent {
  /** Steps taken, this one included. */
  step: number;
  /** This step's batch loss (mean cross-entropy, nats), before its update. */
  loss: number;
  /** The gradients' global norm before clipping. */
  gradNorm: number;
  clipped: boolean;
  temperature: number;
  learningRate: number;
  /** Tokens trained on so far. */
  tokens: number;
  /** This step's time, and the time of every step so far (ms, in the worker). */
  ms: number;
  trainingMs: number;
}

export interface TrainToken {
  id: number;
  text: string;
  /** UTF-16 offsets into the text; null for tokens given as ids. */
  start: number | null;
  end: number | null;
}

/** The first whose score passes HEAD_LABEL_THRESHOLD: induction, then previous-token, then sink. */
export type HeadLabel = 'induction' | 'previous-token' | 'sink' | null;

export interface HeadScore {
  layer: number;
  head: number;
  /** Mean row entropy of the head's attention over the keys each row sees (nats). */
  entropy: number;
  /** Mean weight on the previous token. */
  previousToken: number;
  /** Mean weight on the token after the previous occurrence of each token (null: none). */
  induction: number | null;
  /** Mean weight on the first token and the tokenizer's special tokens (null: no row sees one). */
  sink: number | null;
  label: HeadLabel;
}

export interface TrainSnapshot {
  step: number;
  /** The last step's loss (null at step 0). */
  loss: number | null;
  temperature: number;
  /** The probe's tokens and ids. */
  tokens: TrainToken[];
  ids: Int32Array;
  /** [layers, heads, N, N]: row i of (layer, head) is what token i attends to. */
  attention: Float32Array;
  heads: HeadScore[];
}

export interface TrainOptions {
  /** Steps of this run (default 1000). */
  steps?: number;
  /** Sequences per step (default 16). */
  batchSize?: number;
  /** Tokens each sequence predicts, at most the context (default the context). */
  sequenceLength?: number;
  /** AdamW (default 3e-3, 0.1, 0.9, 0.95, 1e-8); clipping to a global norm (default 1, 0: off). */
  learningRate?: number;
  weightDecay?: number;
  beta1?: number;
  beta2?: number;
  epsilon?: number;
  maxGradNorm?: number;
  /** The attention temperature over the trainer's steps (default 1). */
  temperatureSchedule?: number | TemperatureSchedule;
  /** A snapshot every this many steps, and at the start of a run (default 10; 0: none). */
  snapshotEvery?: number;
  /** What snapshots look at (default: the corpus's first sequence, or a random one's copies). */
  probe?: string | number[] | Int32Array;
  /** The batches' seed (default the trainer's). */
  seed?: number;
  onStep?: (event: TrainStepEvent) => void;
  onSnapshot?: (snapshot: TrainSnapshot) => void;
}

export interface TrainResult {
  steps: number;
  loss: number | null;
  /** True when pause() stopped the run; resume() continues it. */
  paused: boolean;
  remaining: number;
}

export interface TrainerInfo {
  layers: number;
  heads: number;
  width: number;
  context: number;
  attentionOnly: boolean;
  /** 0 for an attention-only model. */
  mlpWidth: number;
  finalNorm: boolean;
  tokenEmbeddingStd: number;
  seed: number;
  vocabulary: { kind: 'bytes' | 'characters' | 'tokenizer'; size: number };
  parameters: number;
  backend: 'wasm-relaxed' | 'wasm-simd' | 'wasm-scalar';
  threads: number;
}

export interface TrainerAttention {
  tokens: TrainToken[];
  attention: Float32Array;
  heads: HeadScore[];
  temperature: number;
}

export interface TrainerParameter {
  name: string;
  shape: number[];
  data: Float32Array;
}

export declare class Trainer {
  private constructor();
  readonly info: TrainerInfo;
  readonly steps: number;
  readonly loss: number | null;
  readonly losses: Float64Array;
  readonly snapshots: TrainSnapshot[];
  readonly temperature: number;
  readonly disposed: boolean;
  train(
    corpus: string | number[] | Int32Array | RepeatedSequences,
    options?: TrainOptions,
  ): Promise<TrainResult>;
  resume(): Promise<TrainResult>;
  pause(): Promise<void>;
  step(): Promise<TrainStepEvent>;
  attention(
    input: string | number[] | Int32Array,
    options?: { temperature?: number },
  ): Promise<TrainerAttention>;
  encode(text: string): Promise<{ ids: Int32Array; tokens: TrainToken[] }>;
  parameters(): Promise<TrainerParameter[]>;
  setParameters(tensors: Record<string, Float32Array> | Map<string, Float32Array>): Promise<void>;
  /** config.json, model.safetensors, tokenizer.json (+ tokenizer_config.json): loadModel() reads them. */
  save(options?: { temperature?: number }): Promise<File[]>;
  dispose(): void;
}

export declare function createTrainer(config?: TrainerConfig): Promise<Trainer>;

export declare class RepeatedSequences {
  private constructor();
  readonly kind: 'repeated-random';
  readonly minLength: number;
  readonly maxLength: number;
  readonly repeats: number;
  readonly vocabularySize: number | null;
  readonly seed: number;
  readonly minimumRow: number;
  sample(index: number, rowLength: number, vocabularySize: number): Int32Array;
}

export declare function repeatedRandomSequences(options?: {
  length?: number | { min: number; max: number };
  repeats?: number;
  vocabularySize?: number;
  seed?: number;
}): RepeatedSequences;

export declare const SAMPLE_TEXTS: { readonly en: string; readonly zh: string };
export declare const TRAINER_OPTIONS: readonly string[];
export declare const TRAIN_OPTIONS: readonly string[];
export declare const HEAD_LABEL_THRESHOLD: number;
export declare function headScores(
  attention: Float32Array,
  ids: ArrayLike<number>,
  layers: number,
  heads: number,
): HeadScore[];

export type { ErrorCode };
