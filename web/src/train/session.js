// The trainer inside its worker: the wasm engine, the core trainer (core-trainer.js), the
// vocabulary, and the training run. A run takes one step at a time and gives the worker's event
// loop a turn after each, so pause(), attention() and the other calls are answered between
// steps; events ('step', 'snapshot') go to the page through `emit`.
//
// Batches are a function of (seed, step): the same run paused and resumed, or run on another
// thread count, sees the same batches and computes the same bits.

import { createAttention, wasmBackendOf } from '../attention.js';
import { attnlensError } from '../errors.js';
import { hashString, mulberry32 } from '../text/hash.js';
import { gpt2Checkpoint } from './checkpoint.js';
import { CoreTrainer } from './core-trainer.js';
import { RepeatedSequences } from './corpora.js';
import { headScores } from '../interpret/head-scores.js';
import { temperatureAt } from './options.js';
import { createVocabulary } from './vocabularies.js';

// A turn of the event loop that is not clamped like setTimeout(0) (4 ms once nested).
function yieldToMessages() {
  if (typeof globalThis.setImmediate === 'function') {
    return new Promise((resolve) => globalThis.setImmediate(resolve));
  }
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(0);
  });
}

const now = () => globalThis.performance?.now() ?? Date.now();
const busy = (method) =>
  attnlensError('busy', method, 'a training run is in progress: pause() it first');

export class TrainerSession {
  #engine;
  #core;
  #config;
  #vocabulary;
  #emit;
  #losses = [];
  #temperature = 1;
  #tokensTrained = 0;
  #trainingMs = 0;
  #lastRun = null; // the corpus and options of the last train(), for step() and resume()
  #running = null; // { remaining, pause: Promise resolver } while a run loops
  #pauseWaiters = [];
  #lastSnapshotStep = -1;

  static async create(config, emit) {
    const vocabulary = await createVocabulary(config.vocabulary);
    // The module with the models' bindings: the trainer's live there, not in the default one.
    const engine = await createAttention({
      backend: config.backend,
      threads: config.threads,
      models: true,
      ...(config.wasmUrl && { wasmUrl: config.wasmUrl }),
    });
    try {
      return new TrainerSession(engine, { ...config, vocab: vocabulary.size }, vocabulary, emit);
    } catch (error) {
      engine.dispose();
      throw error;
    }
  }

  constructor(engine, config, vocabulary, emit) {
    this.#engine = engine;
    this.#config = config;
    this.#vocabulary = vocabulary;
    this.#emit = emit;
    this.#core = new CoreTrainer(wasmBackendOf(engine, 'trainer').module, config);
  }

