// A model's forward pass on a WebGPU device: the weights uploaded once (f32), then one submission
// per run of WGSL passes (kernels.wgsl.js, recorded by layers.js), and every layer's attention
// probabilities and the asked rows of logits read back. GPT-2 and the llama family so far;
// gpuModelSupport() says what else is refused and why, so an architecture (or a variant: sliding
// windows) that is not yet here is refused by name, never run wrong.

import { attnlensError } from '../../errors.js';
import { GpuDeclined } from '../errors.js';
import { MapMode } from '../flags.js';
import { GpuBuffers } from '../gpu-buffers.js';
import { PipelineCache } from '../pipelines.js';
import {
  LINEAR_TILE,
  LINEAR_UNIFORMS,
  attentionKernel,
  embedKernel,
  linearKernel,
  normKernel,
  rotaryKernel,
  visionEmbedKernel,
} from './kernels.wgsl.js';
import { encodeLayers, headDimOf } from './layers.js';

/** The architectures (the core's names) whose forward pass runs on WebGPU. */
export const GPU_ARCHITECTURES = Object.freeze(['gpt2', 'llama', 'vit']);

/**
 * Why the core config `core` (architectures/*.js coreConfig() plus dtype) cannot run on the GPU
 * forward, or null when it can.
 */
export function gpuModelSupport(core, dtype) {
  if (!GPU_ARCHITECTURES.includes(core.architecture)) {
    return (
      `the WebGPU forward runs ${GPU_ARCHITECTURES.join(', ')} so far, not ` +
      `${core.architecture}`
    );
  }
  const activation = { gpt2: 'gelu_tanh', llama: 'silu', vit: 'gelu_erf' }[core.architecture];
  if (core.layerScale || core.registers > 0) {
    return 'the WebGPU forward has no DINOv2 (layer scale, registers) yet';
  }
  if (core.activation !== activation) {
    return (
      `the WebGPU forward runs ${core.architecture} with ${activation} only, not ` + core.activation
    );
  }
  if (core.localWindows?.length) {
    return 'the WebGPU forward has no sliding-window layers (use_sliding_window) yet';
  }
  if (core.headDim !== undefined && core.headDim % 2 !== 0) {
    return `the WebGPU forward rotates even head widths only, not ${core.headDim}`;
  }
  if (!['f32', 'f16', 'q8', 'q4'].includes(dtype)) {
    return `the WebGPU forward has f32, f16, q8 and q4 weights only, not dtype '${dtype}'`;
  }
  return null;
}

// float16 bits -> float32, for weights the wasm core holds as halves (dtype 'f16').
function halvesToFloats(halves) {
  const out = new Float32Array(halves.length);
  for (let i = 0; i < halves.length; i++) {
    const h = halves[i];
    const exponent = (h >> 10) & 0x1f;
    const mantissa = h & 0x3ff;
    const magnitude =
      exponent === 0
        ? mantissa * 2 ** -24
        : exponent === 31
          ? mantissa
            ? NaN
            : Infinity
          : (1 + mantissa / 1024) * 2 ** (exponent - 15);
    out[i] = h & 0x8000 ? -magnitude : magnitude;
  }
  return out;
}

// How the GPU holds a weight the core holds as `dtype` (kernels.wgsl.js weightBinding): Q8_0
// and 4-bit rows as they are; halves as halves where a kernel reads them so (every matrix: the
// linear kernels, the head and the text embeddings read it), but a vision transformer's class
// token and position table, which its embedding kernel reads as f32, widened.
function gpuStorage(config, name, shape, dtype) {
  if (dtype === 'q8' || dtype === 'q4') return dtype;
  if (dtype !== 'f16' || shape.length !== 2) return 'f32';
  const visionTable =
    config.architecture === 'vit' && (name === 'class_token' || name === 'position_embedding');
  return visionTable ? 'f32' : 'halves';
}

