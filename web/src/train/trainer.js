// createTrainer(config) and the Trainer it returns: a small GPT trained in a worker
// (worker-host.js, session.js), so training never blocks the page. Every option is checked here
// (options.js) before the worker sees it; the worker's own errors arrive as the same classes
// with the same code and parameter. The Trainer keeps what a page draws from: every step's loss
// and every snapshot (each head's attention on the probe, its entropy and label).

import { disposedError } from '../errors.js';
import { optionsObject, typedArray } from '../argument-checks.js';
import {
  checkCorpus,
  checkTemperatureOption,
  checkTrainerConfig,
  checkTrainOptions,
  tokenIds,
} from './options.js';
import { WorkerHost } from './worker-host.js';

/**
 * Starts a trainer: `config` as docs/JS_API.md ("Training") describes it.
 * @returns {Promise<Trainer>}
 */
export async function createTrainer(config) {
  const checked = checkTrainerConfig(config);
  let trainer = null;
  const host = await WorkerHost.start((event, data) => trainer?.receive(event, data));
  try {
    const info = await host.call('create', [checked]);
    trainer = new Trainer(host, info, checked);
    return trainer;
  } catch (error) {
    host.dispose();
    throw error;
  }
}

// Calls to a user's callback must not stop training; an exception is reported as uncaught.
function report(error) {
  if (typeof globalThis.reportError === 'function') globalThis.reportError(error);
  else
    queueMicrotask(() => {
      throw error;
    });
}

const named = (file, bytes) =>
  typeof File === 'function'
    ? new File([bytes], file, { type: 'application/octet-stream' })
    : Object.assign(new Blob([bytes]), { name: file });

export class Trainer {
  #host;
  #info;
  #config;
  #losses = [];
  #snapshots = [];
  #callbacks = null; // the current run's onStep / onSnapshot
  #temperature = 1;
  #disposed = false;

  /** Use createTrainer(). */
  constructor(host, info, config) {
    this.#host = host;
    this.#info = Object.freeze({ ...info, vocabulary: Object.freeze({ ...info.vocabulary }) });
    this.#config = config;
  }

  /** Events from the worker (worker-host.js). */
  receive(event, data) {
    this.#live('receive');
    if (event === 'step') {
      this.#losses.push(data.loss);
      this.#temperature = data.temperature;
      this.#call('onStep', Object.freeze(data));
    } else if (event === 'snapshot') {
      const snapshot = Object.freeze({
        ...data,
        heads: Object.freeze(data.heads.map(Object.freeze)),
      });
      this.#snapshots.push(snapshot);
      this.#call('onSnapshot', snapshot);
    }
  }

  #call(name, value) {
    const fn = this.#callbacks?.[name];
    if (!fn) return;
    try {
      fn(value);
    } catch (error) {
      report(error);
    }
  }

  #live(what) {
    if (this.#disposed) throw disposedError(what, 'this trainer was disposed');
  }

  /**
   * { layers, heads, width, context, attentionOnly, mlpWidth, seed, vocabulary: { kind, size },
   *   parameters, backend, threads }
   */
  get info() {
    this.#live('info');
    return this.#info;
  }

  /** Steps taken so far. */
  get steps() {
    this.#live('steps');
    return this.#losses.length;
  }

  /** The last step's loss (mean cross-entropy, nats), or null before the first. */
  get loss() {
    this.#live('loss');
    return this.#losses.length ? this.#losses[this.#losses.length - 1] : null;
  }

  /** Every step's loss, in order (a copy). */
  get losses() {
    this.#live('losses');
    return Float64Array.from(this.#losses);
  }

  /** Every snapshot so far: { step, loss, temperature, tokens, ids, attention, heads }. */
  get snapshots() {
    this.#live('snapshots');
    return [...this.#snapshots];
  }

  /** The attention temperature of the last step (1 before any). */
  get temperature() {
    this.#live('temperature');
    return this.#temperature;
  }

  /**
   * Trains on `corpus` (a text, token ids, or repeatedRandomSequences()) for `options.steps`
   * steps. Resolves to { steps, loss, paused, remaining } when they are done or pause() came.
   */
  async train(corpus, options) {
    this.#live('train');
    const checkedCorpus = checkCorpus(corpus);
    const { run, onStep, onSnapshot } = checkTrainOptions(options, this.#info.context);
    return this.#run('train', [checkedCorpus, run], { onStep, onSnapshot });
  }

  /** Continues a paused run for its remaining steps, with its corpus and callbacks. */
  async resume() {
    this.#live('resume');
    return this.#run('resume', [], this.#callbacks ?? {});
  }

  async #run(method, args, callbacks) {
    const previous = this.#callbacks;
    this.#callbacks = callbacks;
    try {
      return await this.#host.call(method, args);
    } catch (error) {
      if (error.code === 'busy') this.#callbacks = previous;
      throw error;
    }
  }

  /** Stops the run after its current step; resolves once it has stopped (then train() too). */
  async pause() {
    this.#live('pause');
    await this.#host.call('pause');
  }

  /** One step on the last run's corpus and options (while no run is going). */
  async step() {
    this.#live('step');
    return this.#host.call('step');
  }

  /**
   * Every layer's and head's attention on `input` (a text, or token ids): { tokens, attention
   * (Float32Array [layers, heads, N, N]), heads (each head's scores), temperature }.
   */
  async attention(input, options) {
    this.#live('attention');
    const temperature = checkTemperatureOption(options);
    const checked = typeof input === 'string' ? input : tokenIds(input, 'input');
    return this.#host.call('attention', [checked, temperature]);
  }

  /** A text's tokens in this trainer's vocabulary: { ids, tokens: [{ id, text, start, end }] }. */
  async encode(text) {
    this.#live('encode');
    if (typeof text !== 'string') tokenIds(text, 'text'); // the TypeError for anything else
    return this.#host.call('encode', [text]);
  }

  /** Every parameter, copied: [{ name, shape, data: Float32Array }], GPT-2's names. */
  async parameters() {
    this.#live('parameters');
    return this.#host.call('parameters');
  }

  /** Writes parameters ({ name: Float32Array } or a Map), checked; resets the optimizer. */
  async setParameters(tensors) {
    this.#live('setParameters');
    const entries =
      tensors instanceof Map ? [...tensors] : Object.entries(optionsObject(tensors, 'tensors'));
    const copies = entries.map(([name, data]) => [
      name,
      typedArray(data, name, Float32Array).slice(),
    ]);
    return this.#host.call('setParameters', [copies]);
  }

  /**
   * The model as a GPT-2 checkpoint (config.json, model.safetensors, tokenizer.json): File
   * objects that loadModel() (attnlens/models) takes. `temperature` (default: the current one)
   * is folded into the query projection.
   */
  async save(options) {
    this.#live('save');
    const temperature = checkTemperatureOption(options);
    const files = await this.#host.call('save', [temperature]);
    return Object.entries(files).map(([name, bytes]) => named(name, bytes));
  }

  /** Ends the worker and frees everything; calls still pending reject with 'disposed'. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#host.dispose();
  }

  get disposed() {
    return this.#disposed;
  }
}
