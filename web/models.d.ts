// Type declarations of the attnlens/models entry (hand-written; checked by test/types with
// `tsc --noEmit --strict`). The contract they describe is docs/JS_API.md ("attnlens/models").

import type { Attention, ErrorCode, WebGpuOptions } from './index.js';
import type { HeadScore } from './train.js';

// ---- files ----------------------------------------------------------------------------------

export type ModelSource =
  | string // a Hub id ('gpt2'), a folder URL, a Node folder path, 'stories260K' (bundled), or a
  // llama2.c checkpoint: a .bin URL, Node path or Hub path ('karpathy/tinyllamas/stories15M.bin'),
  // or a GGUF file the same ways ('ggml-org/models/tinyllamas/stories260K.gguf')
  | URL // a folder URL (http:, https:, or file: in Node)
  | File[]
  | FileList;

export interface ModelProgress {
  file: string;
  loaded: number;
  /** The file's size when the source says it up front, else null. */
  total: number | null;
  totalLoaded: number;
  totalBytes: number | null;
}

export interface ModelFilesOptions {
  /** Hub ids only: a branch, tag, commit or 'refs/pr/N' (default 'main'). */
  revision?: string;
  /** Cancels downloads: the promise rejects with an AbortError. */
  signal?: AbortSignal;
  onProgress?: (progress: ModelProgress) => void;
  /** Browsers: keep and reuse the files in Cache Storage (default true). */
  cache?: boolean;
  /** Default 'https://huggingface.co'. */
  hubUrl?: string;
  fetch?: typeof globalThis.fetch;
  /**
   * llama2.c checkpoints only (a GGUF file carries its tokenizer): their tok*.bin tokenizer, as
   * a URL or path (resolved against the checkpoint's), a File, or the bytes. Default:
   * tok{vocab_size}.bin or tokenizer.bin beside it.
   */
  tokenizer?: string | URL | Blob | Uint8Array | ArrayBuffer;
}

export type TensorDtype =
  'F64' | 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'I16' | 'I8' | 'U8' | 'BOOL' | string;

export interface TensorSet {
  readonly names: string[];
  has(name: string): boolean;
  info(name: string): { name: string; dtype: TensorDtype; shape: number[]; byteLength: number };
  readFloat32(name: string, target?: Float32Array): Float32Array;
  readFloat16(name: string, target?: Uint16Array): Uint16Array;
  /**
   * The matrix as Q8_0 rows of [out, in] (34 bytes per 32 values): a GGUF Q8_0 tensor's own
   * blocks, any float tensor quantised as llama.cpp's quantize_row_q8_0.
   */
  readQ8_0(
    name: string,
    target: Uint8Array,
    layout: { inFeatures: number; outFeatures: number; transposed: boolean },
  ): Uint8Array;
  /**
   * The matrix as 4-bit rows of [out, in] (24 bytes per 32 values: f32 scale s, f32 min m, 16
   * bytes of nibbles q; value s * q - m): a GGUF Q4_0 or Q4_K tensor's blocks with their values
   * unchanged, any other tensor quantised as llama.cpp's quantize_row_q4_0.
   */
  readQ4(
    name: string,
    target: Uint8Array,
    layout: { inFeatures: number; outFeatures: number; transposed: boolean },
  ): Uint8Array;
  release(): void;
}

export interface ModelFiles {
  source: {
    kind: 'hub' | 'url' | 'files' | 'folder' | 'file' | 'bundled';
    id?: string;
    revision?: string;
    url?: string;
    /**
     * Present for single-file models: 'llama2.c' (version 0, 1 or 2) or 'gguf' (version 2 or 3).
     */
    format?: 'llama2.c' | 'gguf';
    version?: number;
    /** Hub paths of llama2.c checkpoints and GGUF files: the file in the repo. */
    file?: string;
    fromCache: boolean;
  };
  config: Record<string, unknown>;
  /** Text models; a vision model's files have `preprocessor` instead. */
  tokenizer?: { json: Record<string, unknown>; config: Record<string, unknown> | null };
  /** Vision models (VISION_MODEL_TYPES): preprocessor_config.json. */
  preprocessor?: Record<string, unknown>;
  tensors: TensorSet;
  /** Total bytes of the weight files. */
  bytes: number;
}

/** The files of one model, read and validated (no model is built). */
export declare function loadModelFiles(
  source: ModelSource,
  options?: ModelFilesOptions,
): Promise<ModelFiles>;

