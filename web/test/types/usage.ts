// Compile-only check of index.d.ts (tsc --noEmit --strict): typical use must type-check, and
// each @ts-expect-error line must really be an error (tsc fails if one is not).

import {
  analyze,
  analyzePair,
  createAttention,
  detectWebGpu,
  embed,
  MAX_TOKENS,
  THREADS_MIN_FLOPS,
  threadsUnavailableReason,
  tokenize,
  WEBGPU_MIN_FLOPS,
  type Attention,
  type AttentionBackwardResult,
  type AttentionBuffers,
  type AttentionResult,
  type BackendChangeEvent,
  type ErrorCode,
  type KvCache,
  type MultiHeadResult,
  type RunningBackend,
  type Token,
} from 'attnlens';
import { AttnLensElement, sharedEngine } from 'attnlens/widget';
import {
  attentionFlow,
  attentionRollout,
  attentionSinks,
  describeModel,
  FLOW_LIMITS,
  listModelFiles,
  MAX_ROLLOUT_WORK,
  type AttentionSinks,
  loadModel,
  loadModelFiles,
  BUNDLED_MODELS,
  LLAMA2C_TOKENIZER_URL,
  SUPPORTED_MODEL_TYPES,
  MODEL_BACKENDS,
  MODEL_WEBGPU_MIN_FLOPS,
  type ModelBackend,
  type LayerProjections,
  type MaskPrediction,
  type ModelDescription,
  type ModelHeadScores,
  type ModelHeadEffects,
  type HeadEffect,
  type LensToken,
  type AblationMode,
  HEAD_SCORE_OPTIONS,
  HEAD_EFFECTS_OPTIONS,
  ABLATION_MODES,
  GENERATE_OPTIONS,
  type GeneratedToken,
  type ModelGeneration,
  type Model,
  type ModelInfo,
  type ModelRun,
  type ModelToken,
  type TokenPrediction,
  type ImageRun,
  type VisionModel,
  VISION_MODEL_TYPES,
  TRANSLATE_OPTIONS,
  type Translation,
  type TranslationStep,
  type ModelType,
} from 'attnlens/models';
import {
  createTrainer,
  repeatedRandomSequences,
  SAMPLE_TEXTS,
  type HeadScore,
  type Trainer,
  type TrainSnapshot,
  type TrainStepEvent,
} from 'attnlens/train';

