// Type declarations of the attnlens package (hand-written; checked by test/types with
// `tsc --noEmit --strict`). The contract they describe is docs/JS_API.md.

// ---- errors -------------------------------------------------------------------------------------

/**
 * The `code` of every error attnlens raises (the C++ core's ErrorKind names, plus memory and
 * use after dispose()).
 */
export type ErrorCode =
  | 'invalid_argument' // raised as TypeError
  | 'shape_mismatch' // RangeError
  | 'out_of_range' // RangeError
  | 'non_finite' // RangeError
  | 'size_overflow' // RangeError
  | 'out_of_memory' // RangeError
  | 'disposed' // Error: a call into a disposed instance or buffer set, or pending at dispose()
  | 'busy' // Error: attnlens/train's trainer asked to start while a run is in progress
  | 'unavailable'; // Error: loadModel's backend 'webgpu' where this host has no WebGPU

/**
 * The properties attnlens adds to the TypeError / RangeError it throws. The message starts with
 * `parameter` ("temperature: must be a positive finite number, got 0").
 */
export interface AttnlensErrorFields {
  code: ErrorCode;
  /** The argument at fault: 'q', 'window.before', 'mask', ... */
  parameter: string;
  /** For 'non_finite' input errors: the first NaN or Infinity element. */
  index?: number;
}

// ---- engine -------------------------------------------------------------------------------------

export type BackendName = 'auto' | 'wasm' | 'wasm-relaxed' | 'wasm-simd' | 'wasm-scalar' | 'webgpu';
export type RunningBackend = 'wasm-relaxed' | 'wasm-simd' | 'wasm-scalar' | 'webgpu';
export declare const BACKEND_NAMES: readonly BackendName[];

/**
 * 'auto' runs a call on WebGPU from this many flops of attention, 2 * H * Nq * Nk * (D + Dv).
 * An estimate: no real GPU has been measured yet.
 */
export declare const WEBGPU_MIN_FLOPS: number;

/**
 * Wasm calls below this many flops of attention, 2 * H * Nq * Nk * (D + Dv), run on one thread
 * even when the instance has more (waking the helper threads would cost more than they save).
 */
export declare const THREADS_MIN_FLOPS: number;

/**
 * Why this host cannot run the threaded wasm module ('' when it can): it needs a cross-origin
 * isolated page (SharedArrayBuffer), Web Workers and SIMD128.
 */
export declare function threadsUnavailableReason(): string;

export interface WebGpuOptions {
  /** The GPU object (default navigator.gpu); in Node e.g. create([]) from the 'webgpu' package. */
  gpu?: object;
  /** A device to use instead of requesting one; attnlens never destroys it (on loss: wasm). */
  device?: object;
  /** Passed to requestAdapter (default 'high-performance'). */
  powerPreference?: 'high-performance' | 'low-power';
  /** 'auto' only: smaller problems run on wasm (default WEBGPU_MIN_FLOPS). */
  minFlops?: number;
  /** 'auto' only: also use software adapters such as SwiftShader (default false: slower than wasm). */
  allowSoftwareAdapter?: boolean;
  /** 'f16' stores q, k, v as halves where 'shader-f16' exists (softmax stays f32); default 'f32'. */
  storage?: 'f32' | 'f16';
  /** Use subgroup operations where the 'subgroups' feature exists (default true). */
  subgroups?: boolean;
  /** Largest GPU buffer one binding may cover (default: the device's limits); larger problems are split. */
  maxBufferBytes?: number;
}

