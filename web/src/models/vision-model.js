// The model loadModel() returns for a vision transformer (model_type vit, dinov2): run(image)
// reads the picture (vision/image-input.js), preprocesses it as its preprocessor_config.json
// says (vision/preprocessor.js), runs the forward pass in the wasm core and returns every
// layer's and head's attention over the class token and the patches, the patch grid, and a
// classifier's top labels; `info` describes it; dispose() frees its wasm memory.

import { wasmBackendOf } from '../attention.js';
import { disposedError } from '../errors.js';
import {
  boolean,
  integer,
  optionsObject,
  shapeError,
  typedArray,
  typeError,
} from '../argument-checks.js';
import { readImagePixels } from '../vision/image-input.js';
import { preprocessLayout, writePixelValues } from '../vision/preprocessor.js';
import { attentionMask, checkMasks, checkPatchWindows } from './layer-masks.js';
import { topIds } from './predictions.js';
import { poolClassToken } from './vision-pooler.js';
import { forwardFlops, gpuBytesOf, gpuForwardOrNull, withoutGpu } from './model-backend.js';

/** The options run(image) accepts. */
export const IMAGE_RUN_OPTIONS = Object.freeze([
  'topK',
  'masks',
  'returnLogits',
  'returnPixelValues',
  'returnPooled',
  'returnHiddenStates',
  'attentionBuffer',
]);
const DEFAULT_TOP_K = 5;

export class VisionModel {
  #core;
  #engine;
  #shape;
  #plan;
  #labels;
  #info;
  #source;
  #pooler;
  #gpu;