async function engine(): Promise<void> {
  const attn: Attention = await createAttention({
    backend: 'auto',
    locateFile: (f, dir) => new URL(f, dir),
  });
  const backend: RunningBackend = attn.backend;
  const q = new Float32Array(2 * 4 * 8);
  const r: AttentionResult = await attn.attention(q, q, q, {
    heads: 2,
    headDim: 8,
    causal: true,
    window: { before: 2, dilation: 2 },
    sparse: { pattern: 'fixed', stride: 2 },
    globalTokens: [0],
    keyLengths: [4, 3],
    keyValid: [true, true, false, true],
    mask: new Uint8Array(16),
    temperature: 0.5,
    score: 'additive',
    additive: { hidden: 3, wQuery: q, wKey: q, v: q },
    returnWeights: true,
  });
  const weights: Float32Array | undefined = r.weights;
  const ms: number = r.stats.ms;

  const mh: MultiHeadResult = await attn.multiHead(
    q,
    { wQuery: q, wKey: q, wValue: q, wOut: q },
    { heads: 2, headDim: 8, source: q, returnProjections: true },
  );
  const projected: Float32Array | undefined = mh.k;

  const grouped: AttentionResult = await attn.attention(q, q.subarray(0, 32), q.subarray(0, 32), {
    heads: 2,
    kvHeads: 1,
    headDim: 8,
  });
  const grads: AttentionBackwardResult = await attn.attentionBackward(q, q, q, q, {
    heads: 2,
    kvHeads: 2,
    headDim: 8,
    causal: true,
    temperature: 2,
  });
  const dq: Float32Array = grads.dq;

  const modern: AttentionResult = await attn.attention(q, q, q, {
    heads: 2,
    headDim: 8,
    softcap: 30,
    bias: new Float32Array(4),
    alibi: true,
    queryOffset: 2,
    causal: true,
    topK: 2,
    lsh: { buckets: 4, rounds: 2, seed: 7 },
  });
  const pairs: number | undefined = modern.stats.pairsScored;
  // @ts-expect-error: the backward does not differentiate top-k
  await attn.attentionBackward(q, q, q, q, { heads: 2, headDim: 8, topK: 2 });

  const visibleKeys: Uint8Array = attn.maskMatrix({ queryLength: 4, keyLength: 4, causal: true });
  const bytes: number = attn.workingSetBytes({
    queryLength: 4,
    keyLength: 4,
    headDim: 8,
    strategy: 'streaming',
  });
  const buffers: AttentionBuffers = attn.allocate({ queryLength: 4, keyLength: 4, headDim: 8 });
  buffers.q.set(q.subarray(0, 32));
  const { stats } = await buffers.run({ causal: true });
  buffers.dispose();
  const cache: KvCache = attn.kvCache({ heads: 1, queryHeads: 2, headDim: 8, capacity: 16 });
  const cached: number = cache.append(q.subarray(0, 16), q.subarray(0, 16));
  const step: AttentionResult = await cache.attend(q.subarray(0, 16), { causal: true, topK: 1 });
  // @ts-expect-error the cache fixes the shape
  await cache.attend(q, { heads: 2 });
  void [cached, step, cache.length, cache.capacity];
  cache.reset();
  cache.dispose();
  attn.dispose();

  try {
    await attn.attention(q, q, q, { heads: 1, headDim: 8 });
  } catch (error) {
    const code: ErrorCode = (error as RangeError & { code: ErrorCode }).code;
    void code;
  }
  void [backend, weights, ms, dq, projected, visibleKeys, bytes, stats, grouped];

  // @ts-expect-error heads and headDim are required
  await attn.attention(q, q, q, { causal: true });
  // @ts-expect-error inputs are Float32Array
  await attn.attention([1, 2], q, q, { heads: 1, headDim: 2 });
  // @ts-expect-error unknown score function
  await attn.attention(q, q, q, { heads: 1, headDim: 2, score: 'bilinear' });
  // @ts-expect-error the additive score has no backward
  await attn.attentionBackward(q, q, q, q, { heads: 1, headDim: 8, score: 'additive' });
  // @ts-expect-error the backward returns no weights
  await attn.attentionBackward(q, q, q, q, { heads: 1, headDim: 8, returnWeights: true });
  // @ts-expect-error 'cuda' is not a backend
  await createAttention({ backend: 'cuda' });
  // @ts-expect-error storage is 'f32' or 'f16'
  await createAttention({ backend: 'webgpu', webgpu: { storage: 'f64' } });
  // @ts-expect-error the buffers' views are read-only properties
  buffers.q = new Float32Array(1);
}

async function threads(): Promise<void> {
  const attn = await createAttention({ threads: 'auto' });
  const count: number = attn.threads;
  const r = await attn.attention(new Float32Array(8), new Float32Array(8), new Float32Array(8), {
    heads: 1,
    headDim: 8,
  });
  const used: number | undefined = r.stats.threads;
  const why: string = threadsUnavailableReason();
  void [count, used, why, THREADS_MIN_FLOPS, await createAttention({ threads: 2 })];
  // @ts-expect-error threads is 'auto' or a number
  await createAttention({ threads: 'max' });
  // @ts-expect-error the thread count is read-only
  attn.threads = 2;
  const memory: number = attn.wasmMemoryBytes;
  void memory;
  // @ts-expect-error the memory size is read-only
  attn.wasmMemoryBytes = 0;
}