export interface ModelFileListing {
  source: {
    kind: 'hub' | 'url' | 'files' | 'folder' | 'file' | 'bundled';
    id?: string;
    revision?: string;
    url?: string;
    format?: 'llama2.c' | 'gguf';
    version?: number;
    file?: string;
  };
  /** Every file a load would read, with its size (null where the source cannot say). */
  files: { name: string; size: number | null }[];
  /** Required files the source lacks ('tokenizer.json'): loading would fail on them. */
  missing: string[];
  weightFiles: string[];
  /** Total of the weight files, or null when a size is unknown. */
  weightBytes: number | null;
  /** Total of every file, or null when a size is unknown. */
  downloadBytes: number | null;
  /** Hub and URL sources in browsers: every file is in the model cache (no network needed). */
  allCached: boolean | null;
  /** config.json (read through the cache: the one small file downloaded). */
  config: Record<string, unknown>;
}

/** The files a load would read and their sizes, without downloading the weights. */
export declare function listModelFiles(
  source: ModelSource,
  options?: Omit<ModelFilesOptions, 'onProgress'>,
): Promise<ModelFileListing>;

/** Drops every model file kept in the browser's Cache Storage; false where there is none. */
export declare function clearModelCache(): Promise<boolean>;

// ---- tokenizer --------------------------------------------------------------------------------

export interface ModelToken {
  id: number;
  /** The vocabulary entry ('Ġthe', '##ing', '[CLS]'). */
  text: string;
  /**
   * UTF-16 offsets into the text (segment 0) or the pair (segment 1): the piece of text the token
   * came from, leading space included (' upon' for '▁upon' or 'Ġupon'). Byte pieces of one
   * character share its span; start = end for added specials and for a '▁' the tokenizer put in
   * front of the text.
   */
  start: number;
  end: number;
  special: boolean;
  segment: number;
}

export interface ModelTokenizer {
  encode(
    text: string,
    options?: { pair?: string; addSpecialTokens?: boolean },
  ): { ids: number[]; typeIds: number[]; tokens: ModelToken[] };
  decode(ids: ArrayLike<number>, options?: { skipSpecialTokens?: boolean }): string;
  /**
   * What token `id` adds to the decoded text of `ids` when appended (' upon' for '▁upon'; '' for
   * a special token); `partial` when it ends inside a character (its text is then U+FFFD).
   */
  appendedText(ids: ArrayLike<number>, id: number): { text: string; partial: boolean };
  idToToken(id: number): string | undefined;
  tokenToId(token: string): number | undefined;
  readonly vocabSize: number;
  readonly maxLength: number | null;
  readonly special: Partial<
    Record<'mask' | 'cls' | 'sep' | 'pad' | 'bos' | 'eos' | 'unk', { id: number; text: string }>
  >;
  /** The files it was made from (attnlens/train's vocabulary: { tokenizer }). */
  readonly files: { json: Record<string, unknown>; config: Record<string, unknown> | null };
}

export declare function createTokenizer(files: {
  json: Record<string, unknown>;
  config?: Record<string, unknown> | null;
}): Promise<ModelTokenizer>;

/** Marian's tokenizer (opus-mt's source.spm, target.spm, vocab.json): docs/MODEL_FILES.md. */
export interface MarianTokenizer {
  /** The source side: ids with '</s>' last, each token's span in `text`. */
  encode(
    text: string,
    options?: { addSpecialTokens?: boolean },
  ): { ids: number[]; typeIds: number[]; tokens: ModelToken[] };
  /** A target text through target.spm (and target_vocab.json with separate_vocabs). */
  encodeTarget(
    text: string,
    options?: { addSpecialTokens?: boolean },
  ): { ids: number[]; typeIds: number[]; tokens: ModelToken[] };
  decode(ids: ArrayLike<number>, options?: { skipSpecialTokens?: boolean }): string;
  appendedText(ids: ArrayLike<number>, id: number): { text: string; partial: boolean };
  idToToken(id: number): string;
  tokenToId(token: string): number | undefined;
  readonly vocabSize: number;
  readonly maxLength: number;
  readonly separateVocabs: boolean;
  /** The target languages a multi-target model names ('>>cmn_Hans<<', ...). */
  readonly languageCodes: readonly string[];
  readonly special: Record<'eos' | 'unk' | 'pad', { id: number; text: string }>;
}

export declare function createMarianTokenizer(files: {
  sourceSpm: Uint8Array;
  targetSpm: Uint8Array;
  vocab: Record<string, number>;
  targetVocab?: Record<string, number> | null;
  config?: Record<string, unknown> | null;
}): Promise<MarianTokenizer>;

