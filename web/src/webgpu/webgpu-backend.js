// The WebGPU backend: the same compute interface as wasm-backend.js (attention, multiHead), on a
// GPU device. Calls run one at a time on the device (they share its buffers). A call the GPU
// cannot take (logits that could overflow, sizes beyond the device's limits, a kernel that does
// not compile) throws GpuDeclined, and backend.js runs it on wasm; a lost device throws
// GpuDeviceLost, and backend.js re-creates the device or falls back to wasm.

import { openGpuDevice } from './device.js';
import { GpuDeclined, GpuDeviceLost } from './errors.js';
import { HALF_MAX, toHalf } from './f16.js';
import { biasMagnitude, groupTerms, logitTerms, slopesOf } from './logit-terms.js';
import { maskData } from './mask-data.js';
import {
  logitFactor,
  logitsMayOverflow,
  maxAbs,
  resolvedScale,
  termsMayOverflow,
} from './overflow.js';
import { GpuPasses } from './passes.js';
import { KernelCompileError } from './pipelines.js';
import {
  encodeStreaming,
  materializedChunks,
  runMaterialized,
  streamingPlanFor,
} from './attention-gpu.js';
import { headGroups } from './tiling.js';

// How long a failed GPU operation waits for device.lost to settle before it is reported as an
// ordinary error: losses are announced asynchronously, often just after the failure they cause.
const LOSS_SETTLE_MS = 100;

function decline(reason) {
  throw new GpuDeclined(reason);
}

function requireFiniteResult(values, name) {
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) decline(`the GPU produced a non-finite ${name}[${i}]`);
  }
}

export class WebGpuBackend {
  name = 'webgpu';
  #gpu;
  #passes;
  #queue = Promise.resolve();
  #lost = null;
  #disposed = false;

  /** Opens a device (device.js options); rejects with WebGpuUnavailable naming why it cannot. */
  static async open(options) {
    return new WebGpuBackend(await openGpuDevice(options));
  }

