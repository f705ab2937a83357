// A model's forward pass on a WebGPU device: the weights uploaded once (f32), then one submission
// per run of WGSL passes (kernels.wgsl.js), and every layer's attention probabilities and the
// asked rows of logits read back. GPT-2 so far (pre-LN blocks, Conv1D weights [in, out], c_attn
// packing q | k | v, gelu_new, the LM head tied to wte); gpuModelSupport() says what else is
// refused and why, so an architecture that is not yet here is refused by name, never run wrong.

import { GpuDeclined } from '../errors.js';
import { MapMode } from '../flags.js';
import { GpuBuffers } from '../gpu-buffers.js';
import { PipelineCache } from '../pipelines.js';
import {
  ATTENTION_UNIFORMS,
  ATTENTION_WORKGROUP,
  EMBED_UNIFORMS,
  EMBED_WORKGROUP,
  LINEAR_TILE,
  LINEAR_UNIFORMS,
  NORM_UNIFORMS,
  attentionKernel,
  embedKernel,
  layerNormKernel,
  linearKernel,
} from './kernels.wgsl.js';

/** The architectures (the core's names) whose forward pass runs on WebGPU. */
export const GPU_ARCHITECTURES = Object.freeze(['gpt2']);

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
  if (core.activation !== 'gelu_tanh') {
    return `the WebGPU forward has gelu_new (gelu_tanh) only, not ${core.activation}`;
  }
  if (dtype === 'q8') return "the WebGPU forward has no Q8_0 weights (dtype 'q8')";
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
   * Uploads one weight as the core holds it before packing (`view`: Float32Array, or Uint16Array
   * halves), in the checkpoint's layout. Throws GpuDeclined when it is larger than one binding.
   */
  upload(name, view) {
    const floats = view instanceof Uint16Array ? halvesToFloats(view) : view;
    if (floats.byteLength > this.#gpu.maxBufferBytes) {
      throw new GpuDeclined(
        `${name} takes ${floats.byteLength} bytes, more than one WebGPU binding holds here ` +
          `(${this.#gpu.maxBufferBytes})`,
      );
    }
    const buffer = this.#device.createBuffer({
      label: `attnlens ${name}`,
      size: Math.max(16, Math.ceil(floats.byteLength / 16) * 16),
      usage: STORAGE,
    });
    this.#weights.get(name)?.destroy();
    this.#weights.set(name, buffer);
    // A shared (threaded) wasm memory cannot be handed to writeBuffer in every browser.
    const data = floats.buffer instanceof ArrayBuffer ? floats : floats.slice();
    this.#device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
  }

  /** Bytes the largest binding of a forward pass of `n` tokens takes (attention's, logits'...). */
  largestBinding(n) {
    const { heads, hidden, intermediate, vocab } = this.#config;
    return 4 * Math.max(heads * n * n, n * 3 * hidden, n * intermediate, n * vocab);
  }

  /**
   * One forward pass: { attention [layers, heads, N, N], logits [rows, vocab], logSumExp }.
   * `logitRows`: 'last' (the last position's) or 'all'. Runs after earlier calls finish.
   */
  forward(ids, logitRows) {
    const run = this.#queue.then(() => this.#forward(ids, logitRows));
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

  async #forward(ids, logitRows) {
    if (this.#disposed) throw new Error('the WebGPU model was disposed');
    if (this.#lost) throw new GpuDeclined(`the WebGPU device was lost (${this.#lost})`);
    const n = ids.length;
    if (this.largestBinding(n) > this.#gpu.maxBufferBytes) {
      throw new GpuDeclined(
        `${n} tokens need ${this.largestBinding(n)} bytes in one WebGPU binding, more than ` +
          `this device allows (${this.#gpu.maxBufferBytes})`,
      );
    }
    const { layers, heads, hidden, intermediate, vocab, layerNormEps } = this.#config;
    const headDim = hidden / heads;
    const rows = logitRows === 'all' ? n : 1;
    const b = this.#buffers;
    const device = this.#device;
    const pipelines = await this.#compile();
    const idsBuffer = b.upload('ids', Uint32Array.from(ids));
    const x = b.storage('x', 4 * n * hidden);
    const normed = b.storage('normed', 4 * n * hidden);
    const qkv = b.storage('qkv', 4 * n * 3 * hidden);
    const attended = b.storage('attended', 4 * n * hidden);
    const mlp = b.storage('mlp', 4 * n * intermediate);
    const probabilities = b.storage('probabilities', 4 * heads * n * n);
    const logits = b.storage('logits', 4 * rows * vocab);
    const layerBytes = 4 * heads * n * n;
    const readbacks = Array.from({ length: layers }, (_, l) =>
      b.readback(`attention:${l}`, layerBytes),
    );
    const logitsReadback = b.readback('logits', 4 * rows * vocab);
    const w = (name) => this.#weights.get(name);
    const uniform = (role, spec, values) => b.uniform(role, spec.pack(values));
    const norm = uniform('norm', NORM_UNIFORMS, { columns: hidden, eps: layerNormEps });
    const linear = (role, m, out, k, aRow = 0) =>
      uniform(`linear:${role}`, LINEAR_UNIFORMS, { m, n: out, k, aRow });
    const qkvParams = linear('qkv', n, 3 * hidden, hidden);
    const projParams = linear('proj', n, hidden, hidden);
    const upParams = linear('up', n, intermediate, hidden);
    const downParams = linear('down', n, hidden, intermediate);
    const headParams = linear('head', rows, vocab, hidden, logitRows === 'all' ? 0 : n - 1);
    const tiles = (m, out) => [Math.ceil(out / LINEAR_TILE), Math.ceil(m / LINEAR_TILE)];

    const encoder = device.createCommandEncoder({ label: 'attnlens model forward' });
    let pass = encoder.beginComputePass();
    const dispatch = (pipeline, resources, groups) => {
      pass.setPipeline(pipeline);
      pass.setBindGroup(
        0,
        device.createBindGroup({
          layout: pipeline.getBindGroupLayout(0),
          entries: resources.map((buffer, binding) => ({ binding, resource: { buffer } })),
        }),
      );
      pass.dispatchWorkgroups(...groups);
    };
    const embed = uniform('embed', EMBED_UNIFORMS, { tokens: n, hidden, past: 0 });
    dispatch(
      pipelines.embed,
      [embed, idsBuffer, w('token_embedding'), w('position_embedding'), x],
      [Math.ceil((n * hidden) / EMBED_WORKGROUP)],
    );
    for (let l = 0; l < layers; l++) {
      const at = (name) => w(`layers.${l}.${name}`);
      const attentionParams = uniform(`attention:${l}`, ATTENTION_UNIFORMS, {
        tokens: n,
        headDim,
        hidden,
        scale: this.#scales[l],
      });
      dispatch(
        pipelines.layerNorm,
        [norm, x, at('attention_norm.weight'), at('attention_norm.bias'), normed],
        [n],
      );
      dispatch(
        pipelines.linear,
        [qkvParams, normed, at('attention.qkv.weight'), at('attention.qkv.bias'), qkv],
        tiles(n, 3 * hidden),
      );
      dispatch(pipelines.attention, [attentionParams, qkv, probabilities, attended], [n, heads]);
      pass.end();
      encoder.copyBufferToBuffer(probabilities, 0, readbacks[l], 0, layerBytes);
      pass = encoder.beginComputePass();
      dispatch(
        pipelines.residual,
        [projParams, attended, at('attention.output.weight'), at('attention.output.bias'), x],
        tiles(n, hidden),
      );
      dispatch(
        pipelines.layerNorm,
        [norm, x, at('mlp_norm.weight'), at('mlp_norm.bias'), normed],
        [n],
      );
      dispatch(
        pipelines.gelu,
        [upParams, normed, at('mlp.input.weight'), at('mlp.input.bias'), mlp],
        tiles(n, intermediate),
      );
      dispatch(
        pipelines.residual,
        [downParams, mlp, at('mlp.output.weight'), at('mlp.output.bias'), x],
        tiles(n, hidden),
      );
    }
    let final = x;
    if (this.#config.finalNorm !== false) {
      dispatch(
        pipelines.layerNorm,
        [norm, x, w('final_norm.weight'), w('final_norm.bias'), normed],
        [n],
      );
      final = normed;
    }
    dispatch(
      pipelines.head,
      [headParams, final, w('token_embedding'), this.#zeros(vocab), logits],
      tiles(rows, vocab),
    );
    pass.end();
    encoder.copyBufferToBuffer(logits, 0, logitsReadback, 0, 4 * rows * vocab);
    device.queue.submit([encoder.finish()]);

    const attention = new Float32Array(layers * heads * n * n);
    const layerFloats = heads * n * n;
    const read = async (buffer, bytes, into, offset) => {
      await buffer.mapAsync(MapMode.READ, 0, bytes);
      into.set(new Float32Array(buffer.getMappedRange(0, bytes)), offset);
      buffer.unmap();
    };
    const logitValues = new Float32Array(rows * vocab);
    await Promise.all([
      ...readbacks.map((buffer, l) => read(buffer, layerBytes, attention, l * layerFloats)),
      read(logitsReadback, 4 * rows * vocab, logitValues, 0),
    ]);
    if (this.#disposed) throw new Error('the WebGPU model was disposed');
    requireFinite(logitValues, 'logits');
    requireFinite(attention, 'attention');
    return { attention, logits: logitValues, logSumExp: logSumExps(logitValues, rows, vocab) };
  }

  // A bias of zeros for the tied LM head, which has none.
  #zeros(count) {
    const role = `zeros:${count}`;
    const buffer = this.#buffers.storage(role, 4 * count);
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
      const entries = {
        embed: get('model-embed', embedKernel),
        layerNorm: get('model-layer-norm', layerNormKernel),
        attention: get('model-attention-causal', () => attentionKernel({ causal: true })),
        linear: get('model-linear', () => linearKernel(plain)),
        gelu: get('model-linear-gelu', () => linearKernel({ ...plain, gelu: true })),
        residual: get('model-linear-residual', () => linearKernel({ ...plain, accumulate: true })),
        head: get('model-linear-transposed', () => linearKernel({ ...plain, transposed: true })),
      };
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