export interface CreateAttentionOptions {
  /**
   * 'auto' (default): WebGPU for large problems when a hardware adapter exists, else the best
   * wasm; 'webgpu': WebGPU for every call it can take (rejects when unavailable); 'wasm' the best
   * wasm flavour.
   */
  backend?: BackendName;
  /** The .wasm to load instead of the packaged one (must match the backend's flavour). */
  wasmUrl?: string | URL;
  /** Emscripten-style: maps the packaged file name ('attnlens-simd.wasm') to a URL. */
  locateFile?: (fileName: string, directory: string) => string | URL;
  /** Where the WebGPU device comes from and how it is used ('auto' and 'webgpu'). */
  webgpu?: WebGpuOptions;
  /**
   * Threads for wasm calls of at least THREADS_MIN_FLOPS. 'auto' (default): up to 4 (and the
   * cores reported) where the threaded module can run (cross-origin isolated pages), else 1,
   * silently; 1: never load the threaded module; 2..256: that many, or, where impossible, one
   * console.warn and 1. Results are identical, bit for bit, whatever the count. Anything else
   * throws (TypeError for a non-number, RangeError for a number out of range).
   */
  threads?: 'auto' | number;
  /**
   * true: load the wasm module that also holds whole models (attnlens-models-<flavour>.wasm), so
   * attnlens/models' loadModel(source, { attention }) can run on this instance. Default false:
   * the smaller attention-only module, which loadModel refuses with a TypeError.
   */
  models?: boolean;
}

/** Loads the engine; in Node it reads the packaged .wasm from disk, elsewhere it fetches it. */
export declare function createAttention(options?: CreateAttentionOptions): Promise<Attention>;

export interface WebGpuAdapterInfo {
  vendor: string;
  architecture: string;
  description: string;
  /** A software implementation (SwiftShader, WARP): slower than wasm. */
  software: boolean;
}

export type WebGpuDetection =
  | { available: true; adapter: WebGpuAdapterInfo; features: Array<'shader-f16' | 'subgroups'> }
  | { available: false; reason: string };

/** Whether a WebGPU adapter exists here (no device is created). */
export declare function detectWebGpu(options?: {
  gpu?: object;
  powerPreference?: 'high-performance' | 'low-power';
}): Promise<WebGpuDetection>;

/** True when this JavaScript engine runs WebAssembly SIMD128. */
export declare function simdSupported(): boolean;
/** True when it also runs relaxed SIMD's f32x4.relaxed_madd (fused multiply-add): 'wasm-relaxed'. */
export declare function relaxedSimdSupported(): boolean;

// generated from call.scores (web/scripts/block-layouts.mjs)
export type ScoreFunction = 'scaled-dot' | 'dot' | 'cosine' | 'additive';
// generated from call.strategies (web/scripts/block-layouts.mjs)
export type Strategy = 'auto' | 'materialized' | 'streaming';

/** Flags of key j (keyValid) or of (query i, key j) at i * keyLength + j (mask); non-zero = visible. */
export type Flags = Uint8Array | ArrayLike<boolean | number>;

export interface WindowSpec {
  /** Steps to the left of the query (default 0). */
  before?: number;
  /** Steps to the right (default 0). */
  after?: number;
  /** Distance between attended keys (default 1). */
  dilation?: number;
}

export interface SparseSpec {
  // generated from call.sparsePatterns (web/scripts/block-layouts.mjs)
  pattern: 'strided' | 'fixed';
  /** Block length l of the Sparse Transformer. */
  stride: number;
  /** 'fixed' only: the last `summary` positions of each block are seen by all (default 1). */
  summary?: number;
}

/** Which keys each query may see (include/attnlens/mask.h has the formula). */
export interface MaskOptions {
  causal?: boolean;
  /** w means { before: w, after: w }. */
  window?: number | WindowSpec;
  sparse?: SparseSpec;
  /** Positions that see, and are seen by, every position. */
  globalTokens?: ArrayLike<number>;
  /** Valid keys per head (key padding): one count per head. */
  keyLengths?: ArrayLike<number>;
  /** keyLength flags: false / 0 marks padding. */
  keyValid?: Flags;
  /** queryLength * keyLength flags, row-major. */
  mask?: Flags;
  /**
   * Position of query 0 among the keys (default 0): with past keys in a KV cache,
   * keyLength - queryLength puts the queries last, so causal and windows align bottom-right.
   */
  queryOffset?: number;
}

/** Hashed (Reformer-style) attention: queries see the keys sharing a bucket in some round. */
export interface LshSpec {
  /** Even, 2..1024. */
  buckets: number;
  /** 1..16; default 1. */
  rounds?: number;
  /** 0..2^32-1; default 0. The same seed gives the same buckets everywhere. */
  seed?: number;
}

