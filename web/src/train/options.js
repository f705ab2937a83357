// The checks of attnlens/train's options (docs/JS_API.md, "Training"), on the calling thread,
// before anything reaches the trainer's worker: every key known, own properties read once,
// typed errors naming the option (argument-checks.js). What only the worker knows (the
// vocabulary's size, whether a text's characters are in it) it checks there.

import { BACKEND_NAMES } from '../backend.js';
import { describe } from '../errors.js';
import {
  boolean,
  finiteOption,
  integerOption,
  oneOf,
  optionsObject,
  rangeError,
  typedArray,
  typeError,
} from '../argument-checks.js';
import { typedArrayName } from '../typed-arrays.js';
import { checkThreadsOption } from '../threads.js';
import { RepeatedSequences } from './corpora.js';

export const TRAINER_OPTIONS = Object.freeze([
  'layers',
  'heads',
  'width',
  'context',
  'vocabulary',
  'attentionOnly',
  'mlpWidth',
  'finalNorm',
  'tokenEmbeddingStd',
  'seed',
  'backend',
  'threads',
  'wasmUrl',
]);

export const TRAIN_OPTIONS = Object.freeze([
  'steps',
  'batchSize',
  'sequenceLength',
  'learningRate',
  'weightDecay',
  'beta1',
  'beta2',
  'epsilon',
  'maxGradNorm',
  'temperatureSchedule',
  'snapshotEvery',
  'probe',
  'seed',
  'onStep',
  'onSnapshot',
]);

const WASM_BACKENDS = BACKEND_NAMES.filter((name) => name.startsWith('wasm'));
const MAX_SEED = Number.MAX_SAFE_INTEGER;

function vocabularySpec(value) {
  if (value === undefined || value === 'bytes') return { kind: 'bytes' };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw typeError(
      'vocabulary',
      `must be 'bytes', { characters } or { tokenizer }, got ${describe(value)}`,
    );
  }
  const spec = optionsObject(value, 'vocabulary', ['characters', 'tokenizer']);
  const keys = Object.keys(spec);
  if (keys.length !== 1) {
    throw typeError('vocabulary', 'needs exactly one of characters and tokenizer');
  }
  if (keys[0] === 'characters') {
    if (typeof spec.characters !== 'string') {
      throw typeError(
        'vocabulary.characters',
        `must be a string, got ${describe(spec.characters)}`,
      );
    }
    return { kind: 'characters', text: spec.characters };
  }
  // A loaded model's tokenizer (its `files`), or the files themselves ({ json, config }).
  const tokenizer = spec.tokenizer;
  const files =
    tokenizer !== null && typeof tokenizer === 'object' ? (tokenizer.files ?? tokenizer) : null;
  if (files === null || typeof files.json !== 'object' || files.json === null) {
    throw typeError(
      'vocabulary.tokenizer',
      "must be a model's tokenizer (attnlens/models) or { json, config }, got " +
        describe(tokenizer),
    );
  }
  return { kind: 'tokenizer', files: { json: files.json, config: files.config ?? null } };
}

function tokenEmbeddingStd(value) {
  if (value === undefined) return 0.02; // GPT-2's
  if (typeof value !== 'number') {
    throw typeError('tokenEmbeddingStd', `must be a number, got ${describe(value)}`);
  }
  if (!(value > 0 && value <= 1)) {
    throw rangeError('tokenEmbeddingStd', `must be above 0 and at most 1, got ${value}`);
  }
  return value;
}

/** createTrainer's config, checked and with its defaults. */
export function checkTrainerConfig(config) {
  const c = optionsObject(config, 'config', TRAINER_OPTIONS);
  const width = integerOption(c.width, 'width', { min: 1, max: 8192, fallback: 64 });
  const heads = integerOption(c.heads, 'heads', { min: 1, max: 256, fallback: 4 });
  if (width % heads !== 0) {
    throw rangeError('heads', `must divide width (${width}), got ${heads}`);
  }
  if (c.wasmUrl !== undefined && typeof c.wasmUrl !== 'string' && !(c.wasmUrl instanceof URL)) {
    throw typeError('wasmUrl', `must be a string or URL, got ${describe(c.wasmUrl)}`);
  }
  const attentionOnly = boolean(c.attentionOnly, 'attentionOnly', false);
  return {
    layers: integerOption(c.layers, 'layers', { min: 1, max: 64, fallback: 2 }),
    heads,
    width,
    context: integerOption(c.context, 'context', { min: 1, max: 8192, fallback: 64 }),
    vocabulary: vocabularySpec(c.vocabulary),
    attentionOnly,
    mlpWidth: integerOption(c.mlpWidth, 'mlpWidth', { min: 1, max: 65536, fallback: 4 * width }),
    finalNorm: boolean(c.finalNorm, 'finalNorm', true),
    tokenEmbeddingStd: tokenEmbeddingStd(c.tokenEmbeddingStd),
    seed: integerOption(c.seed, 'seed', { min: 0, max: MAX_SEED, fallback: 1 }),
    backend: oneOf(c.backend, 'backend', WASM_BACKENDS, 'wasm'),
    threads: checkThreadsOption(c.threads ?? 1),
    wasmUrl: c.wasmUrl === undefined ? undefined : String(c.wasmUrl),
  };
}