async function gpu(): Promise<void> {
  const found = await detectWebGpu();
  const why: string = found.available ? found.adapter.description : found.reason;
  const attn = await createAttention({
    backend: 'auto',
    webgpu: {
      minFlops: WEBGPU_MIN_FLOPS * 2,
      storage: 'f16',
      subgroups: false,
      maxBufferBytes: 1 << 26,
    },
  });
  attn.addEventListener('backendchange', (event: BackendChangeEvent) => {
    const to: RunningBackend = event.to;
    void [to, event.reason];
  });
  const storage: 'f32' | 'f16' | undefined = attn.webgpu?.storage;
  const unavailable: string | undefined = attn.webgpuUnavailable;
  const q = new Float32Array(8);
  const r = await attn.attention(q, q, q, { heads: 1, headDim: 2 });
  const fallback: string | undefined = r.stats.fallbackReason;
  const lanes: number | undefined = r.stats.gpu?.lanes;
  void [why, storage, unavailable, fallback, lanes];
}

async function text(): Promise<void> {
  const tokens: Token[] = tokenize('我爱自然语言处理', { granularity: 'word' });
  const x: Float32Array = embed(tokens, { dim: 64, seed: 1 });
  const a = await analyze('The animal was tired', {
    heads: 4,
    causal: true,
    granularity: 'subword',
  });
  const firstHead: Float32Array = a.heads[0].weights;
  const p = await analyzePair('a cat', 'un chat', { temperature: 2 });
  const target: Token[] = p.targetTokens;
  const cap: number = MAX_TOKENS;
  void [x, firstHead, target, cap];
  // @ts-expect-error granularity is a fixed set
  tokenize('x', { granularity: 'sentence' });
}

void engine;
void gpu;
void text;

// The widget entry point: the element class, the shared engine and the tag-name map.
async function widget(): Promise<void> {
  const lens: AttnLensElement = document.createElement('attn-lens');
  lens.setAttribute('mask', 'local:2');
  const engine: Attention = await sharedEngine();
  void engine.backend;
}
void widget;
void threads;

