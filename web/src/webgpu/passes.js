// Encoding the kernels: each method fetches (or compiles, once) the pipeline of its variant,
// writes its uniforms into the buffer of its role and records one compute pass. Roles name the
// uniform buffers, so every dispatch of one submission needs a role of its own.

import { MapMode } from './flags.js';
import { GpuBuffers } from './gpu-buffers.js';
import { PipelineCache } from './pipelines.js';
import { GEMM_TILE, GEMM_UNIFORMS, gemmKernel } from './wgsl/gemm.wgsl.js';
import { NORMALIZE_UNIFORMS, NORMALIZE_WORKGROUP, normalizeKernel } from './wgsl/normalize.wgsl.js';
import { SOFTMAX_UNIFORMS, softmaxKernel } from './wgsl/softmax.wgsl.js';
import { STREAMING_UNIFORMS, streamingKernel } from './wgsl/streaming.wgsl.js';

const SOFTMAX_INVOCATIONS = 64;

export class GpuPasses {
  /**
   * @param {object} gpu from device.js openGpuDevice(): device, subgroups, shuffleLanes, limits
   */
  constructor(gpu) {
    this.gpu = gpu;
    this.device = gpu.device;
    this.pipelines = new PipelineCache(gpu.device);
    this.buffers = new GpuBuffers(gpu.device);
    const lanes = gpu.subgroups ? gpu.shuffleLanes : 16;
    this.softmaxPlan = {
      lanes,
      rowsPerGroup: Math.max(1, SOFTMAX_INVOCATIONS / lanes),
      subgroups: gpu.subgroups,
    };
    /** The largest buffer one binding may cover. */
    this.maxBinding = gpu.maxBufferBytes;
    this.maxGroups = gpu.limits.maxComputeWorkgroupsPerDimension;
  }

  /** Rows one softmax dispatch can cover. */
  get maxSoftmaxRows() {
    return this.maxGroups * this.softmaxPlan.rowsPerGroup;
  }

  dispose() {
    this.buffers.dispose();
  }

  #pass(encoder, pipeline, resources, groups, label) {
    const bindGroup = this.device.createBindGroup({
      label,
      layout: pipeline.getBindGroupLayout(0),
      entries: resources.map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    const pass = encoder.beginComputePass({ label });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(...groups);
    pass.end();
  }

  /**
   * C = bias + A x B over strided batches (wgsl/gemm.wgsl.js).
   * @param {GPUCommandEncoder} encoder
   * @param {string} role
   * @param {{ batch, m, n, k, a, aType, aOffset?, aBatch, aRow, aCol, aGroup?, aShift?, b, bType,
   *   bOffset?, bBatch, bRow, bCol, bGroup?, bShift?, c, cOffset?, cBatch, cRow, bias?,
   *   biasBatch?, additiveV?, vOffset?, vBatch? }} s
   */
  async gemm(encoder, role, s) {
    const combine = s.additiveV ? 'additive' : 'multiply';
    const variant = { a: s.aType, b: s.bType, combine };
    const pipeline = await this.pipelines.get(`gemm:${s.aType}:${s.bType}:${combine}`, () =>
      gemmKernel(variant),
    );
    const uniforms = this.buffers.uniform(
      `gemm:${role}`,
      GEMM_UNIFORMS.pack({
        m: s.m,
        n: s.n,
        k: s.k,
        aOffset: s.aOffset ?? 0,
        aBatch: s.aBatch,
        aRow: s.aRow,
        aCol: s.aCol,
        aGroup: s.aGroup ?? 1,
        aShift: s.aShift ?? 0,
        bOffset: s.bOffset ?? 0,
        bBatch: s.bBatch,
        bRow: s.bRow,
        bCol: s.bCol,
        bGroup: s.bGroup ?? 1,
        bShift: s.bShift ?? 0,
        cOffset: s.cOffset ?? 0,
        cBatch: s.cBatch,
        cRow: s.cRow,
        hasBias: s.bias ? 1 : 0,
        biasBatch: s.biasBatch ?? 0,
        vOffset: s.vOffset ?? 0,
        vBatch: s.vBatch ?? 0,
      }),
    );
    // An unused bias binding still needs a buffer (hasBias = 0: never read).
    const resources = [uniforms, s.a, s.b, s.c, s.bias ?? this.buffers.storage('unused-bias', 16)];
    if (s.additiveV) resources.push(s.additiveV);
    this.#pass(
      encoder,
      pipeline,
      resources,
      [Math.ceil(s.n / GEMM_TILE), Math.ceil(s.m / GEMM_TILE), s.batch],
      `attnlens gemm ${role}`,
    );
  }