/**
 * The terms between the score and the softmax, in ONNX Attention's order: softcap, then bias and
 * ALiBi, then the mask; topK and lsh hide more keys. WebGPU runs them too (topK materialized
 * only, lsh not in multiHead: those calls run on wasm); attentionBackward refuses them.
 */
export interface LogitOptions {
  /** Scores become softcap * tanh(scores / softcap) (Gemma 2); positive. */
  softcap?: number;
  /** Added to the scaled scores: [H, Nq, Nk], or [Nq, Nk] for every head; -Infinity hides a key. */
  bias?: Float32Array;
  /** ALiBi with the paper's slopes for `heads`, computed on the fly. */
  alibi?: boolean;
  /** ALiBi with these slopes, one per head (instead of alibi: true). */
  alibiSlopes?: Float32Array;
  /** Each query keeps only its topK highest-scoring visible keys (1..keyLength). */
  topK?: number;
  lsh?: LshSpec;
}

/** Bahdanau score weights per head: wQuery, wKey [H, A, D], v [H, A]. */
export interface AdditiveWeights {
  hidden: number;
  wQuery: Float32Array;
  wKey: Float32Array;
  v: Float32Array;
}

/** Everything but the shape: score, scaling and the mask. */
export interface ComputeOptions extends MaskOptions, LogitOptions {
  score?: ScoreFunction;
  /** Default 1/sqrt(headDim) for 'scaled-dot', else 1. */
  scale?: number;
  /** Positive and finite; default 1. */
  temperature?: number;
  strategy?: Strategy;
  /** Required for score 'additive'. */
  additive?: AdditiveWeights;
}

export interface AttentionOptions extends ComputeOptions {
  heads: number;
  /**
   * Heads of k and v (grouped-query attention; 1: multi-query), a divisor of heads (default
   * heads). Query head h reads K/V head floor(h / (heads / kvHeads)); k is [kvHeads, Nk, D].
   */
  kvHeads?: number;
  headDim: number;
  /** Default headDim. */
  valueDim?: number;
  /** Softmax weights [H, Nq, Nk]. */
  returnWeights?: boolean;
  /** Raw scores [H, Nq, Nk], before scale, temperature and mask. */
  returnScores?: boolean;
}

export interface AttentionStats {
  strategy: 'materialized' | 'streaming';
  tilesVisited: number;
  tilesTotal: number;
  /** Wasm calls: (query, key) scores computed (streaming under topK scores each twice). */
  pairsScored?: number;
  scratchBytes: number;
  /** Wasm calls: threads that took part (1 below THREADS_MIN_FLOPS or without threads). */
  threads?: number;
  /** What ran this call. */
  backend: RunningBackend;
  /** Wall time of the call, including copies in and out (and GPU uploads and readback). */
  ms: number;
  /** Why a call ran on wasm although a GPU device is held (size, limits, overflow risk). */
  fallbackReason?: string;
  /** Calls that ran on WebGPU: storage type, reductions and (streaming) tile sizes. */
  gpu?: {
    storage: 'f32' | 'f16';
    subgroups: boolean;
    lanes?: number;
    queryBlock?: number;
    keyTile?: number;
  };
}

export interface AttentionResult {
  /** [H, Nq, Dv] */
  output: Float32Array;
  weights?: Float32Array;
  scores?: Float32Array;
  stats: AttentionStats;
}

/** attention()'s options less the returned matrices; 'additive' has no backward. */
export interface AttentionBackwardOptions extends Omit<
  AttentionOptions,
  'returnWeights' | 'returnScores' | 'score' | 'additive' | keyof LogitOptions
> {
  score?: Exclude<ScoreFunction, 'additive'>;
}

/** Gradients of attention() for dL/dOutput, shaped like its inputs. */
export interface AttentionBackwardResult {
  /** [H, Nq, D] */
  dq: Float32Array;
  /** [kvHeads, Nk, D]: under grouped-query attention, summed over the query heads of each K/V head */
  dk: Float32Array;
  /** [kvHeads, Nk, Dv] */
  dv: Float32Array;
  /** The backward's: always wasm (a WebGPU instance's call says why in fallbackReason). */
  stats: AttentionStats;
}