// ---- models -----------------------------------------------------------------------------------

export type ModelType =
  | 'gpt2'
  | 'gpt_neo'
  | 'bert'
  | 'llama'
  | 'qwen2'
  | 'vit'
  | 'dinov2'
  | 'dinov2_with_registers'
  | 'marian';
/** How a model's weight matrices are stored in wasm memory. */
// generated from model.dtypes (web/scripts/block-layouts.mjs)
export type WeightDtype = 'f32' | 'f16' | 'q8' | 'q4';
/**
 * Per storage type ('f32' vectors and what else stays f32, 'f16' embeddings under 'q8'/'q4',
 * 'q8' Q8_0 and 'q4' 4-bit linear layers): tensors and bytes as written (packing pads each matrix
 * to whole 8-column panels; `bytes` of the model's info counts that).
 */
export type WeightTypes = Readonly<
  Partial<Record<WeightDtype, { readonly tensors: number; readonly bytes: number }>>
>;
export declare const SUPPORTED_MODEL_TYPES: readonly ModelType[];
/** The model types that read pictures: loadModel gives a VisionModel for them. */
export declare const VISION_MODEL_TYPES: readonly ModelType[];
/** The models attnlens carries, loadable by name with no network: ['stories260K']. */
export declare const BUNDLED_MODELS: readonly string[];
/** Where llama2.c's tokenizer.bin (Llama 2's 32,000 tokens, for stories15M/42M/110M) is. */
export declare const LLAMA2C_TOKENIZER_URL: string;
export declare const MODEL_OPTIONS: readonly string[];
/** Where a model's forward pass runs (loadModel's `backend`). */
export type ModelBackend = 'wasm' | 'webgpu' | 'auto';
export declare const MODEL_BACKENDS: readonly ModelBackend[];
/** 'auto' runs a forward pass on WebGPU from this many flops (2 x parameters x N + attention). */
export declare const MODEL_WEBGPU_MIN_FLOPS: number;
export declare const RUN_OPTIONS: readonly string[];
/** The options Model.generate() accepts. */
export declare const GENERATE_OPTIONS: readonly string[];
/** The options Model.translate() accepts. */
export declare const TRANSLATE_OPTIONS: readonly string[];
/** The options Model.headScores() accepts. */
export declare const HEAD_SCORE_OPTIONS: readonly string[];
/** The options Model.headEffects() accepts. */
export declare const HEAD_EFFECTS_OPTIONS: readonly string[];
/** How run({ ablate }) replaces a head's output. */
// generated from model.ablationModes (web/scripts/block-layouts.mjs)
export type AblationMode = 'zero' | 'mean';
export declare const ABLATION_MODES: readonly AblationMode[];

export interface LoadModelOptions extends ModelFilesOptions {
  /**
   * Storage of the weight matrices in wasm memory: 'f32' (default), 'f16' (half the bytes) or
   * 'q8' (linear layers as Q8_0 8-bit blocks, ~27% of f32's bytes; the other matrices f16).
   */
  dtype?: WeightDtype;
  /**
   * The engine to run on, as analyze() takes it: the weights live in its wasm memory, its wasm
   * flavour and threads run the forward pass (whatever its backend: WebGPU is not used), and it
   * outlives the model. It must come from createAttention({ models: true }) (the wasm module with
   * the models' bindings; others are refused before any download). Default: the model opens its
   * own (createAttention({ backend: 'wasm', models: true })) and closes it at dispose().
   */
  attention?: Attention;
  /**
   * Where run() computes the forward pass: 'wasm' (default), 'webgpu' (GPT-2, the llama family
   * and ViT so far; rejects with code 'unavailable' without WebGPU and 'out_of_range' for another
   * architecture, both naming 'backend') or 'auto' (WebGPU for runs of at least webgpu.minFlops on a hardware
   * adapter, else wasm). The weights stay in wasm memory too; info.backendReason says why.
   */
  backend?: ModelBackend;
  /** With backend 'webgpu' or 'auto': createAttention's options (minFlops: the forward's flops). */
  webgpu?: WebGpuOptions;
}

