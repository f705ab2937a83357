// The Model loadModel() returns: run(text, options) tokenizes, runs the forward pass in the wasm
// core and returns every layer's and head's attention with the model's predictions;
// generate(text, options) continues a text token by token (generate.js); an encoder-decoder's
// translate(text, options) translates it (translate.js); `info` describes it; dispose() frees its
// wasm memory.

import { wasmBackendOf } from '../attention.js';
import { describe, disposedError } from '../errors.js';
import { boolean, integer, optionsObject, rangeError, typeError } from '../argument-checks.js';
import { formatMask, parseMask } from '../mask-notation.js';
import { MAX_TEXT_LENGTH } from '../text/limits.js';
import { checkGenerateOptions, generateTokens } from './generate.js';
import { probeSequences, scoreProbes } from './head-probe.js';
import { topPredictions } from './predictions.js';
import { checkAblations } from './ablation.js';
import { attentionMask, checkMasks } from './layer-masks.js';
import { checkHeadEffectsOptions, headEffects } from './head-effects.js';
import { checkLens, lensResult } from './logit-lens.js';
import {
  checkInterpretOptions,
  INTERPRET_OPTIONS,
  interpretRun,
  planInterpret,
} from './run-interpret.js';
import { translate } from './translate.js';
import {
  forwardFlops,
  gpuBytesOf,
  gpuForwardOrNull,
  gpuTakesRun,
  withoutGpu,
} from './model-backend.js';

/** The options run() accepts. */
export const RUN_OPTIONS = Object.freeze([
  'pair',
  'masks',
  'topK',
  'returnLogits',
  'truncate',
  'projections',
  'ablate',
  'lens',
  ...INTERPRET_OPTIONS,
]);
const DEFAULT_TOP_K = 10;

export class Model {
  #core;
  #engine;
  #tokenizer;
  #architecture;
  #shape;
  #info;
  #scales;
  #source;
  #generation;
  #maxPositions;
  #gpu;