// writeBuffer takes whole 4-byte words: an odd count of halves or a Q8_0 matrix of an odd
// number of 34-byte blocks gets padding.
function wholeWords(view) {
  if (view.byteLength % 4 === 0) return view;
  const padded = new Uint8Array(Math.ceil(view.byteLength / 4) * 4);
  padded.set(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
  return padded;
}

const STORAGE = 0x80 | 0x8 | 0x4; // STORAGE | COPY_DST | COPY_SRC

// Models on one device share its compiled pipelines (compiling is most of a first run's time).
const pipelinesOf = new WeakMap();
function pipelineCache(device) {
  if (!pipelinesOf.has(device)) pipelinesOf.set(device, new PipelineCache(device));
  return pipelinesOf.get(device);
}

export class GpuModel {
  #gpu;
  #device;
  #config;
  #scales;
  #weights = new Map(); // core weight name -> GPUBuffer
  #storage = new WeakMap(); // weight GPUBuffer -> 'halves' | 'q8' | 'q4' (else f32)
  #buffers;
  #pipelines;
  #queue = Promise.resolve();
  #lost = null;
  #disposed = false;
  #zeroed = false;
  #compiled = null;

  /**
   * @param {object} gpu from device.js openGpuDevice()
   * @param {object} config the core config (gpuModelSupport() returned null for it)
   */
  constructor(gpu, config) {
    this.#gpu = gpu;
    this.#device = gpu.device;
    this.#config = config;
    this.#buffers = new GpuBuffers(gpu.device);
    this.#pipelines = pipelineCache(gpu.device);
    gpu.device.lost.then((info) => {
      if (!this.#disposed) this.#lost = `${info.reason}: ${info.message}`;
    });
  }

  /** Why the device is gone ('destroyed: ...'), or null. */
  get lost() {
    return this.#lost;
  }

  /** Bytes of the uploaded weights. */
  get weightBytes() {
    let total = 0;
    for (const buffer of this.#weights.values()) total += buffer.size;
    return total;
  }

  /** Each layer's factor on q.k (the core's layerScale). */
  setLayerScales(scales) {
    this.#scales = scales;
  }

  /**
   * Uploads one weight as the core holds it before packing (`view`: Float32Array, Uint16Array
   * halves, or Uint8Array Q8_0 / 4-bit rows for `dtype` 'q8' / 'q4'), in the checkpoint's layout
   * (`shape`, the core's), quantised rows as [out, in]. Every weight keeps its bytes where a
   * kernel reads them so (gpuStorage), so the GPU holds what wasm holds; the rest is widened
   * here. Throws GpuDeclined when it is larger than one binding.
   */
  upload(name, view, { shape, dtype }) {
    const expected = { f32: Float32Array, f16: Uint16Array, q8: Uint8Array, q4: Uint8Array };
    if (!(view instanceof (expected[dtype] ?? Float32Array))) {
      throw new Error(`${name}: the WebGPU forward uploads f32, f16, q8 or q4 weights only`);
    }
    const storage = gpuStorage(this.#config, name, shape, dtype);
    const data =
      storage !== 'f32' ? wholeWords(view) : dtype === 'f16' ? halvesToFloats(view) : view;
    if (data.byteLength > this.#gpu.maxBufferBytes) {
      throw new GpuDeclined(
        `${name} takes ${data.byteLength} bytes, more than one WebGPU binding holds here ` +
          `(${this.#gpu.maxBufferBytes})`,
      );
    }
    const buffer = this.#device.createBuffer({
      label: `attnlens ${name}`,
      size: Math.max(16, Math.ceil(data.byteLength / 16) * 16),
      usage: STORAGE,
    });
    this.#weights.get(name)?.destroy();
    this.#weights.set(name, buffer);
    if (storage !== 'f32') this.#storage.set(buffer, storage);
    // A shared (threaded) wasm memory cannot be handed to writeBuffer in every browser.
    const copy = data.buffer instanceof ArrayBuffer ? data : data.slice();
    this.#device.queue.writeBuffer(buffer, 0, copy.buffer, copy.byteOffset, copy.byteLength);
  }

  /** Bytes the largest binding of a forward pass of `n` tokens takes (attention's, logits'...). */
  largestBinding(n) {
    const { heads, hidden, intermediate, vocab } = this.#config;
    const widest = Math.max(3 * hidden, heads * headDimOf(this.#config), intermediate, vocab);
    return 4 * Math.max(heads * n * n, n * widest);
  }

  /**
   * One forward pass: { attention [layers, heads, N, N], logits [rows, vocab], logSumExp }.
   * `logitRows`: 'last' (the last position's) or 'all'. Runs after earlier calls finish.
   */
  forward(ids, logitRows) {
    return this.#serially(ids, ids.length, logitRows);
  }

  /**
   * A vision transformer's pass over `patches` (Float32Array [patches, C * P * P], unfolded in
   * the patch weight's order): N = patches + 1 (the class token), logits (the classifier's, over
   * the class token) when `logits`.
   */
  forwardImage(patches, n, logits) {
    return this.#serially(patches, n, logits ? 'first' : 'none');
  }

  #serially(input, n, logitRows) {
    const run = this.#queue.then(() => this.#forward(input, n, logitRows));
    this.#queue = run.catch(() => {});
    return run;
  }

  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const buffer of this.#weights.values()) buffer.destroy();
    this.#weights.clear();
    this.#buffers.dispose();
    if (this.#gpu.owned) this.#device.destroy();
  }

  async #forward(input, n, logitRows) {
    if (this.#disposed) throw new Error('the WebGPU model was disposed');
    if (this.#lost) throw new GpuDeclined(`the WebGPU device was lost (${this.#lost})`);
    if (this.largestBinding(n) > this.#gpu.maxBufferBytes) {
      throw new GpuDeclined(
        `${n} tokens need ${this.largestBinding(n)} bytes in one WebGPU binding, more than ` +
          `this device allows (${this.#gpu.maxBufferBytes})`,
      );
    }
    const { layers, heads, vocab } = this.#config;
    const rows = logitRows === 'all' ? n : logitRows === 'none' ? 0 : 1;
    const b = this.#buffers;
    const device = this.#device;
    const pipelines = await this.#compile();
    // The result first: a text whose attention JavaScript cannot hold fails before any GPU work.
    const attention = allocateAttention(layers * heads * n * n);
    // A buffer the device cannot allocate, or a pass it refuses, declines the run (wasm runs it)
    // rather than reading back whatever the buffers held.
    device.pushErrorScope('out-of-memory');
    device.pushErrorScope('validation');
    const layerBytes = 4 * heads * n * n;
    let readbacks;
    let logitsReadback;
    let scopes;
    try {
      readbacks = Array.from({ length: layers }, (_, l) =>
        b.readback(`attention:${l}`, layerBytes),
      );
      logitsReadback = b.readback('logits', 4 * Math.max(1, rows) * vocab);
      this.#encode(input, n, logitRows, { pipelines, readbacks, logitsReadback, layerBytes });
    } finally {
      scopes = [device.popErrorScope(), device.popErrorScope()];
    }
    const [invalid, outOfMemory] = await Promise.all(scopes);
    const failure = outOfMemory ?? invalid;
    if (failure) throw new GpuDeclined(`the GPU forward failed: ${failure.message}`);
    const layerFloats = heads * n * n;
    const read = async (buffer, bytes, into, offset) => {
      await buffer.mapAsync(MapMode.READ, 0, bytes);
      into.set(new Float32Array(buffer.getMappedRange(0, bytes)), offset);
      buffer.unmap();
    };
    const logitValues = new Float32Array(rows * vocab);
    await Promise.all([
      ...readbacks.map((buffer, l) => read(buffer, layerBytes, attention, l * layerFloats)),
      ...(rows > 0 ? [read(logitsReadback, 4 * rows * vocab, logitValues, 0)] : []),
    ]);
    if (this.#disposed) throw new Error('the WebGPU model was disposed');
    requireFinite(logitValues, 'logits');
    requireFinite(attention, 'attention');
    if (rows === 0) return { attention };
    return { attention, logits: logitValues, logSumExp: logSumExps(logitValues, rows, vocab) };
  }

  // Records and submits one forward pass: the layers (layers.js), the LM head over the asked
  // rows, and the copies of every layer's probabilities and the logits to their readbacks.
  #encode(input, n, logitRows, { pipelines, readbacks, logitsReadback, layerBytes }) {
    const config = this.#config;
    const { hidden, vocab } = config;
    const rows = logitRows === 'all' ? n : logitRows === 'none' ? 0 : 1;
    const b = this.#buffers;
    const device = this.#device;
    const logits = b.storage('logits', 4 * Math.max(1, rows) * vocab);
    const encoder = device.createCommandEncoder({ label: 'attnlens model forward' });
    const pass = { current: encoder.beginComputePass() };
    const run = {
      n,
      pipelines,
      buffers: b,
      weight: (name) => this.#weights.get(name),
      zeros: this.#zeros(),
      scales: this.#scales,
      uniform: (role, spec, values) => b.uniform(role, spec.pack(values)),
      tiles: (m, out) => [Math.ceil(out / LINEAR_TILE), Math.ceil(m / LINEAR_TILE)],
      // A linear pass has a variant per weight storage the model holds ({ f32, halves, q8 }):
      // the one of the weight it binds (always binding 2).
      dispatch: (variants, resources, groups) => {
        const pipeline = variants.f32
          ? variants[this.#storage.get(resources[2]) ?? 'f32']
          : variants;
        pass.current.setPipeline(pipeline);
        pass.current.setBindGroup(
          0,
          device.createBindGroup({
            layout: pipeline.getBindGroupLayout(0),
            entries: resources.map((buffer, binding) => ({ binding, resource: { buffer } })),
          }),
        );
        pass.current.dispatchWorkgroups(...groups);
      },
      // Between passes: the layer's probabilities to its readback buffer.
      readAttention: (probabilities, l) => {
        pass.current.end();
        encoder.copyBufferToBuffer(probabilities, 0, readbacks[l], 0, layerBytes);
        pass.current = encoder.beginComputePass();
      },
    };
    const final = encodeLayers(config, input, run);
    if (rows > 0) {
      const headParams = run.uniform('linear:head', LINEAR_UNIFORMS, {
        m: rows,
        n: vocab,
        k: hidden,
        aRow: logitRows === 'last' ? n - 1 : 0,
      });
      // The LM head (tied to the embeddings, or its own) has no bias; ViT's classifier has one.
      const [head, bias] =
        config.architecture === 'vit'
          ? [run.weight('classifier.weight'), run.weight('classifier.bias')]
          : [run.weight(config.tieWordEmbeddings === false ? 'lm_head' : 'token_embedding'), null];
      run.dispatch(
        pipelines.head,
        [headParams, final, head, bias ?? run.zeros, logits],
        run.tiles(rows, vocab),
      );
    }
    pass.current.end();
    if (rows > 0) encoder.copyBufferToBuffer(logits, 0, logitsReadback, 0, 4 * rows * vocab);
    device.queue.submit([encoder.finish()]);
  }

  // Zeros as long as the longest bias, for the linear layers that have none.
  #zeros() {
    const { vocab, hidden, intermediate, heads } = this.#config;
    const count = Math.max(vocab, 3 * hidden, intermediate, heads * headDimOf(this.#config));
    const buffer = this.#buffers.storage('zeros', 4 * count);
    if (!this.#zeroed) {
      this.#device.queue.writeBuffer(buffer, 0, new Float32Array(count));
      this.#zeroed = true;
    }
    return buffer;
  }

  #compile() {
    if (!this.#compiled) {
      const get = (key, source) => this.#pipelines.get(key, source);
      const plain = { transposed: false, gelu: false, accumulate: false };
      const linearVariant = (variant) =>
        get(
          `model-linear-${Object.keys(variant)
            .filter((k) => variant[k])
            .map((k) => (variant[k] === true ? k : `${k}:${variant[k]}`))
            .join('-')}`,
          () => linearKernel({ ...plain, ...variant }),
        );
      const storages = new Set(['f32']);
      for (const buffer of this.#weights.values()) storages.add(this.#storage.get(buffer) ?? 'f32');
      // { f32: pipeline, halves?, q8?, q4? }: the variants of the storages the weights have.
      const linear = (variant) =>
        Promise.all([...storages].map((storage) => linearVariant({ ...variant, storage }))).then(
          (list) => Object.fromEntries([...storages].map((storage, i) => [storage, list[i]])),
        );
      const storageOf = (name) => this.#storage.get(this.#weights.get(name)) ?? 'f32';
      const embed = (positions) => {
        const storage = [
          storageOf('token_embedding'),
          positions ? storageOf('position_embedding') : 'f32',
        ];
        const key = `model-embed${positions ? '-positions' : ''}-${storage.join('-')}`;
        return get(key, () => embedKernel({ positions, storage }));
      };
      const architecture = this.#config.architecture;
      const entries =
        architecture === 'vit'
          ? {
              embed: get('model-embed-vision', visionEmbedKernel),
              norm: get('model-layer-norm', () => normKernel({ rms: false })),
              linear: linear({ transposed: true }),
              gelu: linear({ transposed: true, gelu: 'erf' }),
              residual: linear({ transposed: true, accumulate: true }),
            }
          : architecture === 'gpt2'
            ? {
                embed: embed(true),
                norm: get('model-layer-norm', () => normKernel({ rms: false })),
                linear: linear({}),
                gelu: linear({ gelu: true }),
                residual: linear({ accumulate: true }),
              }
            : {
                embed: embed(false),
                norm: get('model-rms-norm', () => normKernel({ rms: true })),
                linear: linear({ transposed: true }),
                gated: linear({ transposed: true, gated: true }),
                residual: linear({ transposed: true, accumulate: true }),
                rotary: get('model-rotary', rotaryKernel),
              };
      const causal = architecture !== 'vit';
      entries.attention = get(`model-attention-${causal ? 'causal' : 'full'}`, () =>
        attentionKernel({ causal }),
      );
      entries.head = linear({ transposed: true });
      this.#compiled = Promise.all(Object.values(entries)).then((list) =>
        Object.fromEntries(Object.keys(entries).map((key, i) => [key, list[i]])),
      );
      this.#compiled.catch(() => {
        this.#compiled = null;
      });
    }
    return this.#compiled;
  }
}

function allocateAttention(length) {
  try {
    return new Float32Array(length);
  } catch (cause) {
    throw attnlensError(
      'out_of_memory',
      'attention',
      `[layers, heads, N, N] takes ${4 * length} bytes, more than this JavaScript engine ` +
        'allocates at once: run a shorter text',
      { cause },
    );
  }
}

function requireFinite(values, name) {
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) {
      throw new GpuDeclined(`the GPU forward produced a non-finite ${name}[${i}]`);
    }
  }
}

// Each row's log sum exp (as the core returns it: a token's probability is exp(logit - it)).
function logSumExps(logits, rows, vocab) {
  const out = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    let best = -Infinity;
    for (let v = 0; v < vocab; v++) best = Math.max(best, logits[r * vocab + v]);
    let sum = 0;
    for (let v = 0; v < vocab; v++) sum += Math.exp(logits[r * vocab + v] - best);
    out[r] = best + Math.log(sum);
  }
  return out;
}