export interface ModelInfo {
  /** The forward pass that runs: 'gpt2', 'gpt_neo', 'bert' or 'llama' (for qwen2 too). */
  // generated from model.architectures (web/scripts/block-layouts.mjs)
  readonly architecture: 'gpt2' | 'gpt_neo' | 'bert' | 'llama' | 'vit' | 'marian';
  /** config.json's model_type. */
  readonly modelType: string;
  readonly layers: number;
  readonly heads: number;
  /** K/V heads (grouped-query attention: query head h reads K/V head h / (heads / kvHeads)). */
  readonly kvHeads: number;
  readonly headDim: number;
  readonly hidden: number;
  readonly vocab: number;
  readonly maxPositions: number;
  readonly parameters: number;
  /** Bytes the weights take in wasm memory. */
  readonly bytes: number;
  readonly dtype: WeightDtype;
  /** The storage types the weights are kept in, and the bytes of their values as written. */
  readonly weightTypes: WeightTypes;
  /** GPT models: each query sees only earlier tokens; predictions are next tokens. */
  readonly causal: boolean;
  /** False for a BERT checkpoint without its masked-LM head (BertModel): no predictions. */
  readonly predicts: boolean;
  /** 'webgpu' while run() has a GPU forward (loadModel's backend 'webgpu' or 'auto'). */
  readonly backend: 'wasm-relaxed' | 'wasm-simd' | 'wasm-scalar' | 'webgpu';
  /** Why the forward runs where it does ("backend 'wasm' (loadModel's default)", ...). */
  readonly backendReason: string;
  /** While run() has a GPU forward: the bytes its weights take on the GPU (the model's dtype:
   * halves for 'f16', f32 otherwise). */
  readonly gpuBytes?: number;
  /** Each layer's own mask in the mask notation ('causal', 'causal+local:255', 'global'). */
  readonly layerMasks: readonly string[];
}

export interface TokenPrediction {
  id: number;
  /** The vocabulary entry ('Ġthe'). */
  token: string;
  /**
   * What appending it adds to the text (' the' for 'Ġthe' or '▁the', 'ing' for '##ing', '' for a
   * special token): the text plus predictions[0].text is the model's greedy continuation.
   */
  text: string;
  /** It ends inside a character (a byte piece such as '<0xE4>'): its text is U+FFFD. */
  partial: boolean;
  /** Softmax probability. */
  p: number;
}

export interface MaskPrediction {
  /** The [MASK] token's position. */
  position: number;
  top: TokenPrediction[];
}

export interface RunOptions {
  /** BERT: a second text ([CLS] text [SEP] pair [SEP], token types 0 then 1). */
  pair?: string;
  /** One mask for every layer, or one per layer, in the mask notation ('causal+local:2'). */
  masks?: string | string[];
  /** Predictions per position (default 10). */
  topK?: number;
  /** Adds logits [N, vocab] of every position. */
  returnLogits?: boolean;
  /** Keep the first maxPositions tokens of a longer text instead of refusing it. */
  truncate?: boolean;
  /** A layer index: adds that layer's q, k and v (`projections`). */
  projections?: number;
  /** Adds the attention rollout of every position (true) or of these positions (`rollout`). */
  rollout?: boolean | number[];
  /**
   * Adds the attention flow of one position (`flow`): true for the one the model predicts from
   * (the last token; BERT's first [MASK], else [CLS]). At most FLOW_LIMITS' tokens and layers.
   */
  flow?: boolean | number;
  /** Adds each head's share of attention on the first token and on BOS/[CLS] (`sinks`). */
  sinks?: boolean;
  /**
   * Heads whose attention output (their columns of the merged heads, before the output
   * projection) is replaced: 'zero' (default) by 0, 'mean' by its mean over this text's
   * positions. Each head at most once.
   */
  ablate?: HeadAblation[];
  /** Adds the logit lens (`lens`): true for the top 5 tokens, or { topK } (1 to 1024). */
  lens?: boolean | { topK?: number };
}

export interface HeadAblation {
  layer: number;
  head: number;
  mode?: AblationMode;
}

/** A token the logit lens reads from one hidden state at one position. */
export interface LensToken {
  id: number;
  token: string;
  /** What it adds to the text up to its position (causal models) or before it (BERT). */
  text: string;
  /** Its probability under the final norm and output layer applied to that hidden state. */
  p: number;
}

/** The logit lens: each hidden state through the model's own final norm and output layer. */
export interface LogitLens {
  topK: number;
  /** [layers + 1, N, topK], best first: state 0 is the embeddings', state l + 1 layer l's. */
  ids: Int32Array;
  probabilities: Float32Array;
  /** top[state][position]: the topK tokens, best first. */
  top: LensToken[][][];
}