  /** Whether a GEMM of this shape fits one dispatch. */
  gemmFits({ batch, m, n }) {
    return (
      Math.ceil(n / GEMM_TILE) <= this.maxGroups &&
      Math.ceil(m / GEMM_TILE) <= this.maxGroups &&
      batch <= this.maxGroups
    );
  }

  /** Unit rows of a [rows, depth] tensor into the f32 buffer of `role` (cosine operands). */
  async normalize(encoder, role, input, inputType, rows, depth) {
    const pipeline = await this.pipelines.get(`normalize:${inputType}`, () =>
      normalizeKernel({ storage: inputType }),
    );
    const output = this.buffers.storage(role, rows * depth * 4);
    const uniforms = this.buffers.uniform(
      `normalize:${role}`,
      NORMALIZE_UNIFORMS.pack({ rows, depth }),
    );
    const groups = Math.ceil(rows / NORMALIZE_WORKGROUP);
    const x = Math.min(groups, this.maxGroups);
    this.#pass(
      encoder,
      pipeline,
      [uniforms, input, output],
      [x, Math.ceil(groups / x), 1],
      `attnlens normalize ${role}`,
    );
    return output;
  }

  /**
   * The streaming kernel over `heads` heads of `queryLength` rows.
   * @param {object} plan tiling.js planStreaming()
   * @param {{ keys, values, score, terms }} variant element types, score kind, logit terms
   * @param {object} fields every STREAMING_UNIFORMS field
   * @param {GPUBuffer[]} resources q, k, v, out, maskWords, visits[, additiveV][, logitBias]
   */
  async streaming(encoder, plan, variant, fields, resources) {
    const reduction = plan.subgroups ? 'subgroups' : 'plain';
    const key =
      `streaming:${variant.keys}:${variant.values}:${variant.score}:${reduction}:` +
      `${variant.terms ? 'terms' : 'plain'}:` +
      `${plan.depth4}x${plan.value4}:${plan.lanes}:${plan.queryBlock}x${plan.keyTile}`;
    const pipeline = await this.pipelines.get(key, () => streamingKernel(plan, variant));
    const uniforms = this.buffers.uniform('streaming', STREAMING_UNIFORMS.pack(fields));
    this.#pass(
      encoder,
      pipeline,
      [uniforms, ...resources],
      [Math.ceil(fields.queryLength / plan.queryBlock), fields.heads, 1],
      'attnlens streaming',
    );
  }

  /**
   * Masked softmax of a score chunk (wgsl/softmax.wgsl.js).
   * @param {object} fields every SOFTMAX_UNIFORMS field
   * @param {number} heads heads in the chunk
   * @param {GPUBuffer} [logitBias] given exactly when the call has logit terms (logit-terms.js)
   */
  async softmax(encoder, fields, heads, scores, weights, maskWords, logitBias) {
    const plan = this.softmaxPlan;
    const reduction = plan.subgroups ? 'subgroups' : 'plain';
    const terms = logitBias !== undefined;
    const topK = fields.topK > 0;
    const variant = `${reduction}:${terms ? 'terms' : 'plain'}:${topK ? 'top-k' : 'all'}`;
    const key = `softmax:${plan.lanes}x${plan.rowsPerGroup}:${variant}`;
    const pipeline = await this.pipelines.get(key, () => softmaxKernel(plan, { terms, topK }));
    const uniforms = this.buffers.uniform('softmax', SOFTMAX_UNIFORMS.pack(fields));
    const resources = [uniforms, scores, weights, maskWords];
    if (terms) resources.push(logitBias);
    this.#pass(
      encoder,
      pipeline,
      resources,
      [Math.ceil(fields.rows / plan.rowsPerGroup), heads, 1],
      'attnlens softmax',
    );
  }

  /**
   * Copies GPU buffers into mappable ones, submits `encoder` and resolves to one copy of each
   * region's bytes: [{ buffer, bytes, role }] -> ArrayBuffer[].
   */
  async submitAndRead(encoder, regions) {
    const targets = regions.map(({ buffer, bytes, role }) => {
      const target = this.buffers.readback(role, bytes);
      encoder.copyBufferToBuffer(buffer, 0, target, 0, Math.ceil(bytes / 4) * 4);
      return { target, bytes };
    });
    this.device.queue.submit([encoder.finish()]);
    const copies = [];
    for (const { target, bytes } of targets) {
      await target.mapAsync(MapMode.READ, 0, Math.ceil(bytes / 4) * 4);
      copies.push(target.getMappedRange(0, Math.ceil(bytes / 4) * 4).slice(0, bytes));
      target.unmap();
    }
    return copies;
  }
}