// The models entry: loading options, the run result and the info.
async function models(): Promise<void> {
  const bundled: readonly string[] = BUNDLED_MODELS;
  const story: Model = await loadModel(bundled[0]);
  const stories15M = await loadModelFiles('karpathy/tinyllamas/stories15M.bin', {
    tokenizer: LLAMA2C_TOKENIZER_URL,
  });
  const version: number | undefined = stories15M.source.version;
  void version;
  await loadModel('./stories15M.bin', { tokenizer: new Uint8Array(8) });
  story.dispose();
  const dino = await loadModel<VisionModel>('facebook/dino-vits16');
  const picture: ImageRun = await dino.run(new ImageData(16, 16), { topK: 3 });
  const grid: number = picture.grid.rows * picture.grid.columns;
  const maps: Float32Array = picture.attention;
  const raw = await dino.run({ data: new Uint8Array(4), width: 1, height: 1 });
  const frame: Float32Array = (await dino.run(new ImageData(16, 16), { attentionBuffer: maps }))
    .attention;
  void frame;
  const label: string | undefined = raw.labels?.[0]?.label;
  const vision: readonly string[] = VISION_MODEL_TYPES;
  (void grid, maps, label, vision, dino.info.patchSize);
  dino.dispose();
  const model: Model = await loadModel('roneneldan/TinyStories-1M', {
    revision: 'main',
    dtype: 'f16',
    onProgress: ({ file, loaded, total }) => void [file, loaded, total],
    attention: await createAttention({ backend: 'wasm-simd', threads: 1, models: true }),
  });
  const info: ModelInfo = model.info;
  const masks: readonly string[] = info.layerMasks;
  const run: ModelRun = await model.run('Once upon a time', {
    masks: 'causal+local:2',
    topK: 5,
    returnLogits: true,
  });
  const weights: Float32Array = run.attention;
  const logits: Float32Array | undefined = run.logits;
  const first: TokenPrediction | MaskPrediction | undefined = run.predictions[0];
  const token: ModelToken = run.tokens[0];
  const types: readonly string[] = SUPPORTED_MODEL_TYPES;
  const grouped: number = info.kvHeads * info.headDim;
  // @ts-expect-error qwen2 checkpoints run the llama architecture
  const qwen: ModelInfo['architecture'] = 'qwen2';
  void [masks, weights, logits, first, token.start, types, grouped, qwen];
  const next = run.predictions[0] as TokenPrediction;
  const added: { text: string; partial: boolean } = model.tokenizer.appendedText(
    run.tokens.map((t) => t.id),
    next.id,
  );
  const partial: boolean = next.partial;
  void [added, partial];
  await model.run('the cat [MASK]', { masks: ['global', 'causal'], pair: 'a dog', truncate: true });
  const projected: LayerProjections | undefined = (await model.run('x', { projections: 1 }))
    .projections;
  void [projected?.q, projected?.scale];
  const read = await model.run('x', { rollout: [0], flow: true, sinks: true });
  const rolled: Float32Array | undefined = read.rollout?.values;
  const flowed: number | undefined = read.flow?.position;
  const onBos: Float32Array | null | undefined = read.sinks?.bos;
  const shape = { layers: info.layers, heads: info.heads, n: read.tokens.length };
  const row: Float32Array = attentionFlow(read.attention, shape, { position: 0 });
  const rows: Float32Array = attentionRollout(read.attention, shape, { rows: [0] });
  const sinks: AttentionSinks = attentionSinks(read.attention, shape, { causal: true });
  void [rolled, flowed, onBos, row, rows, sinks, FLOW_LIMITS.tokens, MAX_ROLLOUT_WORK];
  // @ts-expect-error flow takes one position
  await model.run('x', { flow: [0] });
  const scored: ModelHeadScores = await model.headScores({ length: 20, probes: 2, seed: 3 });
  const sink: number | null | undefined = scored.heads[0]?.sink;
  const probe: Int32Array | undefined = scored.ids[0];
  const scoreOptions: readonly string[] = HEAD_SCORE_OPTIONS;
  void [sink, probe, scoreOptions, scored.heads[0]?.label === 'sink'];
  // @ts-expect-error the probe length is a number
  await model.headScores({ length: '20' });
  const lensed = await model.run('x', {
    ablate: [{ layer: 0, head: 1, mode: 'mean' }],
    lens: true,
  });
  const lensTop: LensToken | undefined = lensed.lens?.top[0]?.[0]?.[0];
  const lensIds: Int32Array | undefined = lensed.lens?.ids;
  const ablatedMode: AblationMode | undefined = lensed.ablated?.[0]?.mode;
  await model.run('x', { lens: { topK: 3 }, ablate: [{ layer: 0, head: 0 }] });
  // @ts-expect-error an ablation mode is 'zero' or 'mean'
  await model.run('x', { ablate: [{ layer: 0, head: 0, mode: 'half' }] });
  const effects: ModelHeadEffects = await model.headEffects('x', { target: ' the', position: 0 });
  const effect: HeadEffect | undefined = effects.heads[0];
  const effectOptions: readonly string[] = HEAD_EFFECTS_OPTIONS;
  const modes: readonly AblationMode[] = ABLATION_MODES;
  void [lensTop, lensIds, ablatedMode, effect?.delta, effectOptions, modes, effects.layersRun];
  // @ts-expect-error a target is an id or a string
  await model.headEffects('x', { target: [1] });
  const controller = new AbortController();
  const generation: ModelGeneration = await model.generate('Once upon a time', {
    maxTokens: 8,
    temperature: 0.8,
    topK: 40,
    topP: 0.95,
    seed: 1,
    signal: controller.signal,
    onToken: (token: GeneratedToken) => void token.attention.length,
  });
  const stepRows: Float32Array | undefined = generation.attention[0];
  const why2: 'eos' | 'maxTokens' = generation.stopped;
  const generateOptions: readonly string[] = GENERATE_OPTIONS;
  void [stepRows, why2, generation.text, generation.prompt.attention, generateOptions];
  // @ts-expect-error maxTokens is a number
  await model.generate('x', { maxTokens: '8' });
  // A promise from onToken paces the generation.
  await model.generate('x', { onToken: () => new Promise((resolve) => setTimeout(resolve, 1)) });
  const translation: Translation = await model.translate('我爱你', {
    maxTokens: 16,
    beams: 4,
    signal: controller.signal,
    onToken: (step: TranslationStep & { index: number }) => void (step.index + step.id),
    returnLogits: true,
  });
  const crossRow: Float32Array | undefined = translation.steps[0]?.crossAttention;
  const translateOptions: readonly string[] = TRANSLATE_OPTIONS;
  const kinds: ModelType[] = ['vit', 'dinov2_with_registers', 'marian'];
  void [crossRow, translation.encoderAttention, translation.score, translateOptions, kinds];
  // @ts-expect-error beams is a number
  await model.translate('x', { beams: '4' });
  const about: ModelDescription = await describeModel('gpt2', { dtype: 'f16', revision: 'main' });
  const needs: number = about.memoryBytes + about.loadScratchBytes;
  const why: string | null = about.fits ? null : about.reason;
  const onGpu: Model = await loadModel('gpt2', {
    backend: 'auto',
    webgpu: { minFlops: MODEL_WEBGPU_MIN_FLOPS, allowSoftwareAdapter: false },
  });
  const reason: string = onGpu.info.backendReason;
  const gpuBytes: number | undefined = onGpu.info.gpuBytes;
  const ran: string | undefined = (await onGpu.run('x')).backend;
  const backends: readonly ModelBackend[] = MODEL_BACKENDS;
  void [reason, gpuBytes, ran, backends];
  // @ts-expect-error backend is 'wasm', 'webgpu' or 'auto'
  await loadModel('gpt2', { backend: 'gpu' });
  const size: number | null = (await listModelFiles('gpt2')).downloadBytes;
  void [needs, why, size];
  // @ts-expect-error describeModel reports no progress
  await describeModel('gpt2', { onProgress: () => {} });
  // @ts-expect-error dtype is 'f32' or 'f16'
  await loadModel('gpt2', { dtype: 'bf16' });
  // @ts-expect-error the engine is an instance, not createAttention's options
  await loadModel('gpt2', { attention: { backend: 'wasm' } });
  // @ts-expect-error models is a boolean
  await createAttention({ models: 'yes' });
  // @ts-expect-error masks are strings in the mask notation
  await model.run('x', { masks: 3 });
  model.dispose();
}
void models;