export interface HeadEffectsOptions {
  /** The token whose log-probability is measured: an id or a string of one token (default:
   * the top prediction). */
  target?: number | string;
  /** The position that predicts it (default: the last token; BERT: the first [MASK]). */
  position?: number;
  /** Cancels between two layers: the promise rejects with an AbortError. */
  signal?: AbortSignal;
  /** After each layer's heads. */
  onProgress?: (progress: { done: number; total: number }) => void;
}

export interface HeadEffect {
  layer: number;
  head: number;
  /** The target's log-probability with this head zero-ablated. */
  logProb: number;
  /** logProb minus the clean run's: negative when the head supports the target. */
  delta: number;
  /** The ablated run's most likely token. */
  top: { id: number; p: number };
}

export interface ModelHeadEffects {
  position: number;
  target: { id: number; token: string; text: string; partial: boolean };
  /** The clean run's log-probability of the target, and its probability. */
  logProb: number;
  p: number;
  /** Every head, the most negative delta first. */
  heads: HeadEffect[];
  /** Forward passes run (1 + layers * heads) and the layers they ran in all. */
  forwards: number;
  layersRun: number;
}

/** Attention rollout (Abnar and Zuidema 2020): output positions over the input tokens. */
export interface AttentionRolloutRows {
  positions: number[];
  /** [positions, N]: row r is how much positions[r] owes each input token; each sums to 1. */
  values: Float32Array;
}

/** Attention flow (Abnar and Zuidema 2020): the max-flow of one position to each input. */
export interface AttentionFlowRow {
  position: number;
  /** [N]: each input token's share of the flow (sums to 1). */
  values: Float32Array;
}

export interface AttentionSinks {
  /** [layers, heads]: the mean share of a row's attention on the first token. */
  first: Float32Array;
  /** [layers, heads]: the mean share on the BOS ([CLS]) token; null when the text has none. */
  bos: Float32Array | null;
  /** The rows averaged: all N, or N - 1 for causal models (row 0 sees only the first token). */
  rows: number;
}

/** The shape of a run's attention [layers, heads, N, N]. */
export interface AttentionShape {
  layers: number;
  heads: number;
  n: number;
}

/** Rollout rows (default every position) of [layers, heads, N, N] attention: [rows, N]. */
export declare function attentionRollout(
  attention: Float32Array,
  shape: AttentionShape,
  options?: { rows?: number[] },
): Float32Array;
/** The most rows x layers x N^2 multiply-adds attentionRollout() takes (2^30). */
export declare const MAX_ROLLOUT_WORK: number;
/** The flow of one output position (default N - 1) over the input tokens: [N]. */
export declare function attentionFlow(
  attention: Float32Array,
  shape: AttentionShape,
  options?: { position?: number },
): Float32Array;
/** The largest graph attentionFlow() takes: tokens N, layers, and edges layers x N^2. */
export declare const FLOW_LIMITS: {
  readonly tokens: number;
  readonly layers: number;
  readonly edges: number;
};
/** Each head's share on the first token and on BOS/[CLS] (bos: true per BOS position). */
export declare function attentionSinks(
  attention: Float32Array,
  shape: AttentionShape,
  options?: { causal?: boolean; bos?: boolean[] },
): AttentionSinks;

export interface LayerProjections {
  layer: number;
  /** What the layer multiplies q·k by before its softmax (1/sqrt(headDim); 1 for GPT-Neo). */
  scale: number;
  headDim: number;
  /** [heads, N, headDim] each, as the layer's attention took them (before the scale). */
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
}

export interface ModelRun {
  tokens: ModelToken[];
  /** [layers, heads, N, N]: row i of head h is what token i attends to. */
  attention: Float32Array;
  /**
   * Causal models: the top-k next tokens after the last position. BERT: the top-k fillers of
   * each [MASK] ([] without one, or without an MLM head).
   */
  predictions: TokenPrediction[] | MaskPrediction[];
  logits?: Float32Array;
  /** With `projections: layer`. */
  projections?: LayerProjections;
  /** With `rollout`. */
  rollout?: AttentionRolloutRows;
  /** With `flow`. */
  flow?: AttentionFlowRow;
  /** With `sinks: true`. */
  sinks?: AttentionSinks;
  /** With `ablate`: the ablations, checked, modes filled in. */
  ablated?: Required<HeadAblation>[];
  /** With `lens`. */
  lens?: LogitLens;
  /** Models loaded with backend 'webgpu' or 'auto': the forward that ran this call. */
  backend?: 'wasm-relaxed' | 'wasm-simd' | 'wasm-scalar' | 'webgpu';
}