  info() {
    const c = this.#config;
    return {
      layers: c.layers,
      heads: c.heads,
      width: c.width,
      context: c.context,
      attentionOnly: c.attentionOnly,
      mlpWidth: c.attentionOnly ? 0 : c.mlpWidth,
      finalNorm: c.finalNorm,
      tokenEmbeddingStd: c.tokenEmbeddingStd,
      seed: c.seed,
      vocabulary: { kind: this.#vocabulary.kind, size: this.#vocabulary.size },
      parameters: this.#core.parameterCount,
      backend: this.#engine.backend,
      threads: this.#engine.threads,
    };
  }

  // ---- inputs ---------------------------------------------------------------------------------

  /** Text through the vocabulary, or ids checked against it: { ids, tokens }. */
  encode(input, name = 'text') {
    if (typeof input === 'string') return this.#vocabulary.encode(input, name);
    const size = this.#vocabulary.size;
    input.forEach((id, i) => {
      if (id >= size) {
        throw attnlensError(
          'out_of_range',
          `${name}[${i}]`,
          `is ${id}, outside the vocabulary of ${size} tokens`,
        );
      }
    });
    const tokens = Array.from(input, (id) => ({
      id,
      text: this.#vocabulary.tokenText(id),
      start: null,
      end: null,
    }));
    return { ids: input, tokens };
  }

  // The batch sampler of a corpus: step -> Int32Array [batch, rowLength].
  #sampler(corpus, run) {
    const { context } = this.#config;
    const rows = run.batchSize;
    if (corpus.kind === 'repeated-random') {
      const sequences = new RepeatedSequences(corpus);
      const rowLength = run.sequenceLength + 1;
      if (sequences.minimumRow > rowLength) {
        throw attnlensError(
          'out_of_range',
          'corpus',
          `needs rows of ${sequences.minimumRow} tokens (length.max * repeats), but ` +
            `sequenceLength + 1 is ${rowLength} (the context is ${context})`,
        );
      }
      return {
        rowLength,
        batch: (step) => {
          const out = new Int32Array(rows * rowLength);
          for (let r = 0; r < rows; r++) {
            out.set(
              sequences.sample(step * rows + r, rowLength, this.#vocabulary.size),
              r * rowLength,
            );
          }
          return out;
        },
        // A row of its own (index -1, never a training sample), less its last token.
        probe: () =>
          sequences.sample(-1, rowLength, this.#vocabulary.size).subarray(0, rowLength - 1),
      };
    }
    const { ids } =
      corpus.kind === 'text'
        ? this.encode(corpus.text, 'corpus')
        : this.encode(corpus.ids, 'corpus');
    if (ids.length < 2) {
      throw attnlensError('out_of_range', 'corpus', `has ${ids.length} token, needs at least 2`);
    }
    const rowLength = Math.min(run.sequenceLength + 1, ids.length);
    return {
      rowLength,
      batch: (step) => {
        const next = mulberry32(hashString(`batch/${step}`, run.seed));
        const out = new Int32Array(rows * rowLength);
        for (let r = 0; r < rows; r++) {
          const start = Math.floor((next() / 4294967296) * (ids.length - rowLength + 1));
          out.set(ids.subarray(start, start + rowLength), r * rowLength);
        }
        return out;
      },
      probe: () => ids.slice(0, Math.min(run.sequenceLength, ids.length)),
    };
  }

  // ---- training -------------------------------------------------------------------------------

  async train(corpus, run) {
    if (this.#running) throw busy('train');
    const seeded = { ...run, seed: run.seed ?? this.#config.seed };
    const sampler = this.#sampler(corpus, seeded);
    const probe = this.encode(seeded.probe ?? sampler.probe(), 'probe');
    if (probe.ids.length > this.#config.context) {
      throw attnlensError(
        'out_of_range',
        'probe',
        `has ${probe.ids.length} tokens, more than the context of ${this.#config.context}`,
      );
    }
    this.#lastRun = { run: seeded, sampler, probe, remaining: seeded.steps };
    return this.#loop();
  }

  async resume() {
    if (this.#running) throw busy('resume');
    if (!this.#lastRun || this.#lastRun.remaining === 0) {
      throw attnlensError('busy', 'resume', 'there is no paused run to resume');
    }
    return this.#loop();
  }

  async #loop() {
    const state = this.#lastRun;
    const { run } = state;
    this.#running = state;
    try {
      const last = this.#lastSnapshotStep;
      if (run.snapshotEvery > 0 && last !== this.steps) this.#snapshot();
      while (state.remaining > 0 && !state.pauseRequested) {
        this.#step(state);
        state.remaining--;
        await yieldToMessages();
      }
    } finally {
      this.#running = null;
      state.pauseRequested = false;
      for (const resolve of this.#pauseWaiters.splice(0)) resolve();
    }
    return {
      steps: this.steps,
      loss: this.loss,
      paused: state.remaining > 0,
      remaining: state.remaining,
    };
  }

  /** Stops the run after its current step; resolves once it has stopped. */
  pause() {
    if (!this.#running) return undefined;
    this.#running.pauseRequested = true;
    return new Promise((resolve) => this.#pauseWaiters.push(resolve));
  }

  /** One step of the last run's corpus and options, outside any run. */
  step() {
    if (this.#running) throw busy('step');
    if (!this.#lastRun) {
      throw attnlensError('busy', 'step', 'train() has not been called: there is no corpus');
    }
    return this.#step(this.#lastRun);
  }

  get steps() {
    return this.#losses.length;
  }

  get loss() {
    return this.#losses.length ? this.#losses[this.#losses.length - 1] : null;
  }

  #step(state) {
    const { run, sampler } = state;
    const step = this.steps;
    const temperature = temperatureAt(run.temperatureSchedule, step);
    const tokens = sampler.batch(step);
    const started = now();
    const result = this.#core.step(tokens, run.batchSize, {
      learningRate: run.learningRate,
      beta1: run.beta1,
      beta2: run.beta2,
      epsilon: run.epsilon,
      weightDecay: run.weightDecay,
      maxGradNorm: run.maxGradNorm,
      temperature,
      threads: this.#engine.threads,
    });
    const ms = now() - started;
    this.#temperature = temperature;
    this.#losses.push(result.loss);
    this.#tokensTrained += run.batchSize * (sampler.rowLength - 1);
    this.#trainingMs += ms;
    const event = {
      step: this.steps,
      loss: result.loss,
      gradNorm: result.gradNorm,
      clipped: result.clipped,
      temperature,
      learningRate: run.learningRate,
      tokens: this.#tokensTrained,
      ms,
      trainingMs: this.#trainingMs,
    };
    this.#emit('step', event);
    if (run.snapshotEvery > 0 && this.steps % run.snapshotEvery === 0) this.#snapshot();
    return event;
  }

  #snapshot() {
    const { probe } = this.#lastRun;
    const { attention, heads } = this.#attentionOf(probe, this.#temperature);
    this.#lastSnapshotStep = this.steps;
    const snapshot = {
      step: this.steps,
      loss: this.loss,
      temperature: this.#temperature,
      tokens: probe.tokens,
      ids: Int32Array.from(probe.ids),
      attention,
      heads,
    };
    this.#emit('snapshot', snapshot, [attention.buffer]);
  }

  // ---- reading the model ----------------------------------------------------------------------

  #attentionOf({ ids }, temperature) {
    const { layers, heads } = this.#config;
    const count = layers * heads * ids.length * ids.length;
    const attention = this.#core.attention(
      Int32Array.from(ids),
      { temperature, threads: this.#engine.threads },
      count,
    );
    return { attention, heads: headScores(attention, ids, layers, heads) };
  }

  attention(input, temperature = this.#temperature) {
    const encoded = this.encode(input, typeof input === 'string' ? 'text' : 'tokens');
    if (encoded.ids.length === 0 || encoded.ids.length > this.#config.context) {
      throw attnlensError(
        'out_of_range',
        typeof input === 'string' ? 'text' : 'tokens',
        `has ${encoded.ids.length} tokens; the model takes 1 to ${this.#config.context}`,
      );
    }
    return { tokens: encoded.tokens, temperature, ...this.#attentionOf(encoded, temperature) };
  }

  /** Every parameter as a copy: [{ name, shape, data }]. */
  parameters() {
    return this.#core.parameters().map((p) => ({
      name: p.name,
      shape: p.shape,
      data: this.#core.view(p).slice(),
    }));
  }

  /** Writes the named parameters (each a Float32Array of its tensor's size); resets AdamW. */
  setParameters(tensors) {
    if (this.#running) throw busy('setParameters');
    const byName = new Map(this.#core.parameters().map((p) => [p.name, p]));
    for (const [name, data] of tensors) {
      const p = byName.get(name);
      if (!p) {
        throw attnlensError('invalid_argument', name, `is not a parameter of this trainer`);
      }
      if (data.length !== p.elements) {
        throw attnlensError(
          'shape_mismatch',
          name,
          `has ${data.length} values, the parameter has shape [${p.shape.join(', ')}]`,
        );
      }
      const bad = data.findIndex((x) => !Number.isFinite(x));
      if (bad >= 0) {
        throw attnlensError(
          'non_finite',
          name,
          `[${bad}] is ${data[bad]}; parameters must be finite`,
          {
            index: bad,
          },
        );
      }
    }
    for (const [name, data] of tensors) this.#core.view(byName.get(name)).set(data);
    this.#core.parametersWritten();
  }

  save(temperature = this.#temperature) {
    return gpt2Checkpoint(this.#config, this.parameters(), {
      temperature,
      steps: this.steps,
      vocabulary: this.#vocabulary,
    });
  }

  state() {
    return {
      steps: this.steps,
      loss: this.loss,
      temperature: this.#temperature,
      running: !!this.#running,
    };
  }
}