/** Row-major projection matrices; other properties are ignored. */
export interface MultiHeadWeights {
  /** [modelDim, H*D] */
  wQuery: Float32Array;
  /** [keyModelDim, kvHeads*D] */
  wKey: Float32Array;
  /** [keyModelDim, kvHeads*Dv] */
  wValue: Float32Array;
  /** [H*Dv, outDim] */
  wOut: Float32Array;
  bQuery?: Float32Array;
  bKey?: Float32Array;
  bValue?: Float32Array;
  bOut?: Float32Array;
}

export interface MultiHeadOptions extends AttentionOptions {
  /** Default: read off wQuery. */
  modelDim?: number;
  /** Default: read off wKey (only with `source`). */
  keyModelDim?: number;
  /** Default: read off wOut. */
  outDim?: number;
  /** [Nk, keyModelDim]: the sequence to attend to (cross-attention). */
  source?: Float32Array;
  /** Also return the projected q, k, v, head-major. */
  returnProjections?: boolean;
}

export interface MultiHeadResult extends AttentionResult {
  /** [Nq, outDim] */
  output: Float32Array;
  /** [H, Nq, D] */
  q?: Float32Array;
  /** [kvHeads, Nk, D] */
  k?: Float32Array;
  /** [kvHeads, Nk, Dv] */
  v?: Float32Array;
}

export interface MaskMatrixOptions extends MaskOptions {
  /** Default 1. */
  heads?: number;
  queryLength: number;
  keyLength: number;
  /** Default 0. */
  head?: number;
}

export interface WorkingSetOptions {
  heads?: number;
  queryLength: number;
  keyLength: number;
  headDim: number;
  valueDim?: number;
  /** 'auto' counts as 'streaming', what attention() runs without returned weights. */
  strategy?: Strategy;
  score?: ScoreFunction;
  /** Only `hidden` is read (the additive score's depth). */
  additive?: Pick<AdditiveWeights, 'hidden'>;
}

export interface BufferShape {
  heads?: number;
  /** Heads of k and v (default heads): k is [kvHeads, keyLength, headDim]. */
  kvHeads?: number;
  queryLength: number;
  keyLength: number;
  headDim: number;
  valueDim?: number;
}

/**
 * Tensors that live in wasm memory until dispose(), zeroed at first. Every getter returns a new
 * view: wasm memory may grow during any call and detach views taken earlier, so read the getter
 * again after each. A view written after dispose() makes the next call fail ('disposed').
 */
export interface AttentionBuffers {
  readonly shape: Readonly<Required<BufferShape>>;
  readonly q: Float32Array;
  readonly k: Float32Array;
  readonly v: Float32Array;
  readonly output: Float32Array;
  readonly disposed: boolean;
  /** Attention of the current q, k, v into output. */
  run(options?: ComputeOptions): Promise<{ stats: AttentionStats }>;
  dispose(): void;
}

export interface KvCacheOptions {
  /** K/V heads. */
  heads: number;
  /**
   * Heads of the queries attend() takes, a multiple of heads (default heads): query head h reads
   * K/V head floor(h / (queryHeads / heads)), as attention() with kvHeads = heads.
   */
  queryHeads?: number;
  headDim: number;
  /** Default headDim. */
  valueDim?: number;
  /** Positions each head holds at most. */
  capacity: number;
}

/** attention()'s options less the shape, which the cache fixes. */
export interface KvCacheAttendOptions extends ComputeOptions {
  /** Default max(0, length - Nq): the queries are the last Nq positions (bottom-right causal). */
  queryOffset?: number;
  /** Softmax weights [queryHeads, Nq, length]. */
  returnWeights?: boolean;
  /** Raw scores [queryHeads, Nq, length]. */
  returnScores?: boolean;
}

/**
 * Keys and values in wasm memory for incremental decoding: k [heads, capacity, headDim] and
 * v [heads, capacity, valueDim], filled up to `length`. Runs on wasm whatever the backend.
 */