export interface GenerateOptions {
  /** New tokens at most (default 20); the prompt plus maxTokens must fit maxPositions. */
  maxTokens?: number;
  /** 0 (default): greedy. Above 0: sampled from softmax(logits / temperature). */
  temperature?: number;
  /** Sampling: only the topK most likely tokens (default: all). */
  topK?: number;
  /** Sampling: the most likely tokens up to this probability, in (0, 1] (default 1). */
  topP?: number;
  /** The sampler's seed, a uint32 (default: drawn at random, returned as `seed`). */
  seed?: number;
  /** Cancels between two tokens: the promise rejects with an AbortError. */
  signal?: AbortSignal;
  /**
   * Each new token, as soon as it has run; a promise returned holds the next token back until
   * it settles (a consumer that draws each token sets the pace).
   */
  onToken?: (token: GeneratedToken) => void | Promise<unknown>;
  /** Adds each token's `logits`: the row it was chosen from. */
  returnLogits?: boolean;
}

export interface GeneratedToken {
  id: number;
  /** What it adds to the text before it ('' for a special token such as EOS). */
  text: string;
  /** It ends inside a character: its text is U+FFFD. */
  partial: boolean;
  /** 0 for the first new token. */
  step: number;
  /** [layers, heads, past + 1]: its own row over every earlier token (past = prompt + step). */
  attention: Float32Array;
  /** With returnLogits: [vocab], the logits it was chosen from. */
  logits?: Float32Array;
}

export interface ModelGeneration {
  /** The new ids (EOS included when generation stopped at it). */
  ids: number[];
  /** What the new tokens add to the text, decoded together, without special tokens. */
  text: string;
  tokens: GeneratedToken[];
  /** Each new token's attention row (tokens[i].attention). */
  attention: Float32Array[];
  stopped: 'eos' | 'maxTokens';
  /** The sampler's seed (the one given, or the one drawn). */
  seed: number;
  /** The prompt's run: its tokens and attention [layers, heads, N, N]. */
  prompt: { tokens: ModelToken[]; attention: Float32Array };
}

export interface HeadScoresOptions {
  /** Tokens in the repeated sequence (default 50, or what the model's positions allow). */
  length?: number;
  /** Probes the scores are averaged over, each its own draw (default 4, at most 64). */
  probes?: number;
  /** The draw's seed, a uint32 (default 1). */
  seed?: number;
}

export interface ModelHeadScores {
  /** Layer by layer, head by head: each score averaged over the probes, labelled from them. */
  heads: HeadScore[];
  /** Each probe's token ids: [special tokens before, sequence, sequence, special tokens after]. */
  ids: Int32Array[];
}

export interface TranslateOptions {
  /** Tokens to generate at most (EOS forced at the last); default max_length - 1. */
  maxTokens?: number;
  /** 1: greedy; more: beam search (default config.json's num_beams; at most 16). */
  beams?: number;
  signal?: AbortSignal;
  /**
   * Each new token as it is chosen, with its position `index`. Beam search streams the leading
   * beam: when another takes the lead, its tokens come from the first position that differs
   * (an `index` below the tokens held: drop those from `index` on).
   */
  onToken?: (step: TranslationStep & { index: number }) => void;
  /** Each step's logits too. */
  returnLogits?: boolean;
  /**
   * Surgery on every decoder layer's cross-attention: 'full' (default), 'last' (only the last
   * source token, an RNN's final state), 'mean' (every source token weighted 1/N: the mean of
   * the source), 'local:D' (Luong's local-m window of D either side of min(t, N - 1); 'local'
   * is 'local:2').
   */
  crossMask?: CrossMask;
}

/** translate()'s cross-attention surgeries. */
export type CrossMask = 'full' | 'last' | 'mean' | 'local' | `local:${number}`;

export interface TranslationStep {
  id: number;
  text: string;
  /** The new token's row of the decoder's self-attention: [decoder layers, heads, i + 1]. */
  selfAttention: Float32Array;
  /** Its row of the cross-attention over the source tokens: [decoder layers, heads, N]. */
  crossAttention: Float32Array;
  logits?: Float32Array;
}

