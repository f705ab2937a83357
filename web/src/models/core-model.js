// A transformer held by the wasm core (bindings/models/model_bindings.cpp) through its handle:
// creation from the core config, the weights written straight into wasm memory, one forward
// pass per call, and KV caches to decode against. Everything here is synchronous; model.js
// builds run() on it, generate.js generate().

import { CallBlock } from '../call-block.js';
import { attnlensError, coreError, unwrap } from '../errors.js';
import { copyFloats, heapF32, heapU8, withHeap } from '../heap.js';
import { q4Bytes } from './files/q4.js';
import { q8Bytes } from './files/q8.js';
import { checkModelBlockLayout, LAYOUT, ModelBlock } from './model-block.js';

const code = (list, name) => LAYOUT[list].indexOf(name);

function weightTypesOf(weights) {
  const types = {};
  for (const w of weights) {
    const bytes =
      w.dtype === 'q8'
        ? q8Bytes(w.elements)
        : w.dtype === 'q4'
          ? q4Bytes(w.elements)
          : w.elements * (w.dtype === 'f16' ? 2 : 4);
    const entry = (types[w.dtype] ??= { tensors: 0, bytes: 0 });
    entry.tensors++;
    entry.bytes += bytes;
  }
  for (const entry of Object.values(types)) Object.freeze(entry);
  return Object.freeze(types);
}

export class CoreModel {
  #module;
  #handle;

  /**
   * @param {object} module the embind module (WasmBackend.module)
   * @param {object} config architectures/*.js coreConfig() plus { dtype } (WEIGHT_DTYPES); the
   *   llama family's adds kvHeads, headDim, the biases, tieWordEmbeddings and rope ({ theta,
   *   scaling, factor, lowFreqFactor, highFreqFactor, originalMaxPositions })
   */
  constructor(module, config) {
    checkModelBlockLayout(module);
    this.#module = module;
    withHeap(module, (heap) => {
      const block = createBlock(module, heap, config);
      this.#handle = unwrap(module._modelCreate(block.write()));
      this.parameters = block.result('resultParameters');
      this.weightBytes = block.result('resultWeightBytes');
    });
    // The storage types the weights are kept in, { f32?, f16?, q8?, q4? }, each { tensors, bytes }
    // (bytes of the values as written: packing then pads each matrix to whole 8-column panels and
    // widens a Q8_0 scale to f32, which `weightBytes` counts).
    this.weightTypes = weightTypesOf(this.weights());
  }

