// One attention over a group of heads whose q, k, v are already in GPU buffers (head-major; k and
// v hold the group's K/V heads, which several query heads may share under grouped-query attention):
// score operands prepared (cosine: unit rows; additive: projected queries and keys), then either
// the streaming kernel or the materialized chain (scores, masked softmax, weights x V) in chunks
// that fit the device's bindings. The output goes to `out` with the given strides.

import { GEMM_TILE } from './wgsl/gemm.wgsl.js';
import { planStreaming, scoreChunks } from './tiling.js';

/**
 * @typedef {object} HeadGroup
 * @property {number} heads heads in the group; headBase is the first one's index in the problem
 * @property {number} headBase
 * @property {number} queryLength
 * @property {number} keyLength
 * @property {number} headDim
 * @property {number} valueDim
 * @property {GPUBuffer} q [heads, Nq, D]
 * @property {GPUBuffer} k [kvHeads, Nk, D]: local query head l reads K/V head (l + kvShift) /
 *   kvGroup (kvGroup 1, kvShift 0: one K/V head per query head)
 * @property {GPUBuffer} v [kvHeads, Nk, Dv]
 * @property {number} kvHeads
 * @property {number} kvGroup
 * @property {number} kvShift
 * @property {'f32' | 'f16'} inputType element type of q, k and v
 * @property {string} score
 * @property {number} factor scale / temperature
 * @property {number} topK keys each row keeps (0: every visible one; materialized only)
 * @property {{ fields: object, buffer: GPUBuffer }} mask mask-data.js fields and uploaded words
 * @property {{ fields: object, bias?: GPUBuffer }} terms logit-terms.js fields (biasHeadBase
 *   set for the group) and, exactly when the call has logit terms, the buffer bound as its bias
 *   (the group's heads of the caller's bias, or a placeholder)
 * @property {{ hidden: number, wQuery: GPUBuffer, wKey: GPUBuffer, v: GPUBuffer }} [additive]
 * @property {{ buffer: GPUBuffer, head: number, row: number }} out f32, element strides
 */

/**
 * The streaming plan for a group, or null when its tiles fit no workgroup memory.
 * @param {import('./passes.js').GpuPasses} passes
 */
export function streamingPlanFor(passes, { headDim, valueDim, score, additiveHidden }) {
  const additive = score === 'additive';
  return planStreaming(
    { depth: additive ? additiveHidden : headDim, valueDim, additive },
    passes.gpu.limits,
    passes.gpu,
  );
}

/** Encodes what turns q and k into what the score kernel reads; returns the operands. */
async function prepareOperands(passes, encoder, g) {
  const { heads, kvHeads, queryLength: nq, keyLength: nk, headDim: d } = g;
  // How query heads find their keys: the group's own K/V heads, or (additive) one projected key
  // tensor per query head.
  const sharedKeys = { kGroup: g.kvGroup, kShift: g.kvShift };
  if (g.score === 'cosine') {
    return {
      q: await passes.normalize(encoder, 'unit-q', g.q, g.inputType, heads * nq, d),
      k: await passes.normalize(encoder, 'unit-k', g.k, g.inputType, kvHeads * nk, d),
      type: 'f32',
      depth: d,
      ...sharedKeys,
      scratchBytes: 4 * (heads * nq + kvHeads * nk) * d,
    };
  }
  if (g.score === 'additive') {
    const { hidden: a, wQuery, wKey } = g.additive;
    const project = async (role, input, rows, weights, group = 1, shift = 0) => {
      const output = passes.buffers.storage(role, heads * rows * a * 4);
      // out[h, r, a] = sum_d x[h, r, d] * w[h, a, d]
      await passes.gemm(encoder, role, {
        batch: heads,
        m: rows,
        n: a,
        k: d,
        a: input,
        aType: g.inputType,
        aBatch: rows * d,
        aRow: d,
        aCol: 1,
        aGroup: group,
        aShift: shift,
        b: weights,
        bType: 'f32',
        bBatch: a * d,
        bRow: 1,
        bCol: d,
        c: output,
        cBatch: rows * a,
        cRow: a,
      });
      return output;
    };
    return {
      q: await project('projected-q', g.q, nq, wQuery),
      k: await project('projected-k', g.k, nk, wKey, g.kvGroup, g.kvShift),
      type: 'f32',
      depth: a,
      kGroup: 1,
      kShift: 0,
      scratchBytes: 4 * heads * (nq + nk) * a,
    };
  }
  return { q: g.q, k: g.k, type: g.inputType, depth: d, ...sharedKeys, scratchBytes: 0 };
}

/**
 * Streaming attention of one group. Resolves to { tilesTotal, scratchBytes } once `encoder` holds
 * the work (the caller submits it, reading `visits` back with the output). scratchBytes counts
 * GPU buffers beyond inputs and output: the prepared operands of cosine and additive scores.
 * @param {HeadGroup} g
 * @param {object} plan streamingPlanFor()
 * @param {GPUBuffer} visits a zeroed u32 counter
 */