export interface Translation {
  text: string;
  source: { ids: number[]; tokens: ModelToken[] };
  /** The decoder's tokens: the start token, the translation, EOS when it ended there. */
  ids: number[];
  /** [encoder layers, heads, N, N]. */
  encoderAttention: Float32Array;
  steps: TranslationStep[];
  beams: number;
  /** Beam search's score of the best hypothesis. */
  score?: number;
  /** The cross-attention surgery applied ('local' written 'local:2'). */
  crossMask: string;
  /**
   * The work done: the encoder ran once; each step ran one token per beam against that beam's
   * KV cache (decoderTokens in all).
   */
  stats: { encoderRuns: number; decoderTokens: number };
}

export interface Model {
  readonly info: ModelInfo;
  /** Where the files came from (fromCache: every file came from the browser's model cache). */
  readonly source: ModelFiles['source'];
  readonly tokenizer: ModelTokenizer;
  run(text: string, options?: RunOptions): Promise<ModelRun>;
  /** An encoder-decoder's (Marian's) translation, token by token, with its attention. */
  translate(text: string, options?: TranslateOptions): Promise<Translation>;
  /**
   * Continues `text` (causal models): the prompt fills a KV cache, then one step per new token
   * (docs/JS_API.md, "Generation").
   */
  generate(text: string, options?: GenerateOptions): Promise<ModelGeneration>;
  /**
   * Every head's scores on seeded probes the model never saw: random ordinary tokens of its
   * vocabulary, twice in a row, in the special tokens its tokenizer adds (docs/JS_API.md,
   * "Head scores").
   */
  headScores(options?: HeadScoresOptions): Promise<ModelHeadScores>;
  /**
   * Which heads matter for one prediction: every head zero-ablated in turn, ranked by the change
   * in the target's log-probability (docs/JS_API.md, "Head ablation and the logit lens").
   */
  headEffects(text: string, options?: HeadEffectsOptions): Promise<ModelHeadEffects>;
  /** Frees the model's wasm memory; later calls throw. */
  dispose(): void;
}

/**
 * A picture: ImageData, ImageBitmap, HTMLImageElement, HTMLCanvasElement, OffscreenCanvas,
 * HTMLVideoElement, a Blob or File (PNG, JPEG, GIF, WebP, BMP), or raw RGBA pixels (Node).
 */
export type ImageInput =
  | { data: Uint8Array | Uint8ClampedArray; width: number; height: number }
  | ImageData
  | ImageBitmap
  | HTMLImageElement
  | HTMLCanvasElement
  | OffscreenCanvas
  | HTMLVideoElement
  | Blob;

export interface ImageRunOptions {
  /** Labels of a classifier's top scores (default 5, at most the label count). */
  topK?: number;
  /**
   * Mask surgery, in the mask notation: one mask for every layer or one per layer, of `global`,
   * `patch:K` (each patch sees the K x K patches around it, K odd, at most 2 * max(rows,
   * columns) - 1; the class token and registers stay global), `tokens:i,j` and `pad:i,j`.
   */
  masks?: string | string[];
  /** Adds the classifier's logits over every label. */
  returnLogits?: boolean;
  /** Adds the model's input: Float32Array [3, height, width], as the preprocessor made it. */
  returnPixelValues?: boolean;
  /**
   * Adds `pooled` [hidden]: ViTModel's pooler (tanh(dense(class token))) where the checkpoint has
   * pooler.dense.*, DINOv2's class token after the final layernorm; a TypeError without either
   * (info.pooling null: ViTForImageClassification).
   */
  returnPooled?: boolean;
  /** Adds `hiddenStates` [layers + 1, tokens, hidden]. */
  returnHiddenStates?: boolean;
  /**
   * Receives the attention and is returned as `attention` (a camera loop reuses one array
   * instead of a fresh one a frame): exactly layers * heads * tokens * tokens elements, else a
   * RangeError (shape_mismatch) naming the length this picture needs.
   */
  attentionBuffer?: Float32Array;
}

export interface ImageRun {
  /**
   * [layers, heads, tokens, tokens]: token 0 the class token, then the registers (DINOv2 with
   * registers), then the patches row by row.
   */
  attention: Float32Array;
  tokens: number;
  /** Register tokens after the class token (0 but for DINOv2 with registers). */
  registers: number;
  /** The patches: rows x columns. */
  grid: { rows: number; columns: number };
  /** The preprocessed picture's size, the size it was resized to, and where the crop began. */
  input: {
    height: number;
    width: number;
    resized: { height: number; width: number };
    crop: { top: number; left: number };
  };
  /** A classifier's best labels (null without one): index, id2label's name, probability. */
  labels: { index: number; label: string; p: number; logit: number }[] | null;
  logits?: Float32Array;
  pixelValues?: Float32Array;
  /** [hidden]: the pooled output (returnPooled). */
  pooled?: Float32Array;
  /**
   * [layers + 1, tokens, hidden] (returnHiddenStates): the embeddings, then each layer's output;
   * the last after the final layernorm (the library's last_hidden_state).
   */
  hiddenStates?: Float32Array;
  /** Models loaded with backend 'webgpu' or 'auto': the forward that ran this call. */
  backend?: 'wasm-relaxed' | 'wasm-simd' | 'wasm-scalar' | 'webgpu';
}