  /** [{ name, shape, dtype, transposed, elements, address }]: the tensors to write. */
  weights() {
    return unwrap(this.#module._modelWeights(this.#handle));
  }

  /** A typed-array view of weight `w` (from weights()) in wasm memory, to fill in place. */
  weightView(w) {
    const buffer = heapU8(this.#module).buffer;
    if (w.dtype === 'q8') return new Uint8Array(buffer, w.address, q8Bytes(w.elements));
    if (w.dtype === 'q4') return new Uint8Array(buffer, w.address, q4Bytes(w.elements));
    return w.dtype === 'f16'
      ? new Uint16Array(buffer, w.address, w.elements)
      : new Float32Array(buffer, w.address, w.elements);
  }

  /**
   * Checks every weight is finite and packs the matrices. `names` (optional): each weight's name
   * in its source, in weights() order, which the core's errors then use.
   */
  finalize(names) {
    unwrap(this.#module._modelFinalize(this.#handle, names));
  }

  /** A layer's own mask: { causal, windowBefore, windowAfter } (-1: no window). */
  layerMask(layer) {
    return unwrap(this.#module._modelLayerMask(this.#handle, layer));
  }

  /** The factor a layer multiplies q.k by before its softmax. */
  layerScale(layer) {
    return unwrap(this.#module._modelLayerScale(this.#handle, layer));
  }

  /**
   * One forward pass. `masks`: null (every layer its own) or a list of attention mask options
   * (checks.js form: causal, window, sparse, globalTokens), one for all layers or one per layer.
   * `projectionsLayer`: -1, or the layer whose q, k and v come back as `projections`.
   * `cache`: 0, or a handle from createCache(): the ids then follow the `past` positions the
   * cache holds, their keys and values are appended, and attention is [layers, heads, N,
   * past + N].
   * `ablations`: [{ layer, head, mode: 'zero' | 'mean' }] (checked: ablation.js), heads whose
   * output is replaced. `startLayer` with `startState` (Float32Array [N, hidden]): resume at that
   * layer's input (the core leaves the earlier layers' rows of attention, hidden states and
   * lens unwritten: ask for none of them then). `lensTopK`: 0, or the logit lens's
   * k. `hiddenStates`: true returns [layers + 1, N, hidden].
   * @returns {{ attention?: Float32Array, logits?: Float32Array, logSumExp?: Float32Array,
   *   projections?: Float32Array, hiddenStates?: Float32Array, lensIds?: Int32Array,
   *   lensProbabilities?: Float32Array }} logSumExp: each logits row's log sum exp (a token's
   *   probability is exp(logit - it)); projections: [3, heads, N, head_dim], q then k then v;
   *   lensIds and lensProbabilities: [layers + 1, N, lensTopK], best first
   */
  forward({
    ids,
    types,
    masks,
    logitPositions,
    threads,
    shape,
    wantAttention = true,
    projectionsLayer = -1,
    cache = 0,
    past = 0,
    ablations = [],
    startLayer = 0,
    startState = null,
    lensTopK = 0,
    hiddenStates = false,
  }) {
    const m = this.#module;
    const { layers, heads, vocab, headDim, hidden } = shape;
    const n = ids.length;
    return withHeap(m, (heap) => {
      const block = new ModelBlock(m, heap, 'forward')
        .set('threads', threads)
        .set('projectionsLayer', projectionsLayer)
        .set('cache', cache)
        .set('startLayer', startLayer)
        .set('lensTopK', lensTopK);
      block.array('tokenIds', heap.copyIn(Int32Array.from(ids), 'tokenIds'));
      if (types) block.array('tokenTypes', heap.copyIn(Int32Array.from(types), 'tokenTypes'));
      if (masks) {
        const addresses = masks.map((options) =>
          new CallBlock(m, heap).options(options, heap).write(),
        );
        block.array('masks', heap.copyIn(Float64Array.from(addresses), 'masks'));
      }
      const attention = wantAttention
        ? heap.floats(layers * heads * n * (past + n), 'attention')
        : null;
      if (attention) block.array('attention', attention);
      let logits = null;
      let logSumExp = null;
      if (logitPositions.length > 0) {
        block.array(
          'logitPositions',
          heap.copyIn(Float64Array.from(logitPositions), 'logitPositions'),
        );
        logits = heap.floats(logitPositions.length * vocab, 'logits');
        logSumExp = heap.floats(logitPositions.length, 'logSumExp');
        block.array('logits', logits).array('logSumExp', logSumExp);
      }
      const projections =
        projectionsLayer >= 0 ? heap.floats(3 * n * heads * headDim, 'projections') : null;
      if (projections) block.array('projections', projections);
      if (ablations.length > 0) {
        const triples = ablations.flatMap((a) => [a.layer, a.head, code('ablationModes', a.mode)]);
        block.array('ablations', heap.copyIn(Float64Array.from(triples), 'ablations'));
      }
      if (startState) block.array('startState', heap.copyIn(startState, 'startState'));
      const states = hiddenStates ? heap.floats((layers + 1) * n * hidden, 'hiddenStates') : null;
      if (states) block.array('hiddenStates', states);
      const lensCount = (layers + 1) * n * lensTopK;
      const lensIds = lensTopK > 0 ? heap.floats(lensCount, 'lensIds') : null; // int32s
      const lensProbabilities = lensTopK > 0 ? heap.floats(lensCount, 'lensProbabilities') : null;
      if (lensIds) block.array('lensIds', lensIds).array('lensProbabilities', lensProbabilities);
      unwrap(m._modelForward(this.#handle, block.write()));
      return {
        hiddenStates: states ? copyFloats(m, states) : undefined,
        lensIds: lensIds ? new Int32Array(copyFloats(m, lensIds).buffer) : undefined,
        lensProbabilities: lensProbabilities ? copyFloats(m, lensProbabilities) : undefined,
        attention: attention ? copyFloats(m, attention) : undefined,
        logits: logits ? copyFloats(m, logits) : undefined,
        logSumExp: logSumExp ? copyFloats(m, logSumExp) : undefined,
        projections: projections ? copyFloats(m, projections) : undefined,
      };
    });
  }

  /**
   * One forward pass of a vision transformer over pixel values [3, height, width] whose patches
   * make `n` positions (the class token's and the patches'): `writePixels(view)` writes them
   * straight into a Float32Array view of wasm memory (no copy), and `pixelValues: true` returns
   * a copy of them. `masks` as forward()'s; `logits`: whether to compute the classifier's (over
   * the class token); `hiddenStates`: true returns [layers + 1, N, hidden], the last after the
   * final layernorm; `attentionInto`: a Float32Array of layers * heads * n * n that receives
   * the attention (checked by the caller), so a camera loop allocates none per frame.
   * @returns {{ attention: Float32Array, logits?: Float32Array, logSumExp?: Float32Array,
   *   hiddenStates?: Float32Array, pixelValues?: Float32Array }}
   */
  forwardImage({
    writePixels,
    pixelValues = false,
    height,
    width,
    n,
    masks,
    logits,
    threads,
    shape,
    hiddenStates = false,
    attentionInto = null,
  }) {
    const m = this.#module;
    const { layers, heads, vocab, hidden } = shape;
    return withHeap(m, (heap) => {
      const block = new ModelBlock(m, heap, 'forward')
        .set('threads', threads)
        .set('projectionsLayer', -1)
        .set('imageHeight', height)
        .set('imageWidth', width);
      // Allocated first, written last: no allocation between the view and its writes, so no
      // memory growth can detach the view.
      const pixels = heap.floats(3 * height * width, 'pixels');
      block.array('pixels', pixels);
      if (masks) {
        const addresses = masks.map((options) =>
          new CallBlock(m, heap).options(options, heap).write(),
        );
        block.array('masks', heap.copyIn(Float64Array.from(addresses), 'masks'));
      }
      const attention = heap.floats(layers * heads * n * n, 'attention');
      block.array('attention', attention);
      const outLogits = logits ? heap.floats(vocab, 'logits') : null;
      const logSumExp = logits ? heap.floats(1, 'logSumExp') : null;
      if (logits) {
        block.array('logitPositions', heap.copyIn(Float64Array.of(0), 'logitPositions'));
        block.array('logits', outLogits).array('logSumExp', logSumExp);
      }
      const states = hiddenStates ? heap.floats((layers + 1) * n * hidden, 'hiddenStates') : null;
      if (states) block.array('hiddenStates', states);
      const address = block.write();
      writePixels(heapF32(m).subarray(pixels.ptr >>> 2, (pixels.ptr >>> 2) + pixels.length));
      const copiedPixels = pixelValues ? copyFloats(m, pixels) : undefined;
      unwrap(m._modelForward(this.#handle, address));
      const start = attention.ptr >>> 2;
      if (attentionInto) attentionInto.set(heapF32(m).subarray(start, start + attention.length));
      return {
        pixelValues: copiedPixels,
        attention: attentionInto ?? copyFloats(m, attention),
        logits: outLogits ? copyFloats(m, outLogits) : undefined,
        logSumExp: logSumExp ? copyFloats(m, logSumExp) : undefined,
        hiddenStates: states ? copyFloats(m, states) : undefined,
      };
    });
  }

  /**
   * One encoder-decoder pass (Marian): the encoder over `sourceIds`, the decoder over
   * `targetIds`, logits at `logitPositions` of the target. With `cache` ({ caches, slot } from
   * createCaches()), `targetIds` are the new tokens after the cache's `past` ones: the encoder
   * runs only on an empty cache (then encoderTokens is N, otherwise 0) and the decoder's rows
   * cover the past + T keys. `crossMask`: { code, radius } of the model block's crossMasks.
   * @returns {{ encoderAttention?: Float32Array, decoderAttention?: Float32Array,
   *   crossAttention?: Float32Array, logits: Float32Array, logSumExp: Float32Array,
   *   encoderTokens: number }} [encoder layers, heads, N, N], [decoder layers, heads, T,
   *   past + T], [decoder layers, heads, T, N]
   */
  forwardEncoderDecoder({
    sourceIds,
    targetIds,
    logitPositions,
    threads,
    shape,
    wantAttention,
    wantEncoderAttention = wantAttention,
    cache = null,
    past = 0,
    crossMask = { name: 'full', radius: 0 },
  }) {
    const m = this.#module;
    const { encoderLayers, decoderLayers, heads, vocab } = shape;
    const n = sourceIds.length;
    const t = targetIds.length;
    return withHeap(m, (heap) => {
      const block = new ModelBlock(m, heap, 'forward')
        .set('threads', threads)
        .set('projectionsLayer', -1)
        .set('caches', cache ? cache.caches.handle : 0)
        .set('cacheSlot', cache ? cache.slot : 0)
        .set('crossMask', code('crossMasks', crossMask.name))
        .set('crossMaskRadius', crossMask.radius);
      block.array('tokenIds', heap.copyIn(Int32Array.from(sourceIds), 'tokenIds'));
      block.array('decoderTokenIds', heap.copyIn(Int32Array.from(targetIds), 'decoderTokenIds'));
      const outputs = {};
      const output = (name, count) => {
        outputs[name] = heap.floats(count, name);
        block.array(name, outputs[name]);
      };
      if (wantEncoderAttention) output('attention', encoderLayers * heads * n * n);
      if (wantAttention) {
        output('decoderAttention', decoderLayers * heads * t * (past + t));
        output('crossAttention', decoderLayers * heads * t * n);
      }
      block.array(
        'logitPositions',
        heap.copyIn(Float64Array.from(logitPositions), 'logitPositions'),
      );
      output('logits', logitPositions.length * vocab);
      output('logSumExp', logitPositions.length);
      unwrap(m._modelForward(this.#handle, block.write()));
      const copy = (name) => (outputs[name] ? copyFloats(m, outputs[name]) : undefined);
      return {
        encoderAttention: copy('attention'),
        decoderAttention: copy('decoderAttention'),
        crossAttention: copy('crossAttention'),
        logits: copy('logits'),
        logSumExp: copy('logSumExp'),
        encoderTokens: block.result('resultEncoderTokens'),
      };
    });
  }

  /**
   * A KV cache of `capacity` positions in wasm memory (the core refuses one the heap cannot
   * hold, with a RangeError naming 'capacity'): { cache, bytes }. Free it with destroyCache().
   */
  createCache(capacity) {
    return unwrap(this.#module._modelCacheCreate(this.#handle, capacity, 0));
  }

  /** Empties a cache of this model for a new text. */
  resetCache(cache) {
    unwrap(this.#module._modelCacheReset(this.#handle, cache));
  }

  /** Frees a cache (also once the model itself was destroyed). */
  destroyCache(cache) {
    unwrap(this.#module._modelCacheDestroy(cache));
  }

  /**
   * `count` KV caches of `capacity` positions in wasm memory (one per beam; their bytes together
   * checked against the memory the model leaves: RangeError 'beams'). reorder(parents): cache k
   * takes the state of cache parents[k]; reset() empties them; destroy() frees them.
   */
  createCaches(capacity, count) {
    const m = this.#module;
    let handle = unwrap(m._modelCachesCreate(this.#handle, capacity, count));
    return {
      get handle() {
        if (handle === null) throw new Error('attnlens: these KV caches were destroyed');
        return handle;
      },
      reorder: (parents) => unwrap(m._modelCachesReorder(handle, parents)),
      reset: () => unwrap(m._modelCachesReset(handle)),
      destroy: () => {
        if (handle === null) return;
        unwrap(m._modelCachesDestroy(handle));
        handle = null;
      },
    };
  }

  destroy() {
    if (this.#handle === null) return;
    unwrap(this.#module._modelDestroy(this.#handle));
    this.#handle = null;
  }
}

// The create block of a core config (architectures/*.js coreConfig() plus { dtype }).
function createBlock(module, heap, config) {
  const block = new ModelBlock(module, heap, 'create')
    .set('architecture', code('architectures', config.architecture))
    .set('layers', config.layers)
    .set('heads', config.heads)
    .set('hidden', config.hidden)
    .set('intermediate', config.intermediate)
    .set('vocab', config.vocab)
    .set('maxPositions', config.maxPositions)
    .set('typeVocabSize', config.typeVocabSize ?? 0)
    .set('layerNormEps', config.layerNormEps)
    .set('activation', code('activations', config.activation))
    .set('scaleAttnWeights', config.scaleAttnWeights === false ? 0 : 1)
    .set('scaleAttnByInverseLayerIdx', config.scaleAttnByInverseLayerIdx ? 1 : 0)
    .set('lmHead', config.lmHead ? 1 : 0)
    .set('finalNorm', config.finalNorm === false ? 0 : 1)
    .set('matrixDtype', code('dtypes', config.dtype))
    .set('tieWordEmbeddings', config.tieWordEmbeddings === false ? 0 : 1);
  if (config.architecture === 'llama') {
    const rope = config.rope;
    block
      .set('kvHeads', config.kvHeads)
      .set('headDim', config.headDim)
      .set('qkvBias', config.qkvBias ? 1 : 0)
      .set('outputBias', config.outputBias ? 1 : 0)
      .set('mlpBias', config.mlpBias ? 1 : 0)
      .set('ropeTheta', rope.theta)
      .set('ropeScaling', code('ropeScalings', rope.scaling))
      .set('ropeFactor', rope.factor)
      .set('ropeLowFreqFactor', rope.lowFreqFactor)
      .set('ropeHighFreqFactor', rope.highFreqFactor)
      .set('ropeOriginalMaxPositions', rope.originalMaxPositions);
  }
  if (config.architecture === 'vit') {
    block
      .set('patchSize', config.patchSize)
      .set('channels', config.channels)
      .set('imageGrid', config.imageGrid)
      .set('layerScale', config.layerScale ? 1 : 0)
      .set('interpolatePositions', config.interpolatePositions ? 1 : 0)
      .set('registers', config.registers ?? 0)
      .set('antialiasPositions', config.antialiasPositions ? 1 : 0);
  }
  if (config.architecture === 'marian') {
    block
      .set('encoderLayers', config.encoderLayers)
      .set('scaleEmbedding', config.scaleEmbedding ? 1 : 0);
  }
  if (config.localWindows?.length) {
    block.array(
      'localWindows',
      heap.copyIn(Float64Array.from(config.localWindows), 'localWindows'),
    );
  }
  return block;
}

/**
 * The size of the model `config` describes, computed by the core without allocating it:
 * { parameters, weightBytes, loadScratchBytes, fits, reason } (`reason`: why it would not fit
 * this module's memory, the message loading it would fail with; null when it fits).
 */
export function coreModelSize(module, config) {
  checkModelBlockLayout(module);
  return withHeap(module, (heap) => {
    const block = createBlock(module, heap, config);
    const answer = module._modelSize(block.write());
    const error = answer?.error ? coreError(answer.error) : null;
    // A config the core refuses is an error; one that is too large still has its sizes.
    if (error && error.parameter !== 'model') throw error;
    return {
      parameters: block.result('resultParameters'),
      weightBytes: block.result('resultWeightBytes'),
      loadScratchBytes: block.result('resultLoadScratchBytes'),
      fits: error === null,
      reason: error?.message ?? null,
    };
  });
}

/** A shape error naming the checkpoint tensor and both shapes. */
export function shapeMismatch(key, actual, expected) {
  return attnlensError(
    'shape_mismatch',
    key,
    `has shape [${actual.join(', ')}], but config.json implies [${expected.join(', ')}]`,
  );
}