export interface KvCache {
  readonly heads: number;
  readonly queryHeads: number;
  readonly headDim: number;
  readonly valueDim: number;
  readonly capacity: number;
  /** Positions held now ('disposed' error after dispose()). */
  readonly length: number;
  readonly disposed: boolean;
  /**
   * Copies n new positions in: k [heads, n, headDim], v [heads, n, valueDim]. Past capacity
   * nothing is appended (RangeError, parameter 'k'). Returns the new length.
   */
  append(k: Float32Array, v: Float32Array): number;
  /** q [queryHeads, Nq, headDim] over every cached key; output [queryHeads, Nq, valueDim]. */
  attend(q: Float32Array, options?: KvCacheAttendOptions): Promise<AttentionResult>;
  /** Empties the cache (its memory is kept). */
  reset(): void;
  /** Frees its wasm memory; later use throws 'disposed'. */
  dispose(): void;
}

/**
 * addEventListener's options and listeners, spelled out so that projects without the DOM lib
 * (Node: `--lib es2022 --types node`) type-check; the DOM's own types are assignable to them.
 */
export interface ListenerOptions {
  capture?: boolean;
  once?: boolean;
  passive?: boolean;
  signal?: AbortSignal;
}
export type Listener = ((event: Event) => void) | { handleEvent(event: Event): void };

/** Fired on an Attention when a lost GPU device is re-created or replaced by wasm. */
export interface BackendChangeEvent extends Event {
  readonly type: 'backendchange';
  readonly from: RunningBackend;
  readonly to: RunningBackend;
  readonly reason: string;
}

export interface Attention extends EventTarget {
  /** What the instance offloads to: 'webgpu' while it holds a GPU device. stats.backend says what ran a call. */
  readonly backend: RunningBackend;
  /** Threads a large wasm call runs on (1 unless the threaded module was loaded). */
  readonly threads: number;
  /** The GPU in use, or null. */
  readonly webgpu: null | {
    adapter: WebGpuAdapterInfo;
    storage: 'f32' | 'f16';
    subgroups: boolean;
    /** Preferences that could not be honoured, and why. */
    notes: string[];
  };
  /** Why 'auto' holds no GPU (no WebGPU, software adapter, ...), else undefined. */
  readonly webgpuUnavailable: string | undefined;
  addEventListener(
    type: 'backendchange',
    listener: (event: BackendChangeEvent) => void,
    options?: boolean | ListenerOptions,
  ): void;
  addEventListener(
    type: string,
    listener: Listener | null,
    options?: boolean | ListenerOptions,
  ): void;
  removeEventListener(
    type: 'backendchange',
    listener: (event: BackendChangeEvent) => void,
    options?: boolean | { capture?: boolean },
  ): void;
  removeEventListener(
    type: string,
    listener: Listener | null,
    options?: boolean | { capture?: boolean },
  ): void;
  /**
   * Bytes of WebAssembly memory the instance holds now: its wasm module's linear memory, which
   * grows to fit the largest call so far and never shrinks.
   */
  readonly wasmMemoryBytes: number;
  /** The C++ core's version. */
  readonly version: string;
  /** q [H, Nq, D], k [kvHeads, Nk, D], v [kvHeads, Nk, Dv], head-major (kvHeads default H). */
  attention(
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    options: AttentionOptions,
  ): Promise<AttentionResult>;
  /**
   * Gradients of attention(q, k, v, options) for dOutput = dL/dOutput [H, Nq, Dv] (the streaming
   * backward, on wasm).
   */
  attentionBackward(
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    dOutput: Float32Array,
    options: AttentionBackwardOptions,
  ): Promise<AttentionBackwardResult>;
  /** x [Nq, modelDim], token-major; `options.source` for cross-attention. */
  multiHead(
    x: Float32Array,
    weights: MultiHeadWeights,
    options: MultiHeadOptions,
  ): Promise<MultiHeadResult>;
  /** [queryLength * keyLength], 1 where the query may attend to the key. */
  maskMatrix(options: MaskMatrixOptions): Uint8Array;
  workingSetBytes(options: WorkingSetOptions): number;
  allocate(shape: BufferShape): AttentionBuffers;
  /** A KV cache in wasm memory for incremental decoding. */
  kvCache(options: KvCacheOptions): KvCache;
  /**
   * Frees the instance, its buffers, its KV caches and its GPU device; later calls throw, and calls still
   * pending reject, with the 'disposed' error.
   */
  dispose(): void;
}

// ---- text to attention --------------------------------------------------------------------------