export interface VisionModelInfo {
  readonly architecture: 'vit';
  readonly modelType: string;
  readonly vision: true;
  readonly layers: number;
  readonly heads: number;
  readonly headDim: number;
  readonly hidden: number;
  readonly patchSize: number;
  /** Patches along a side of the trained picture. */
  readonly imageGrid: number;
  /** DINOv2: any grid (position embeddings resized); ViT: the trained one only. */
  readonly interpolatesPositions: boolean;
  /** Register tokens (DINOv2 with registers), else 0. */
  readonly registers: number;
  /** The classifier's label count (0 without one). */
  readonly labels: number;
  readonly parameters: number;
  readonly bytes: number;
  readonly dtype: WeightDtype;
  readonly weightTypes: WeightTypes;
  readonly causal: false;
  readonly predicts: boolean;
  /** 'webgpu' while run() has a GPU forward (loadModel's backend 'webgpu' or 'auto'). */
  readonly backend: 'wasm-relaxed' | 'wasm-simd' | 'wasm-scalar' | 'webgpu';
  /** Why the forward runs where it does. */
  readonly backendReason: string;
  /** While run() has a GPU forward: the bytes its weights take on the GPU. */
  readonly gpuBytes?: number;
  /** The preprocessor_config.json's processor class. */
  readonly processor: string;
  /** What returnPooled gives: ViTModel's pooler, DINOv2's class token, or null (none). */
  readonly pooling: 'pooler' | 'class-token' | null;
}

export interface VisionModel {
  readonly info: VisionModelInfo;
  readonly source: ModelFiles['source'];
  /** id2label's names by index, or null without a classifier. */
  readonly labels: readonly string[] | null;
  run(image: ImageInput, options?: ImageRunOptions): Promise<ImageRun>;
  dispose(): void;
}

export declare const IMAGE_RUN_OPTIONS: readonly string[];

/**
 * Loads a checkpoint (config.json, tokenizer.json or, for vision models, preprocessor_config.json,
 * model.safetensors or pytorch_model.bin) and builds the model in wasm memory: a Model, or a
 * VisionModel for VISION_MODEL_TYPES (`loadModel<VisionModel>(...)`). Errors carry `code`
 * (ErrorCode, or 'not_found' for a missing file or tensor) and `parameter` (the option, file or
 * tensor at fault).
 */
export declare function loadModel<M extends Model | VisionModel = Model>(
  source: ModelSource,
  options?: LoadModelOptions,
): Promise<M>;

export declare const DESCRIBE_OPTIONS: readonly string[];

export interface DescribeModelOptions extends Omit<ModelFilesOptions, 'onProgress'> {
  /** The storage the memory is counted for (default 'f32'). */
  dtype?: WeightDtype;
  /** The engine whose free wasm memory `fits` is measured against (default: a fresh one). */
  attention?: Attention;
}

export interface ModelDescription extends Omit<ModelFileListing, 'config'> {
  modelType: string;
  layers: number;
  heads: number;
  hidden: number;
  vocab: number;
  maxPositions: number;
  causal: boolean;
  dtype: WeightDtype;
  parameters: number;
  /** Bytes the weights will take in wasm memory. */
  memoryBytes: number;
  /** Extra bytes the load needs while it packs the matrices. */
  loadScratchBytes: number;
  fits: boolean;
  /** Why it does not fit (the message loadModel would refuse it with), else null. */
  reason: string | null;
  /** A vision transformer's: it reads pictures (VisionModel), not text. */
  vision?: true;
  /** An encoder-decoder's encoder layers (of `layers`): it translates (Model.translate()). */
  encoderLayers?: number;
}

/** What loading a model would take (files, sizes, memory), before its weights are downloaded. */
export declare function describeModel(
  source: ModelSource,
  options?: DescribeModelOptions,
): Promise<ModelDescription>;

export type ModelErrorCode = ErrorCode | 'not_found';