/** A corpus as the worker takes it: a text, token ids (Int32Array), or random sequences. */
export function checkCorpus(corpus) {
  if (typeof corpus === 'string') {
    if (corpus.length === 0) throw rangeError('corpus', 'is an empty text');
    return { kind: 'text', text: corpus };
  }
  if (corpus instanceof RepeatedSequences) return corpus.toJSON();
  const ids = tokenIds(corpus, 'corpus');
  if (ids.length < 2) throw rangeError('corpus', `needs at least 2 tokens, got ${ids.length}`);
  return { kind: 'ids', ids };
}

/** Token ids given as an array of integers or an Int32Array / Uint16Array / Uint8Array. */
export function tokenIds(value, name) {
  const typed = typedArrayName(value);
  if (typed === 'Int32Array' || typed === 'Uint16Array' || typed === 'Uint8Array') {
    return Int32Array.from(typedArray(value, name, globalThis[typed]));
  }
  if (!Array.isArray(value)) {
    throw typeError(name, `must be a text, token ids or random sequences, got ${describe(value)}`);
  }
  return Int32Array.from(value, (id, i) => {
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id >= 2 ** 31) {
      throw typeError(`${name}[${i}]`, `must be a token id (an integer >= 0), got ${describe(id)}`);
    }
    return id;
  });
}

function checkSchedule(value) {
  if (value === undefined) return { from: 1, to: 1, steps: 1, curve: 'geometric' };
  if (typeof value === 'number') {
    const t = finiteOption(value, 'temperatureSchedule', { min: 0 });
    if (!(t > 0)) throw rangeError('temperatureSchedule', `must be positive, got ${value}`);
    return { from: t, to: t, steps: 1, curve: 'geometric' };
  }
  const s = optionsObject(value, 'temperatureSchedule', ['from', 'to', 'steps', 'curve']);
  const positive = (v, name) => {
    if (typeof v !== 'number') throw typeError(name, `must be a number, got ${describe(v)}`);
    if (!(v > 0) || !Number.isFinite(v)) {
      throw rangeError(name, `must be a positive finite number, got ${v}`);
    }
    return v;
  };
  const from = positive(s.from, 'temperatureSchedule.from');
  const to = positive(s.to, 'temperatureSchedule.to');
  if (s.steps === undefined) {
    throw typeError('temperatureSchedule.steps', 'is required: the step at which it reaches `to`');
  }
  return {
    from,
    to,
    steps: integerOption(s.steps, 'temperatureSchedule.steps', { min: 1, max: 1e9 }),
    curve: oneOf(s.curve, 'temperatureSchedule.curve', ['geometric', 'linear'], 'geometric'),
  };
}

function callback(value, name) {
  if (value !== undefined && typeof value !== 'function') {
    throw typeError(name, `must be a function, got ${describe(value)}`);
  }
  return value;
}

function number(value, name, min, max, fallback, { above = false } = {}) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw typeError(name, `must be a number, got ${describe(value)}`);
  const ok = Number.isFinite(value) && (above ? value > min : value >= min) && value <= max;
  if (!ok) {
    const low = above ? `above ${min}` : `at least ${min}`;
    throw rangeError(name, `must be a finite number ${low} and at most ${max}, got ${value}`);
  }
  return value;
}

/**
 * train()'s options, checked, with their defaults. Returns the worker's part (`run`) and the
 * callbacks, which stay on this thread.
 */
export function checkTrainOptions(options, context) {
  const o = optionsObject(options, 'options', TRAIN_OPTIONS);
  const probe =
    o.probe === undefined
      ? null
      : typeof o.probe === 'string'
        ? o.probe
        : tokenIds(o.probe, 'probe');
  if (probe !== null && probe.length === 0) throw rangeError('probe', 'is empty');
  return {
    run: {
      steps: integerOption(o.steps, 'steps', { min: 1, max: 1e9, fallback: 1000 }),
      batchSize: integerOption(o.batchSize, 'batchSize', { min: 1, max: 4096, fallback: 16 }),
      sequenceLength: integerOption(o.sequenceLength, 'sequenceLength', {
        min: 1,
        max: context,
        fallback: context,
      }),
      learningRate: number(o.learningRate, 'learningRate', 0, 10, 3e-3),
      weightDecay: number(o.weightDecay, 'weightDecay', 0, 1e30, 0.1),
      beta1: number(o.beta1, 'beta1', 0, 0.999999, 0.9),
      beta2: number(o.beta2, 'beta2', 0, 0.999999, 0.95),
      epsilon: number(o.epsilon, 'epsilon', 0, 1, 1e-8, { above: true }),
      maxGradNorm: number(o.maxGradNorm, 'maxGradNorm', 0, 1e30, 1),
      temperatureSchedule: checkSchedule(o.temperatureSchedule),
      snapshotEvery: integerOption(o.snapshotEvery, 'snapshotEvery', {
        min: 0,
        max: 1e9,
        fallback: 10,
      }),
      probe,
      seed: integerOption(o.seed, 'seed', { min: 0, max: MAX_SEED, fallback: undefined }),
    },
    onStep: callback(o.onStep, 'onStep'),
    onSnapshot: callback(o.onSnapshot, 'onSnapshot'),
  };
}

/** The temperature of a schedule at `step` (the number of steps taken before it). */
export function temperatureAt({ from, to, steps, curve }, step) {
  const t = Math.min(step, steps) / steps;
  return curve === 'linear' ? from + (to - from) * t : from * (to / from) ** t;
}

/** attention()'s and save()'s options: { temperature } (undefined: the trainer's current one). */
export function checkTemperatureOption(options) {
  const o = optionsObject(options, 'options', ['temperature']);
  return number(o.temperature, 'temperature', 0, 1e30, undefined, { above: true });
}
