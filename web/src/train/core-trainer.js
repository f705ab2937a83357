// A trainer held by the wasm core (bindings/training/trainer_bindings.cpp) through its handle:
// created from the config and a seed, one AdamW step per call, every layer's and head's attention
// of one sequence, and its parameters read and written in wasm memory. Synchronous; it runs in
// the trainer's worker (session.js).
//
// The blocks (bindings/training/trainer_block.h, in layout-block.js's form, their lists
// generated into trainer-block-layout.js) are compared, name by name, with the module's
// _trainerBlockLayout() when a trainer is created.

import { unwrap } from '../errors.js';
import { copyFloats, heapF32, withHeap } from '../heap.js';
import { checkLayout, LayoutBlock } from '../layout-block.js';
import { TRAINER_BLOCK_LAYOUT } from './trainer-block-layout.js';

export const TRAINER_LAYOUT = TRAINER_BLOCK_LAYOUT;

const block = (module, heap, kind, values) => {
  const b = new LayoutBlock(module, heap, TRAINER_LAYOUT[kind], kind);
  for (const [name, value] of Object.entries(values)) b.set(name, value);
  return b;
};

export class CoreTrainer {
  #module;
  #handle = null;

  /**
   * @param {object} module the embind module (WasmBackend.module)
   * @param {{ layers, heads, width, context, vocab, attentionOnly, mlpWidth, seed, finalNorm,
   *   tokenEmbeddingStd }} config
   */
  constructor(module, config) {
    if (typeof module._trainerBlockLayout !== 'function') {
      throw new Error(
        'attnlens: this wasm module has no trainer functions: the .wasm and the package come ' +
          'from different builds',
      );
    }
    checkLayout(TRAINER_LAYOUT, module._trainerBlockLayout(), 'trainer');
    this.#module = module;
    withHeap(module, (heap) => {
      const create = block(module, heap, 'create', {
        layers: config.layers,
        heads: config.heads,
        width: config.width,
        context: config.context,
        vocab: config.vocab,
        attentionOnly: config.attentionOnly ? 1 : 0,
        mlpWidth: config.mlpWidth,
        seed: config.seed,
        finalNorm: config.finalNorm === false ? 0 : 1,
        tokenEmbeddingStd: config.tokenEmbeddingStd ?? 0.02,
      });
      this.#handle = unwrap(module._trainerCreate(create.write()));
      this.parameterCount = create.result('resultParameters');
    });
  }

  /** [{ name, shape, elements, decay, address }]: every parameter, in wasm memory. */
  parameters() {
    return unwrap(this.#module._trainerParameters(this.#handle));
  }

  /** A Float32Array view of parameter `p` (from parameters()): valid until the next call. */
  view(p) {
    return new Float32Array(heapF32(this.#module).buffer, p.address, p.elements);
  }

  /** After writing parameters through view(): checks them and resets the optimizer. */
  parametersWritten() {
    unwrap(this.#module._trainerParametersWritten(this.#handle));
  }

  /**
   * One step on `tokens` (Int32Array [batch, T + 1]) with the optimizer and forward settings;
   * returns { loss, gradNorm, clipped, step }.
   */
  step(tokens, batch, settings) {
    const m = this.#module;
    return withHeap(m, (heap) => {
      const b = block(m, heap, 'step', { batch, ...settings });
      b.array('tokens', heap.copyIn(tokens, 'tokens'));
      unwrap(m._trainerStep(this.#handle, b.write()));
      return {
        loss: b.result('resultLoss'),
        gradNorm: b.result('resultGradNorm'),
        clipped: b.result('resultClipped') !== 0,
        step: b.result('resultStep'),
      };
    });
  }

  /** Every layer's and head's attention of `tokens` (Int32Array [N]): [layers, heads, N, N]. */
  attention(tokens, { temperature, threads }, count) {
    const m = this.#module;
    return withHeap(m, (heap) => {
      const weights = heap.floats(count, 'weights');
      const b = block(m, heap, 'step', { temperature, threads });
      b.array('tokens', heap.copyIn(tokens, 'tokens')).array('weights', weights);
      unwrap(m._trainerAttention(this.#handle, b.write()));
      return copyFloats(m, weights);
    });
  }

  destroy() {
    if (this.#handle === null) return;
    unwrap(this.#module._trainerDestroy(this.#handle));
    this.#handle = null;
  }
}