  constructor(gpu) {
    this.#gpu = gpu;
    this.#passes = new GpuPasses(gpu);
    gpu.device.lost.then((info) => {
      if (!this.#disposed) this.#lost = { reason: info.reason, message: info.message };
    });
  }

  /** { adapter, storage, subgroups, owned, notes }: what this backend runs with. */
  get info() {
    const { adapter, storage, subgroups, owned, notes } = this.#gpu;
    return { adapter, storage, subgroups, owned, notes };
  }

  /** The loss ({ reason, message }) once the device is gone, else null. */
  get lost() {
    return this.#lost;
  }

  /** Kernel variants compiled so far on this device. */
  get pipelineCount() {
    return this.#passes.pipelines.size;
  }

  attention(problem) {
    return this.#serially(() => this.#attention(problem));
  }

  multiHead(problem) {
    return this.#serially(() => this.#multiHead(problem));
  }

  /** Frees the buffers; destroys the device if this backend created it. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#passes.dispose();
    if (this.#gpu.owned) this.#gpu.device.destroy();
  }

  #serially(run) {
    const result = this.#queue.then(() => this.#guarded(run));
    this.#queue = result.catch(() => {});
    return result;
  }

  // Turns failures caused by a lost device into GpuDeviceLost, and compile failures into
  // GpuDeclined.
  async #guarded(run) {
    // Loss first: calls queued behind the one that found the device lost must be re-run by
    // backend.js even though it has disposed this backend meanwhile.
    if (this.#lost) throw new GpuDeviceLost(this.#lost);
    if (this.#disposed) throw new Error('the WebGPU backend was disposed');
    try {
      return await run();
    } catch (error) {
      if (error instanceof GpuDeclined) throw error;
      // The f16 kernels are the ones never compiled in this project's tests (no adapter here has
      // 'shader-f16'): if the device refuses one, continue in f32 rather than on wasm.
      if (error instanceof KernelCompileError && this.#gpu.storage === 'f16' && !this.#lost) {
        this.#gpu.storage = 'f32';
        this.#gpu.notes.push(`f16 storage abandoned: ${error.message}`);
        return this.#guarded(run);
      }
      if (!this.#lost) {
        await Promise.race([
          this.#gpu.device.lost,
          new Promise((r) => setTimeout(r, LOSS_SETTLE_MS)),
        ]);
      }
      if (this.#lost) throw new GpuDeviceLost(this.#lost, { cause: error });
      if (error instanceof KernelCompileError)
        throw new GpuDeclined(error.message, { cause: error });
      throw error;
    }
  }

  // What every call checks first; returns the logits' factor (scale / temperature), their terms
  // (logit-terms.js) and the mask (mask-data.js; `tensors`: the q and k that lsh hashes).
  #logits(shape, options, maxQ, maxK, tensors) {
    const { heads, queryLength: nq, keyLength: nk, headDim } = shape;
    const factor = logitFactor(options, headDim);
    const terms = logitTerms(options, shape, resolvedScale(options, headDim));
    const score = { maxQ, maxK, headDim, options };
    const overflows = terms.active
      ? termsMayOverflow({
          ...score,
          fields: terms.fields,
          largestBias: biasMagnitude(options.bias),
          largestSlope: maxAbs(slopesOf(options, heads)),
          distance: Math.max(nq + (options.queryOffset ?? 0), nk),
        })
      : logitsMayOverflow({ ...score, factor });
    if (overflows) {
      decline('the logits could overflow float32 (the core checks such problems exactly)');
    }
    if ((options.mask || options.bias) && nq * nk > 2 ** 32 - 1) {
      decline(
        'a custom mask or bias over 2^32 or more cells (the kernels index them with 32 bits)',
      );
    }
    if (terms.bias && 4 * nq * nk > this.#passes.maxBinding) {
      decline('the bias of one head exceeds the largest storage binding of this device');
    }
    const mask = maskData(options, shape, tensors);
    if (mask.words.byteLength > this.#passes.maxBinding) {
      decline('the mask data exceeds the largest storage binding of this device');
    }
    return { factor, terms, mask };
  }

  // Streaming when asked (or auto without matrices) and its tiles fit, else materialized, whose
  // score matrix must be cut into chunks the device accepts (checked for the largest group).
  // topK selects from whole rows of logits, which only the materialized path forms.
  #strategy(requested, wantsMatrices, group, topK) {
    const passes = this.#passes;
    if (topK && requested === 'streaming') {
      decline('topK on WebGPU selects from whole rows of scores: the materialized strategy only');
    }
    if (topK && group.keyLength > 2 ** 24) {
      decline('topK over more than 2^24 keys (the GPU counts them in float32)');
    }
    const streaming =
      !topK && (requested === 'streaming' || (requested === 'auto' && !wantsMatrices));
    if (streaming) {
      const plan = streamingPlanFor(passes, group);
      if (plan && Math.ceil(group.queryLength / plan.queryBlock) <= passes.maxGroups) {
        return { strategy: 'streaming', plan };
      }
    }
    if (!materializedChunks(passes, group))
      decline('the score matrix cannot be cut into chunks this device accepts');
    return { strategy: 'materialized' };
  }

  async #attention({ shape, q, k, v, options, returnWeights, returnScores }) {
    const passes = this.#passes;
    const { heads, kvHeads, queryLength: nq, keyLength: nk, headDim: d, valueDim: dv } = shape;
    const kvGroup = heads / kvHeads; // query heads per K/V head
    const { factor, terms, mask } = this.#logits(shape, options, maxAbs(q), maxAbs(k), { q, k });
    const storage = this.#gpu.storage;
    if (storage === 'f16' && maxAbs(q, k, v) > HALF_MAX)
      decline('inputs beyond the f16 range (65504)');
    const hidden = options.additive?.hidden ?? 0;
    const largestRow = Math.max(d, dv, hidden);
    const groups = headGroups(
      heads,
      4 * Math.max(Math.max(nq, nk) * largestRow, terms.biasHeads > 1 ? nq * nk : 0),
      passes.maxBinding,
      passes.maxGroups,
    );
    if (!groups) decline('one head exceeds the largest storage binding of this device');
    const dims = {
      queryLength: nq,
      keyLength: nk,
      headDim: d,
      valueDim: dv,
      score: options.score,
      additiveHidden: hidden,
    };
    const route = this.#strategy(
      options.strategy,
      returnWeights || returnScores,
      { ...dims, heads: groups[0].count },
      options.topK,
    );

    const maskBuffer = passes.buffers.upload('mask', mask.words);
    const upload = (role, array) =>
      passes.buffers.upload(role, storage === 'f16' ? toHalf(array) : array);
    const output = new Float32Array(heads * nq * dv);
    const matrices = {};
    if (returnWeights) matrices.weights = new Float32Array(heads * nq * nk);
    if (returnScores) matrices.scores = new Float32Array(heads * nq * nk);
    const visits = passes.buffers.storage('visits', 4);
    let tilesVisited = 0;
    let tilesTotal = 0;
    let scratchBytes = 0;

    for (const { first, count } of groups) {
      const slice = (array, rows, width, from = first, to = first + count) =>
        array.subarray(from * rows * width, to * rows * width);
      // The K/V heads the group's query heads read, uploaded once however many share them.
      const kvFirst = Math.floor(first / kvGroup);
      const kvEnd = Math.floor((first + count - 1) / kvGroup) + 1;
      const out = passes.buffers.storage('output', count * nq * dv * 4);
      const group = {
        ...dims,
        heads: count,
        headBase: first,
        kvHeads: kvEnd - kvFirst,
        kvGroup,
        kvShift: first - kvFirst * kvGroup,
        q: upload('q', slice(q, nq, d)),
        k: upload('k', slice(k, nk, d, kvFirst, kvEnd)),
        v: upload('v', slice(v, nk, dv, kvFirst, kvEnd)),
        inputType: storage,
        factor,
        topK: options.topK ?? 0,
        terms: groupTerms(terms, passes.buffers, first, count),
        mask: { fields: mask.fields, buffer: maskBuffer },
        out: { buffer: out, head: nq * dv, row: dv },
      };
      if (options.score === 'additive') {
        const a = options.additive;
        group.additive = {
          hidden,
          wQuery: passes.buffers.upload('additive-wq', slice(a.wQuery, hidden, d)),
          wKey: passes.buffers.upload('additive-wk', slice(a.wKey, hidden, d)),
          v: passes.buffers.upload('additive-v', slice(a.v, 1, hidden)),
        };
      }
      let encoder = passes.device.createCommandEncoder();
      const regions = [{ buffer: out, bytes: count * nq * dv * 4, role: 'output' }];
      if (route.strategy === 'streaming') {
        passes.device.queue.writeBuffer(visits, 0, new Uint32Array(1));
        const s = await encodeStreaming(passes, encoder, group, route.plan, visits);
        tilesTotal += s.tilesTotal;
        scratchBytes = Math.max(scratchBytes, s.scratchBytes);
        regions.push({ buffer: visits, bytes: 4, role: 'visits' });
      } else {
        const s = await runMaterialized(
          passes,
          encoder,
          group,
          materializedChunks(passes, group),
          matrices,
        );
        encoder = s.encoder;
        tilesTotal += s.tilesTotal;
        scratchBytes = Math.max(scratchBytes, s.scratchBytes);
      }
      const [outBytes, visitBytes] = await passes.submitAndRead(encoder, regions);
      output.set(new Float32Array(outBytes), first * nq * dv);
      tilesVisited += visitBytes ? new Uint32Array(visitBytes)[0] : 0;
    }
    if (route.strategy === 'materialized') tilesVisited = tilesTotal;

    requireFiniteResult(output, 'output');
    const result = { output, ...matrices };
    result.stats = {
      strategy: route.strategy,
      tilesVisited,
      tilesTotal,
      scratchBytes,
      gpu: this.#describe(route),
    };
    return result;
  }

  async #multiHead({ shape, tensors, options, returnWeights, returnScores, returnProjections }) {
    const passes = this.#passes;
    const {
      heads,
      kvHeads,
      queryLength: nq,
      keyLength: nk,
      headDim: d,
      valueDim: dv,
      modelDim,
      keyModelDim,
      outDim,
    } = shape;
    if (options.lsh) {
      decline(
        'lsh hashes the projected queries and keys on the CPU, which multiHead keeps on the GPU',
      );
    }
    const source = tensors.source ?? tensors.x;
    // Bounds on the projected q and k: |x W + b| <= max|x| max|W| width + max|b|.
    const maxQ = maxAbs(tensors.x) * maxAbs(tensors.wQuery) * modelDim + maxAbs(tensors.bQuery);
    const maxK = maxAbs(source) * maxAbs(tensors.wKey) * keyModelDim + maxAbs(tensors.bKey);
    const { factor, terms, mask } = this.#logits(shape, options, maxQ, maxK);
    const hidden = options.additive?.hidden ?? 0;
    const largest =
      4 *
      Math.max(
        heads * nq * Math.max(d, dv, hidden),
        heads * nk * Math.max(d, dv, hidden),
        nq * outDim,
        tensors.wQuery.length,
        tensors.wKey.length,
        tensors.wValue.length,
        tensors.wOut.length,
        tensors.x.length,
        source.length,
        options.bias?.length ?? 0,
      );
    if (largest > passes.maxBinding)
      decline('a tensor exceeds the largest storage binding of this device');
    if (heads > passes.maxGroups) decline('more heads than one dispatch dimension allows');
    const dims = {
      queryLength: nq,
      keyLength: nk,
      headDim: d,
      valueDim: dv,
      score: options.score,
      additiveHidden: hidden,
    };
    const route = this.#strategy(
      options.strategy,
      returnWeights || returnScores,
      { ...dims, heads },
      options.topK,
    );
    for (const s of [
      { batch: heads, m: nq, n: Math.max(d, dv) },
      { batch: heads, m: nk, n: Math.max(d, dv) },
      { batch: 1, m: nq, n: outDim },
    ]) {
      if (!passes.gemmFits(s)) decline('a projection exceeds the dispatch limits of this device');
    }

    const buffers = passes.buffers;
    const up = (role, array) => (array ? buffers.upload(role, array) : undefined);
    const x = up('mh-x', tensors.x);
    const src = tensors.source ? up('mh-source', tensors.source) : x;
    const encoder = passes.device.createCommandEncoder();
    // Projections straight into head-major layout (k and v: kvHeads heads):
    //   out[h, i, c] = sum_t in[i, t] w[t, h * width + c] + b[h * width + c]
    const project = async (role, input, rows, inner, weights, bias, width, count = heads) => {
      const out = buffers.storage(role, count * rows * width * 4);
      await passes.gemm(encoder, role, {
        batch: count,
        m: rows,
        n: width,
        k: inner,
        a: input,
        aType: 'f32',
        aBatch: 0,
        aRow: inner,
        aCol: 1,
        b: up(`${role}-w`, weights),
        bType: 'f32',
        bBatch: width,
        bRow: count * width,
        bCol: 1,
        c: out,
        cBatch: rows * width,
        cRow: width,
        bias: up(`${role}-b`, bias),
        biasBatch: width,
      });
      return out;
    };
    const q = await project('mh-q', x, nq, modelDim, tensors.wQuery, tensors.bQuery, d);
    const k = await project('mh-k', src, nk, keyModelDim, tensors.wKey, tensors.bKey, d, kvHeads);
    const v = await project(
      'mh-v',
      src,
      nk,
      keyModelDim,
      tensors.wValue,
      tensors.bValue,
      dv,
      kvHeads,
    );

    const concat = buffers.storage('mh-concat', nq * heads * dv * 4);
    const group = {
      ...dims,
      heads,
      headBase: 0,
      kvHeads,
      kvGroup: heads / kvHeads,
      kvShift: 0,
      q,
      k,
      v,
      inputType: 'f32',
      factor,
      topK: options.topK ?? 0,
      terms: groupTerms(terms, buffers, 0, heads),
      mask: { fields: mask.fields, buffer: buffers.upload('mask', mask.words) },
      // Heads side by side per token: [Nq, heads * Dv], what the output projection reads.
      out: { buffer: concat, head: dv, row: heads * dv },
    };
    if (options.score === 'additive') {
      const a = options.additive;
      group.additive = {
        hidden,
        wQuery: up('additive-wq', a.wQuery),
        wKey: up('additive-wk', a.wKey),
        v: up('additive-v', a.v),
      };
    }
    const matrices = {};
    if (returnWeights) matrices.weights = new Float32Array(heads * nq * nk);
    if (returnScores) matrices.scores = new Float32Array(heads * nq * nk);
    const visits = buffers.storage('visits', 4);
    let attention;
    let tail = encoder;
    if (route.strategy === 'streaming') {
      passes.device.queue.writeBuffer(visits, 0, new Uint32Array(1));
      attention = await encodeStreaming(passes, encoder, group, route.plan, visits);
    } else {
      attention = await runMaterialized(
        passes,
        encoder,
        group,
        materializedChunks(passes, group),
        matrices,
      );
      tail = attention.encoder;
    }
    const output = buffers.storage('mh-output', nq * outDim * 4);
    await passes.gemm(tail, 'mh-out', {
      batch: 1,
      m: nq,
      n: outDim,
      k: heads * dv,
      a: concat,
      aType: 'f32',
      aBatch: 0,
      aRow: heads * dv,
      aCol: 1,
      b: up('mh-out-w', tensors.wOut),
      bType: 'f32',
      bBatch: 0,
      bRow: outDim,
      bCol: 1,
      c: output,
      cBatch: 0,
      cRow: outDim,
      bias: up('mh-out-b', tensors.bOut),
      biasBatch: 0,
    });
    const regions = [
      { buffer: output, bytes: nq * outDim * 4, role: 'mh-output' },
      { buffer: visits, bytes: 4, role: 'visits' },
    ];
    if (returnProjections) {
      regions.push(
        { buffer: q, bytes: heads * nq * d * 4, role: 'mh-q' },
        { buffer: k, bytes: kvHeads * nk * d * 4, role: 'mh-k' },
        { buffer: v, bytes: kvHeads * nk * dv * 4, role: 'mh-v' },
      );
    }
    const copies = await passes.submitAndRead(tail, regions);
    const result = { output: new Float32Array(copies[0]), ...matrices };
    if (returnProjections)
      [result.q, result.k, result.v] = copies.slice(2).map((c) => new Float32Array(c));
    for (const key of ['output', 'q', 'k', 'v'])
      if (result[key]) requireFiniteResult(result[key], key);
    const tilesVisited =
      route.strategy === 'streaming' ? new Uint32Array(copies[1])[0] : attention.tilesTotal;
    result.stats = {
      strategy: route.strategy,
      tilesVisited,
      tilesTotal: attention.tilesTotal,
      // Projections and the concatenated heads, beyond what attention itself needed.
      scratchBytes:
        attention.scratchBytes + 4 * (heads * nq * d + kvHeads * nk * (d + dv) + nq * heads * dv),
      gpu: this.#describe(route),
    };
    return result;
  }

  #describe(route) {
    const { storage, subgroups } = this.#gpu;
    const gpu = { storage, subgroups };
    if (route.plan) {
      const { lanes, queryBlock, keyTile } = route.plan;
      Object.assign(gpu, { subgroups: route.plan.subgroups, lanes, queryBlock, keyTile });
    }
    return gpu;
  }
}