// The train entry: config, train options and their events, attention and save.
async function training(): Promise<void> {
  const tokenizer = (await loadModel('gpt2')).tokenizer;
  const trainer: Trainer = await createTrainer({
    layers: 2,
    attentionOnly: true,
    vocabulary: { characters: SAMPLE_TEXTS.zh },
  });
  await createTrainer({ vocabulary: { tokenizer } });
  const result = await trainer.train(repeatedRandomSequences({ length: { min: 4, max: 8 } }), {
    steps: 10,
    temperatureSchedule: { from: 4, to: 1, steps: 5 },
    onStep: (event: TrainStepEvent) => void event.loss,
    onSnapshot: (snapshot: TrainSnapshot) => {
      const head: HeadScore | undefined = snapshot.heads[0];
      void [snapshot.attention, head?.label, head?.induction];
    },
  });
  const paused: boolean = result.paused;
  const { attention, tokens } = await trainer.attention('text', { temperature: 1 });
  const files: File[] = await trainer.save();
  await loadModel(files);
  void [paused, attention, tokens[0]?.start, trainer.losses, trainer.snapshots];
  // @ts-expect-error the vocabulary is 'bytes', { characters } or { tokenizer }
  await createTrainer({ vocabulary: 'words' });
  // @ts-expect-error curve is 'geometric' or 'linear'
  await trainer.train('text', { temperatureSchedule: { from: 2, to: 1, steps: 3, curve: 'cos' } });
  trainer.dispose();
}
void training;