export async function encodeStreaming(passes, encoder, g, plan, visits) {
  const operands = await prepareOperands(passes, encoder, g);
  const { heads, queryLength: nq, keyLength: nk, valueDim: dv } = g;
  const fields = {
    heads,
    queryLength: nq,
    keyLength: nk,
    depth: operands.depth,
    valueDim: dv,
    qHead: nq * operands.depth,
    qRow: operands.depth,
    kHead: nk * operands.depth,
    kRow: operands.depth,
    vHead: nk * dv,
    vRow: dv,
    oHead: g.out.head,
    oRow: g.out.row,
    headBase: g.headBase,
    kGroup: operands.kGroup,
    kShift: operands.kShift,
    vGroup: g.kvGroup,
    vShift: g.kvShift,
    factor: g.factor,
    ...g.terms.fields,
    ...g.mask.fields,
  };
  const resources = [operands.q, operands.k, g.v, g.out.buffer, g.mask.buffer, visits];
  if (g.score === 'additive') resources.push(g.additive.v);
  if (g.terms.bias) resources.push(g.terms.bias);
  await passes.streaming(
    encoder,
    plan,
    {
      keys: operands.type,
      values: g.inputType,
      score: g.score === 'additive' ? 'additive' : 'dot',
      terms: g.terms.bias !== undefined,
    },
    fields,
    resources,
  );
  return {
    tilesTotal: heads * Math.ceil(nq / plan.queryBlock) * Math.ceil(nk / plan.keyTile),
    scratchBytes: operands.scratchBytes,
  };
}

/** Whether the materialized path can cut this group into chunks the device accepts. */
export function materializedChunks(passes, g) {
  const chunks = scoreChunks(
    g.heads,
    g.queryLength,
    g.keyLength,
    passes.maxBinding,
    Math.min(passes.maxSoftmaxRows, passes.maxGroups * GEMM_TILE),
  );
  if (!chunks || Math.ceil(g.keyLength / GEMM_TILE) > passes.maxGroups) return null;
  return chunks;
}

/**
 * Materialized attention of one group, chunk by chunk: scores, masked softmax and weights x V
 * per chunk, each submitted with the copies of the requested matrices. `encoder` (holding the
 * uploads' follow-up work, e.g. nothing or earlier passes) is submitted with the first chunk.
 * @param {HeadGroup} g
 * @param {{ weights?: Float32Array, scores?: Float32Array }} matrices whole-problem [H, Nq, Nk]
 *   arrays to fill for the group's heads
 * @returns {Promise<{ tilesTotal: number, scratchBytes: number, encoder: GPUCommandEncoder }>}
 *   the encoder to put further work (the output copy) on
 */
export async function runMaterialized(passes, encoder, g, chunks, matrices) {
  const operands = await prepareOperands(passes, encoder, g);
  const { queryLength: nq, keyLength: nk, valueDim: dv } = g;
  const depth = operands.depth;
  let scratchBytes = operands.scratchBytes;
  for (const [index, chunk] of chunks.entries()) {
    if (index > 0) encoder = passes.device.createCommandEncoder();
    const cells = chunk.heads * chunk.rows * nk;
    const scores = passes.buffers.storage('scores', cells * 4);
    const weights = passes.buffers.storage('weights', cells * 4);
    scratchBytes = Math.max(scratchBytes, operands.scratchBytes + 8 * cells);
    // scores[h, i, j] = score(q[h, i], k[h, j]) for the chunk's heads and rows
    await passes.gemm(encoder, 'scores', {
      batch: chunk.heads,
      m: chunk.rows,
      n: nk,
      k: depth,
      a: operands.q,
      aType: operands.type,
      aOffset: (chunk.head * nq + chunk.row) * depth,
      aBatch: nq * depth,
      aRow: depth,
      aCol: 1,
      b: operands.k,
      bType: operands.type,
      bBatch: nk * depth,
      bRow: 1,
      bCol: depth,
      bGroup: operands.kGroup,
      bShift: operands.kShift + chunk.head,
      c: scores,
      cBatch: chunk.rows * nk,
      cRow: nk,
      ...(g.score === 'additive'
        ? { additiveV: g.additive.v, vOffset: chunk.head * depth, vBatch: depth }
        : {}),
    });
    await passes.softmax(
      encoder,
      {
        queryLength: nq,
        keyLength: nk,
        headBase: g.headBase + chunk.head,
        rowBase: chunk.row,
        rows: chunk.rows,
        factor: g.factor,
        topK: g.topK,
        ...g.terms.fields,
        ...g.mask.fields,
      },
      chunk.heads,
      scores,
      weights,
      g.mask.buffer,
      g.terms.bias,
    );
    // out[h, i, :] = sum_j weights[h, i, j] v[h, j, :]
    await passes.gemm(encoder, 'weights-v', {
      batch: chunk.heads,
      m: chunk.rows,
      n: dv,
      k: nk,
      a: weights,
      aType: 'f32',
      aBatch: chunk.rows * nk,
      aRow: nk,
      aCol: 1,
      b: g.v,
      bType: g.inputType,
      bBatch: nk * dv,
      bRow: dv,
      bCol: 1,
      bGroup: g.kvGroup,
      bShift: g.kvShift + chunk.head,
      c: g.out.buffer,
      cOffset: chunk.head * g.out.head + chunk.row * g.out.row,
      cBatch: g.out.head,
      cRow: g.out.row,
    });
    const regions = [];
    if (matrices.scores)
      regions.push({ buffer: scores, bytes: cells * 4, role: 'scores', into: matrices.scores });
    if (matrices.weights)
      regions.push({ buffer: weights, bytes: cells * 4, role: 'weights', into: matrices.weights });
    if (regions.length === 0) {
      passes.device.queue.submit([encoder.finish()]);
      continue;
    }
    const copies = await passes.submitAndRead(encoder, regions);
    regions.forEach(({ into }, r) => {
      const chunkValues = new Float32Array(copies[r]);
      for (let h = 0; h < chunk.heads; h++) {
        const head = g.headBase + chunk.head + h;
        into.set(
          chunkValues.subarray(h * chunk.rows * nk, (h + 1) * chunk.rows * nk),
          (head * nq + chunk.row) * nk,
        );
      }
    });
  }
  return {
    tilesTotal: g.heads * Math.ceil(nq / GEMM_TILE) * Math.ceil(nk / GEMM_TILE),
    scratchBytes,
    encoder: passes.device.createCommandEncoder(),
  };
}