  /**
   * Use loadModel(); this takes the loaded parts. `plan`: the checked preprocessor
   * (vision/preprocessor.js imageProcessor()); `engine` as Model's; `pooler`: ViT's
   * (vision-pooler.js readPooler()) or null; `gpu` as Model's.
   */
  constructor({ core, engine, config, modelType, dtype, source, plan, pooler = null, gpu }) {
    this.#core = core;
    this.#gpu = gpu ?? {
      model: null,
      backend: 'wasm',
      reason: "backend 'wasm' (loadModel's default)",
    };
    this.#pooler = pooler;
    this.#engine = engine;
    this.#plan = plan;
    this.#source = Object.freeze({ ...source });
    this.#labels = config.labels ? Object.freeze([...config.labels]) : null;
    const { layers, heads, vocab, hidden } = config;
    this.#shape = { layers, heads, vocab, hidden };
    this.#info = Object.freeze({
      architecture: config.architecture,
      modelType,
      vision: true,
      layers,
      heads,
      headDim: hidden / heads,
      hidden,
      patchSize: config.patchSize,
      imageGrid: config.imageGrid,
      interpolatesPositions: config.interpolatePositions,
      registers: config.registers,
      labels: this.#labels ? this.#labels.length : 0,
      parameters: core.parameters,
      bytes: core.weightBytes,
      dtype,
      weightTypes: core.weightTypes,
      causal: false,
      predicts: config.lmHead,
      backend: this.#gpu.model ? 'webgpu' : wasmBackendOf(engine.attention, 'attention').name,
      backendReason: this.#gpu.reason,
      ...gpuBytesOf(this.#gpu),
      processor: plan.processor,
      // What returnPooled gives: ViTModel's pooler, DINOv2's class token, or nothing.
      pooling: modelType.startsWith('dinov2') ? 'class-token' : pooler ? 'pooler' : null,
    });
  }

  /**
   * { architecture, modelType, vision: true, layers, heads, headDim, hidden, patchSize,
   *   imageGrid, interpolatesPositions, registers, labels, parameters, bytes, dtype, causal,
   *   predicts, backend, backendReason, processor, pooling }
   */
  get info() {
    this.#live('info');
    return this.#info;
  }

  /** Where the files came from: loadModelFiles' `source`. */
  get source() {
    this.#live('source');
    return this.#source;
  }

  /** The classifier's labels (config.json's id2label, by index), or null without one. */
  get labels() {
    this.#live('labels');
    return this.#labels;
  }

  /**
   * @returns {Promise<{ attention: Float32Array, tokens: number, registers: number,
   *   grid: { rows, columns },
   *   input: { height, width, resized: { height, width }, crop: { top, left } },
   *   labels: { index, label, p, logit }[] | null, logits?: Float32Array,
   *   pixelValues?: Float32Array, pooled?: Float32Array, hiddenStates?: Float32Array }>}
   *   attention [layers, heads, tokens, tokens], token 0 the class token, then the registers
   *   (DINOv2 with registers), then the patches row by row.
   *   Options: topK, masks (one mask notation for every layer or one per layer: global,
   *   patch:K, tokens:i,j, pad:i,j; see mask-notation.js), returnLogits, returnPixelValues,
   *   returnPooled ([hidden]: ViTModel's pooler over the class token, or DINOv2's class token
   *   after the final layernorm), returnHiddenStates ([layers + 1, tokens, hidden]: the
   *   embeddings, then each layer's output, the last after the final layernorm),
   *   attentionBuffer (a Float32Array of layers * heads * tokens * tokens that receives the
   *   attention and is returned as `attention`: a camera loop reuses one instead of a fresh
   *   array a frame).
   */
  async run(image, options) {
    this.#live('run');
    const opts = this.#checkRunOptions(options);
    const pixels = await readImagePixels(image, 'image');
    this.#live('run');
    const threads = this.#wasm('run').threads;
    const input = preprocessLayout(this.#plan, pixels.height, pixels.width, 'image');
    const patch = this.#info.patchSize;
    const grid = {
      rows: Math.floor(input.height / patch),
      columns: Math.floor(input.width / patch),
    };
    const first = 1 + this.#info.registers;
    const tokens = first + grid.rows * grid.columns;
    if (opts.masks) checkPatchWindows(opts.masks, grid);
    const attentionInto = opts.attentionBuffer
      ? this.#checkBuffer(opts.attentionBuffer, tokens)
      : null;
    const patches = { ...grid, first };
    const wantStates = opts.returnPooled || opts.returnHiddenStates;
    // Raw pixels are read in place: a buffer transferred while run() awaited (or a view of wasm
    // memory that the forward's allocations grew) is refused, never read as zeros.
    const writePixels = (view) => {
      if (pixels.data.length !== pixels.width * pixels.height * pixels.channels) {
        throw typeError('image.data', 'has a detached (transferred) ArrayBuffer');
      }
      writePixelValues(pixels, this.#plan, input, view);
    };
    let onGpu = null;
    let gpuPixelValues = null;
    if (this.#gpuTakes(opts, grid, tokens)) {
      // The GPU forward unfolds the patches in JavaScript, so its pixel values are made here.
      gpuPixelValues = new Float32Array(3 * input.height * input.width);
      writePixels(gpuPixelValues);
      const layout = { pixelValues: gpuPixelValues, height: input.height, width: input.width };
      onGpu = await this.#gpuForward(unfoldPatches(layout, patch, grid), tokens);
      this.#live('run');
    }
    const { attention, logits, logSumExp, hiddenStates, pixelValues } = onGpu
      ? { ...onGpu, pixelValues: gpuPixelValues }
      : this.#core.forwardImage({
          writePixels,
          pixelValues: opts.returnPixelValues,
          height: input.height,
          width: input.width,
          n: tokens,
          masks: opts.masks?.map(({ mask }) => attentionMask(mask, tokens, patches)) ?? null,
          logits: this.#info.predicts,
          threads,
          shape: this.#shape,
          hiddenStates: wantStates,
          attentionInto,
        });
    if (onGpu && attentionInto) attentionInto.set(attention);
    const result = {
      attention: attentionInto ? opts.attentionBuffer : attention,
      tokens,
      registers: this.#info.registers,
      grid,
      input: { height: input.height, width: input.width, resized: input.resized, crop: input.crop },
      labels: logits ? this.#topLabels(logits, logSumExp[0], opts.topK) : null,
    };
    // Only models loaded with backend 'webgpu' or 'auto' say, per run, which forward ran.
    if (this.#gpu.backend !== 'wasm') {
      result.backend = onGpu ? 'webgpu' : wasmBackendOf(this.#engine.attention, 'run').name;
    }
    if (opts.returnLogits) result.logits = logits;
    if (opts.returnPixelValues) result.pixelValues = pixelValues;
    if (opts.returnHiddenStates) result.hiddenStates = hiddenStates;
    if (opts.returnPooled) {
      // The class token of the last hidden state (after the final layernorm).
      const { layers, hidden } = this.#shape;
      const start = layers * tokens * hidden;
      const classToken = hiddenStates.slice(start, start + hidden);
      result.pooled = this.#pooler ? poolClassToken(this.#pooler, classToken) : classToken;
    }
    return result;
  }

  /** Frees the model's wasm memory (and GPU buffers); later calls throw. Safe to call twice. */
  dispose() {
    if (this.#core === null) return;
    this.#gpu.model?.dispose();
    if (!this.#engineDisposed()) this.#core.destroy();
    if (this.#engine.owned) this.#engine.attention.dispose();
    this.#core = null;
  }

  // Whether this run goes to the GPU forward: one is held; no masks, hidden states or pooled
  // output; the trained grid of positions (no resizing); under 'auto' a large enough run.
  #gpuTakes(opts, grid, tokens) {
    if (!this.#gpu.model || opts.masks || opts.returnPooled || opts.returnHiddenStates)
      return false;
    const side = this.#info.imageGrid;
    if (grid.rows !== side || grid.columns !== side) return false;
    if (this.#gpu.backend === 'webgpu') return true;
    return forwardFlops(this.#info, tokens) >= this.#gpu.minFlops;
  }

  // The GPU forward's { attention, logits, logSumExp }, or null when it declines this run (then
  // wasm runs it). A lost device ends the GPU forward for good: info says so from then on.
  async #gpuForward(patches, tokens) {
    return gpuForwardOrNull(
      this.#gpu.model,
      (gpu) => gpu.forwardImage(patches, tokens, this.#info.predicts),
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

  #topLabels(logits, logSumExp, k) {
    return topIds(logits, 0, this.#shape.vocab, k).map((index) => ({
      index,
      label: this.#labels[index],
      p: Math.exp(logits[index] - logSumExp),
      logit: logits[index],
    }));
  }

  #checkRunOptions(options) {
    const raw = optionsObject(options, 'options', IMAGE_RUN_OPTIONS);
    const opts = {
      topK:
        raw.topK === undefined ? DEFAULT_TOP_K : integer(raw.topK, 'topK', 1, this.#shape.vocab),
      masks: checkMasks(raw.masks, this.#shape.layers, { vision: true }),
      returnLogits: boolean(raw.returnLogits, 'returnLogits'),
      returnPixelValues: boolean(raw.returnPixelValues, 'returnPixelValues'),
      returnPooled: boolean(raw.returnPooled, 'returnPooled'),
      returnHiddenStates: boolean(raw.returnHiddenStates, 'returnHiddenStates'),
      attentionBuffer: raw.attentionBuffer ?? null,
    };
    if (opts.returnPooled && this.#info.pooling === null) {
      throw typeError(
        'returnPooled',
        'this checkpoint has no pooler (pooler.dense.weight; ViTForImageClassification has none)',
      );
    }
    if (opts.returnLogits && !this.#info.predicts) {
      throw typeError('returnLogits', 'this checkpoint has no classifier (classifier.weight)');
    }
    return opts;
  }

  // A view of the caller's attention buffer, which must hold exactly this picture's maps.
  #checkBuffer(buffer, tokens) {
    const view = typedArray(buffer, 'attentionBuffer', Float32Array);
    const { layers, heads } = this.#shape;
    const length = layers * heads * tokens * tokens;
    if (view.length !== length) {
      throw shapeError(
        'attentionBuffer',
        `has ${view.length} elements; this picture's attention [${layers}, ${heads}, ${tokens}, ` +
          `${tokens}] needs ${length}`,
      );
    }
    return view;
  }

  #live(what) {
    if (this.#core === null) throw disposedError(what, 'this model was disposed');
  }

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
}

// The picture's patches as rows [rows * columns, C * P * P] in the patch weight's order
// (channel, row, column), from pixel values [C, height, width].
function unfoldPatches({ pixelValues, height, width }, patch, grid) {
  const channels = pixelValues.length / (height * width);
  const depth = channels * patch * patch;
  const out = new Float32Array(grid.rows * grid.columns * depth);
  for (let pr = 0; pr < grid.rows; pr++) {
    for (let pc = 0; pc < grid.columns; pc++) {
      let at = (pr * grid.columns + pc) * depth;
      for (let c = 0; c < channels; c++) {
        for (let y = 0; y < patch; y++) {
          const from = c * height * width + (pr * patch + y) * width + pc * patch;
          out.set(pixelValues.subarray(from, from + patch), at);
          at += patch;
        }
      }
    }
  }
  return out;
}