/** Most UTF-16 code units tokenize() accepts. */
export declare const MAX_TEXT_LENGTH: number;
/** Most tokens one text may produce. */
export declare const MAX_TOKENS: number;
/** Widest embedding and projection the text path builds. */
export declare const MAX_MODEL_DIM: number;
/** Most heads analyze() runs. */
export declare const MAX_HEADS: number;

export type Granularity = 'word' | 'char' | 'subword';

/** A token and its UTF-16 offsets: text.slice(start, end) === token.text. */
export interface Token {
  text: string;
  start: number;
  end: number;
}

export interface TokenizeOptions {
  granularity?: Granularity;
  locale?: string | string[];
}

export declare function tokenize(text: string, options?: TokenizeOptions): Token[];

export interface EmbedOptions {
  /** Default 64. */
  dim?: number;
  /** uint32, default 1. */
  seed?: number;
  /** Weight of the sinusoidal positions (default 1; 0 leaves content only). */
  positionScale?: number;
}

/** Deterministic embeddings [tokens.length, dim], row-major. */
export declare function embed(
  tokens: ReadonlyArray<string | { text: string }>,
  options?: EmbedOptions,
): Float32Array;

/** The sinusoidal position encoding [length, dim]. */
export declare function positionEncoding(length: number, dim: number): Float32Array;

/** The hashed features (character n-grams and the whole token) of one token. */
export declare function tokenFeatures(text: string): string[];

export interface ProjectionWeightsOptions {
  heads: number;
  headDim: number;
  valueDim?: number;
  modelDim?: number;
  keyModelDim?: number;
  outDim?: number;
  additiveHidden?: number;
  seed?: number;
  shareQueryKey?: boolean;
}

/** Seeded projection weights in the layout multiHead() takes, plus additive-score weights. */
export declare function projectionWeights(
  options: ProjectionWeightsOptions,
): MultiHeadWeights & { additive: AdditiveWeights };

/** 8 hex digits of FNV-1a over the bytes of a typed array. */
export declare function fingerprint(array: ArrayBufferView): string;

/** Shannon entropy (bits) of one attention row. */
export declare function entropy(weightsRow: ArrayLike<number>): number;

/** The `count` (default 3) largest weights of a row, largest first. */
export declare function topAttended(
  weightsRow: ArrayLike<number>,
  count?: number,
): Array<{ index: number; weight: number }>;

export interface AnalyzeOptions extends ComputeOptions, TokenizeOptions {
  /** Default 4. */
  heads?: number;
  /** Default 16. */
  headDim?: number;
  valueDim?: number;
  /** Default heads * headDim. */
  modelDim?: number;
  outDim?: number;
  seed?: number;
  positionScale?: number;
  shareQueryKey?: boolean;
  additiveHidden?: number;
  /** The instance to use (default: one shared instance created on first use). */
  attention?: Attention;
}

export interface HeadAnalysis {
  /** [Nq * Nk] softmax weights. */
  weights: Float32Array;
  /** [Nq * Nk] raw scores. */
  scores: Float32Array;
  /** [Nq * Nk] visibility (1 = may attend). */
  mask: Uint8Array;
}

export interface LayerAnalysis {
  heads: HeadAnalysis[];
  /** [Nq, outDim] */
  output: Float32Array;
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  embeddings: { query: Float32Array; key: Float32Array };
  timing: { ms: number; totalMs: number };
  backend: RunningBackend;
  stats: AttentionStats;
  shape: {
    heads: number;
    queryLength: number;
    keyLength: number;
    headDim: number;
    valueDim: number;
    modelDim: number;
    outDim: number;
  };
}

export interface TextAnalysis extends LayerAnalysis {
  tokens: Token[];
}

export interface PairAnalysis extends LayerAnalysis {
  sourceTokens: Token[];
  targetTokens: Token[];
}

/** Self-attention over the tokens of one text. */
export declare function analyze(text: string, options?: AnalyzeOptions): Promise<TextAnalysis>;

/** Cross-attention: target tokens (queries) attend to source tokens (keys, values). */
export declare function analyzePair(
  source: string,
  target: string,
  options?: AnalyzeOptions,
): Promise<PairAnalysis>;