  /**
   * Use loadModel(); this takes the loaded parts. `engine`: { attention, owned }, the Attention
   * instance the model runs on and whether the model opened it (and closes it at dispose).
   * `gpu` (load-model.js gpuForward()): { model: a GpuModel or null, backend, reason, minFlops }.
   */
  constructor({ core, engine, tokenizer, architecture, config, modelType, dtype, source, gpu }) {
    this.#core = core;
    this.#gpu = gpu ?? {
      model: null,
      backend: 'wasm',
      reason: "backend 'wasm' (loadModel's default)",
    };
    this.#generation = config.generation ?? null;
    this.#maxPositions = config.maxPositions;
    this.#source = Object.freeze({ ...source });
    this.#engine = engine;
    this.#tokenizer = tokenizer;
    this.#architecture = architecture;
    const { layers, heads, vocab, hidden } = config;
    // headDim: the llama family may set its own (head_dim); elsewhere hidden / heads.
    this.#shape = { layers, heads, vocab, hidden, headDim: config.headDim ?? hidden / heads };
    if (architecture.encoderDecoder) {
      this.#shape.encoderLayers = config.encoderLayers;
      this.#shape.decoderLayers = layers - config.encoderLayers;
    }
    const layerMasks = [];
    this.#scales = [];
    for (let l = 0; l < layers; l++) {
      layerMasks.push(notationOf(core.layerMask(l)));
      this.#scales.push(core.layerScale(l));
    }
    this.#info = Object.freeze({
      architecture: config.architecture,
      modelType,
      layers: config.layers,
      heads: config.heads,
      kvHeads: config.kvHeads ?? config.heads,
      headDim: config.headDim ?? config.hidden / config.heads,
      hidden: config.hidden,
      vocab: config.vocab,
      maxPositions: config.maxPositions,
      parameters: core.parameters,
      bytes: core.weightBytes,
      dtype,
      weightTypes: core.weightTypes,
      causal: architecture.causal,
      predicts: config.lmHead ?? architecture.encoderDecoder === true,
      ...(architecture.encoderDecoder ? { encoderLayers: config.encoderLayers } : {}),
      backend: this.#gpu.model ? 'webgpu' : wasmBackendOf(engine.attention, 'attention').name,
      backendReason: this.#gpu.reason,
      ...gpuBytesOf(this.#gpu),
      layerMasks: Object.freeze(layerMasks),
    });
  }

  /**
   * { architecture, modelType, layers, heads, kvHeads, headDim, hidden, vocab, maxPositions,
   *   parameters, bytes, dtype, weightTypes, causal, predicts, backend, backendReason, layerMasks }
   */
  get info() {
    this.#live('info');
    return this.#info;
  }

  /** Where the files came from: loadModelFiles' `source` ({ kind, id?, revision?, fromCache }). */
  get source() {
    this.#live('source');
    return this.#source;
  }

  /** The model's tokenizer (tokenizer.js): encode, decode, special tokens. */
  get tokenizer() {
    this.#live('tokenizer');
    return this.#tokenizer;
  }

  /**
   * An encoder-decoder's translation of `text` (translate.js): { text, source: { ids, tokens },
   * ids, encoderAttention [encoder layers, heads, N, N], steps: [{ id, text, selfAttention
   * [decoder layers, heads, i + 1], crossAttention [decoder layers, heads, N], logits? }],
   * beams, score?, crossMask, stats: { encoderRuns, decoderTokens } }. Options: maxTokens,
   * beams, signal, onToken, returnLogits, crossMask ('full', 'last', 'mean', 'local:D').
   */
  async translate(text, options) {
    this.#live('translate');
    if (!this.#architecture.encoderDecoder) {
      throw typeError(
        'translate',
        `needs an encoder-decoder model (Marian); this is a ${this.#info.modelType} model`,
      );
    }
    return translate(
      {
        core: this.#core,
        tokenizer: this.#tokenizer,
        shape: this.#shape,
        generation: this.#generation,
        maxPositions: this.#maxPositions,
        threads: this.#wasm('translate').threads,
      },
      text,
      options,
    );
  }

  /**
   * @returns {Promise<{ tokens, attention: Float32Array, predictions, logits?: Float32Array,
   *   projections?: { layer, scale, headDim, q, k, v } }>}
   */
  async run(text, options) {
    this.#live('run');
    if (this.#architecture.encoderDecoder) {
      throw typeError('run', 'an encoder-decoder model runs through translate(text, options)');
    }
    const { vocab } = this.#shape;
    const opts = this.#checkRunOptions(text, options);
    const { ids, typeIds, tokens } = this.#encode(text, opts);
    const n = ids.length;
    const maskPositions = this.#maskPositions(ids);
    const logitPositions = opts.returnLogits
      ? ids.map((_, i) => i)
      : this.#architecture.causal
        ? [n - 1]
        : maskPositions;
    const { layers, heads } = this.#shape;
    const causal = this.#architecture.causal;
    const predictedAt = causal ? n - 1 : (maskPositions[0] ?? 0);
    const plan = planInterpret(opts.interpret, { n, layers, predictedAt });
    const wasmForward = () =>
      this.#core.forward({
        ids,
        types: this.#architecture.causal ? null : typeIds,
        masks: opts.masks?.map(({ mask }) => attentionMask(mask, n)) ?? null,
        logitPositions: this.#info.predicts ? logitPositions : [],
        threads: this.#wasm('run').threads,
        shape: this.#shape,
        projectionsLayer: opts.projections,
        ablations: opts.ablate,
        lensTopK: opts.lens,
      });
    this.#wasm('run'); // the instance the weights live in must be live, whichever forward runs
    const gpuOut = this.#gpuTakes(opts, n) ? await this.#gpuForward(ids, opts) : null;
    this.#live('run');
    const out = gpuOut ?? wasmForward();
    const { attention, logits, logSumExp, projections } = out;
    const rowOf = (position) => (opts.returnLogits ? position : logitPositions.indexOf(position));
    const top = (position) => {
      const row = rowOf(position);
      const context = ids.slice(0, this.#architecture.causal ? position + 1 : position);
      const tokenizer = this.#tokenizer;
      return topPredictions(
        logits,
        row * vocab,
        vocab,
        logSumExp[row],
        opts.topK,
        tokenizer,
        context,
      );
    };
    let predictions = [];
    if (this.#info.predicts) {
      predictions = this.#architecture.causal
        ? top(n - 1)
        : maskPositions.map((position) => ({ position, top: top(position) }));
    }
    const result = { tokens, attention, predictions };
    // Only models loaded with backend 'webgpu' or 'auto' say, per run, which forward ran.
    if (this.#gpu.backend !== 'wasm') {
      result.backend = gpuOut ? 'webgpu' : wasmBackendOf(this.#engine.attention, 'run').name;
    }
    if (opts.returnLogits) result.logits = logits;
    if (opts.ablate.length > 0) result.ablated = opts.ablate;
    if (opts.lens > 0) {
      const tokenizer = this.#tokenizer;
      result.lens = lensResult(out, { layers, n, topK: opts.lens, tokenizer, ids, causal });
    }
    const special = this.#tokenizer.special;
    const bosId = (causal ? special.bos : special.cls)?.id ?? null;
    Object.assign(result, interpretRun(plan, { attention, layers, heads, tokens, causal, bosId }));
    if (projections) {
      // [3, heads, N, d]: q, k and v, each [heads, N, d], as the layer's attention took them
      // (grouped K/V heads repeated for each query head that reads them).
      const { headDim } = this.#shape;
      const part = heads * n * headDim;
      result.projections = {
        layer: opts.projections,
        scale: this.#scales[opts.projections],
        headDim,
        q: projections.subarray(0, part),
        k: projections.subarray(part, 2 * part),
        v: projections.subarray(2 * part),
      };
    }
    return result;
  }

  /**
   * Continues `text` (a causal model's): the prompt's forward fills a KV cache, then each new
   * token is one step against it, streamed to `onToken` with its row of attention.
   * @returns {Promise<{ ids: number[], text: string, tokens: object[], attention: Float32Array[],
   *   stopped: 'eos' | 'maxTokens', seed: number, prompt: { tokens, attention: Float32Array } }>}
   */
  async generate(text, options) {
    this.#live('generate');
    if (this.#architecture.encoderDecoder) {
      throw typeError(
        'model',
        'an encoder-decoder model generates through translate(text, options)',
      );
    }
    if (!this.#architecture.causal) {
      throw typeError(
        'model',
        `generate() continues a text with a causal language model; this ${this.#info.modelType} ` +
          'model is bidirectional (use run() and its [MASK] predictions)',
      );
    }
    if (typeof text !== 'string')
      throw typeError('text', `must be a string, got ${describe(text)}`);
    if (text === '') throw rangeError('text', 'is empty: generate() needs a prompt to continue');
    const { vocab, maxPositions } = this.#info;
    const opts = checkGenerateOptions(options, { vocab, maxPositions });
    const { ids, tokens } = this.#encode(text, { pair: null, truncate: false }, 'generate()');
    const lent = {
      core: this.#core,
      tokenizer: this.#tokenizer,
      shape: { ...this.#shape, maxPositions },
      threads: this.#wasm('generate').threads,
      live: () => {
        this.#live('generate');
        this.#wasm('generate');
      },
    };
    return generateTokens(lent, { ids, tokens }, opts);
  }

  /**
   * What each head does, measured on probes the model never saw (head-probe.js): seeded random
   * ordinary tokens of its vocabulary, twice in a row, in the tokenizer's special tokens. Each
   * head's induction, previous-token and sink scores (interpret/head-scores.js) averaged over
   * the probes, and the label they earn.
   * @param {{ length?: number, probes?: number, seed?: number }} [options]
   * @returns {Promise<{ heads: { layer, head, entropy, previousToken, induction, sink, label }[],
   *   ids: Int32Array[] }>}
   */
  async headScores(options) {
    this.#live('headScores');
    if (this.#architecture.encoderDecoder) {
      throw typeError('headScores', 'probes decoder-only and encoder models, not encoder-decoders');
    }
    const { causal } = this.#architecture;
    const { vocab, maxPositions, layers, heads } = this.#info;
    const probe = probeSequences(this.#tokenizer, options, { vocab, maxPositions });
    const threads = this.#wasm('headScores').threads;
    const forward = (ids) =>
      this.#core.forward({
        ids,
        types: causal ? null : new Int32Array(ids.length),
        masks: null,
        logitPositions: [],
        threads,
        shape: this.#shape,
      }).attention;
    return { heads: scoreProbes(probe, forward, { layers, heads, causal }), ids: probe.ids };
  }

  /**
   * Which heads matter for one prediction: each head zero-ablated in turn, and the change in the
   * log-probability of `target` (the top prediction by default; a token id or a string of one
   * token) at `position` (the last token; BERT: the first [MASK]), ranked (head-effects.js).
   * @returns {Promise<object>} head-effects.js's result
   */
  async headEffects(text, options) {
    this.#live('headEffects');
    if (this.#architecture.encoderDecoder) {
      throw typeError(
        'headEffects',
        'ablates heads of decoder-only and encoder models, not of encoder-decoders',
      );
    }
    if (!this.#info.predicts) {
      throw typeError('model', 'this checkpoint has no masked-LM head (cls.predictions.*)');
    }
    if (typeof text !== 'string')
      throw typeError('text', `must be a string, got ${describe(text)}`);
    const opts = checkHeadEffectsOptions(options);
    const { ids, typeIds } = this.#encode(text, { pair: null, truncate: false });
    const n = ids.length;
    const causal = this.#architecture.causal;
    let position = causal ? n - 1 : this.#maskPositions(ids)[0];
    if (opts.position !== undefined) position = integer(opts.position, 'position', 0, n - 1);
    if (position === undefined) {
      throw rangeError('text', 'has no [MASK] token to predict: give `position`');
    }
    const threads = this.#wasm('headEffects').threads;
    const lent = {
      shape: this.#shape,
      tokenizer: this.#tokenizer,
      live: () => {
        this.#live('headEffects');
        this.#wasm('headEffects');
      },
      forward: (args) =>
        this.#core.forward({
          ids,
          types: causal ? null : typeIds,
          masks: null,
          threads,
          shape: this.#shape,
          wantAttention: false,
          ...args,
        }),
    };
    const context = ids.slice(0, causal ? position + 1 : position);
    return headEffects(lent, { ids, position, context }, opts);
  }

  /** Frees the model's wasm memory (and GPU buffers); later calls throw. Safe to call twice. */
  dispose() {
    if (this.#core === null) return;
    this.#gpu.model?.dispose();
    // A disposed instance already let go of the module, and with it of this model's memory.
    if (!this.#engineDisposed()) this.#core.destroy();
    if (this.#engine.owned) this.#engine.attention.dispose();
    this.#core = null;
  }

  // Whether this run goes to the GPU forward: one is held, the options are all its own, and
  // under 'auto' the run is large enough.
  #gpuTakes(opts, n) {
    if (!this.#gpu.model || !gpuTakesRun(opts)) return false;
    if (this.#gpu.backend === 'webgpu') return true;
    return forwardFlops(this.#info, n) >= this.#gpu.minFlops;
  }

  // The GPU forward's { attention, logits, logSumExp }, or null when it declines this run (then
  // wasm runs it). A lost device ends the GPU forward for good: info says so from then on.
  async #gpuForward(ids, opts) {
    return gpuForwardOrNull(
      this.#gpu.model,
      (gpu) => gpu.forward(ids, opts.returnLogits ? 'all' : 'last'),
      {
        live: () => this.#live('run'),
        current: (gpu) => this.#gpu.model === gpu,
        endGpu: (reason) => {
          ({ gpu: this.#gpu, info: this.#info } = withoutGpu(
            this.#gpu,
            this.#info,
            this.#engine.attention,
            reason,
          ));
        },
      },
    );
  }

  #live(what) {
    if (this.#core === null) throw disposedError(what, 'this model was disposed');
  }

  // The engine's wasm backend; an Error if the instance the model runs on was disposed.
  #wasm(what) {
    if (this.#engineDisposed()) {
      throw disposedError(what, 'the attention instance this model runs on was disposed');
    }
    return wasmBackendOf(this.#engine.attention, what);
  }

  #engineDisposed() {
    try {
      wasmBackendOf(this.#engine.attention, 'attention');
      return false;
    } catch {
      return true;
    }
  }

  #checkRunOptions(text, options) {
    if (typeof text !== 'string')
      throw typeError('text', `must be a string, got ${describe(text)}`);
    const raw = optionsObject(options, 'options', RUN_OPTIONS);
    const opts = {
      pair: raw.pair ?? null,
      topK:
        raw.topK === undefined ? DEFAULT_TOP_K : integer(raw.topK, 'topK', 1, this.#shape.vocab),
      returnLogits: boolean(raw.returnLogits, 'returnLogits'),
      truncate: boolean(raw.truncate, 'truncate'),
      masks: checkMasks(raw.masks, this.#shape.layers),
      projections:
        raw.projections === undefined
          ? -1
          : integer(raw.projections, 'projections', 0, this.#shape.layers - 1),
      interpret: checkInterpretOptions(raw),
      ablate: checkAblations(raw.ablate, this.#shape),
      lens: checkLens(raw.lens, this.#shape.vocab),
    };
    if (opts.pair !== null) {
      if (typeof opts.pair !== 'string') {
        throw typeError('pair', `must be a string, got ${describe(opts.pair)}`);
      }
      if (this.#architecture.causal) {
        throw typeError(
          'pair',
          `a text pair is for BERT-style models; this is ${this.#info.modelType}`,
        );
      }
    }
    if (opts.lens > 0 && !this.#info.predicts) {
      throw typeError('lens', 'this checkpoint has no masked-LM head (cls.predictions.*)');
    }
    if (opts.returnLogits && !this.#info.predicts) {
      throw typeError('returnLogits', 'this checkpoint has no masked-LM head (cls.predictions.*)');
    }
    return opts;
  }

  // `caller`: the method whose limits the errors name; only run() can truncate.
  #encode(text, { pair, truncate }, caller = 'run()') {
    const max = this.#info.maxPositions;
    // Like analyze(), the length is checked before anything is tokenized, and only what can be
    // kept is: a pasted book costs as much as its first pages.
    const kept = (segment, name) => {
      if (segment === null || segment.length <= MAX_TEXT_LENGTH) {
        return truncate && segment !== null
          ? textPrefix(segment, CHARS_PER_POSITION * max)
          : segment;
      }
      if (truncate) return textPrefix(segment, Math.min(MAX_TEXT_LENGTH, CHARS_PER_POSITION * max));
      throw rangeError(
        name,
        `is ${segment.length} characters, more than ${caller} reads (MAX_TEXT_LENGTH, ` +
          `${MAX_TEXT_LENGTH} UTF-16 code units)` +
          (caller === 'run()' ? '; pass { truncate: true } to keep the start' : ''),
      );
    };
    const first = kept(text, 'text');
    const second = kept(pair, 'pair');
    const encoding = this.#tokenizer.encode(first, second === null ? {} : { pair: second });
    let { ids, typeIds, tokens } = encoding;
    if (ids.length === 0) throw rangeError('text', 'gives no tokens');
    if (ids.length > max) {
      if (!truncate) {
        throw rangeError(
          'text',
          `is ${ids.length} tokens, more than the model's ${max} positions ` +
            '(max_position_embeddings)' +
            (caller === 'run()' ? `; pass { truncate: true } to keep the first ${max}` : ''),
        );
      }
      // Keep the first tokens; BERT keeps its closing [SEP] so the input stays well formed.
      const keepLast = !this.#architecture.causal && tokens[tokens.length - 1].special;
      const pick = (list) =>
        keepLast ? [...list.slice(0, max - 1), list[list.length - 1]] : list.slice(0, max);
      ids = pick(ids);
      typeIds = pick(typeIds);
      tokens = pick(tokens);
    }
    return { ids, typeIds, tokens };
  }

  // Where the text has the tokenizer's mask token ([MASK]): the positions BERT predicts.
  #maskPositions(ids) {
    const mask = this.#tokenizer.special.mask;
    if (this.#architecture.causal || !mask) return [];
    const positions = [];
    ids.forEach((id, i) => id === mask.id && positions.push(i));
    return positions;
  }
}

// With { truncate: true } a text is cut to this many characters per position before it is
// tokenized (tokens average 3 to 5 characters; even a text of long words keeps more tokens than
// the model's positions), so tokenizing and aligning never see the rest.
const CHARS_PER_POSITION = 16;

// The first `length` UTF-16 code units of `text`, without splitting a surrogate pair.
function textPrefix(text, length) {
  if (text.length <= length) return text;
  const code = text.charCodeAt(length - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
}

// The core's own layer mask ({ causal, windowBefore, windowAfter }) in the mask notation. A
// causal window of W keys before the query reads 'causal+local:W' (the notation's window is
// symmetric; causal removes the keys after).
function notationOf({ causal, windowBefore }) {
  const mask = parseMask('');
  mask.causal = causal;
  if (windowBefore >= 0) {
    mask.pattern = 'local';
    mask.window = windowBefore;
  }
  return formatMask(mask);
}
