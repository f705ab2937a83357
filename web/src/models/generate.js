// Model.generate(): a causal model continues a text one token at a time. The prompt's forward
// fills a KV cache in wasm memory (kv_cache.h), then each new token is one step against it (the
// prefix is never run again), and each step's attention row of the new token streams out with
// the token. Cancellable through an AbortSignal between steps; the cache is freed whatever
// happens, so the model stays usable after an error.

import { describe } from '../errors.js';
import {
  boolean,
  finiteOption,
  integerOption,
  optionsObject,
  rangeError,
  typeError,
} from '../argument-checks.js';
import { mulberry32 } from '../text/hash.js';
import { abortError } from './files/abort.js';
import { optional } from './files/options.js';
import { idsWithTokens, predictedToken } from './predictions.js';
import { pickToken } from './sampling.js';

/** The options generate() accepts. */
export const GENERATE_OPTIONS = Object.freeze([
  'maxTokens',
  'temperature',
  'topK',
  'topP',
  'seed',
  'signal',
  'onToken',
  'returnLogits',
]);
const DEFAULT_MAX_TOKENS = 20;

/**
 * generate()'s options, checked: { maxTokens, temperature, topK (0: all), topP, seed, signal,
 * onToken, returnLogits }. The seed is drawn when not given, and returned, so a sample can be
 * drawn again.
 */
export function checkGenerateOptions(options, { vocab, maxPositions }) {
  const raw = optionsObject(options, 'options', GENERATE_OPTIONS);
  const topP = raw.topP ?? 1;
  if (typeof topP !== 'number') throw typeError('topP', `must be a number, got ${describe(topP)}`);
  if (!(topP > 0 && topP <= 1)) {
    throw rangeError('topP', `must be a probability in (0, 1], got ${topP}`);
  }
  optional(raw.signal, 'signal', 'signal');
  optional(raw.onToken, 'onToken', 'function');
  return {
    maxTokens: integerOption(raw.maxTokens, 'maxTokens', {
      min: 1,
      max: maxPositions,
      fallback: DEFAULT_MAX_TOKENS,
    }),
    temperature: finiteOption(raw.temperature, 'temperature', { min: 0, fallback: 0 }),
    topK: integerOption(raw.topK, 'topK', { min: 1, max: vocab, fallback: 0 }),
    topP,
    seed: integerOption(raw.seed, 'seed', {
      min: 0,
      max: 2 ** 32 - 1,
      fallback: Math.floor(Math.random() * 2 ** 32),
    }),
    signal: raw.signal ?? null,
    onToken: raw.onToken ?? null,
    returnLogits: boolean(raw.returnLogits, 'returnLogits'),
  };
}

/**
 * Runs the generation. `model`: what the Model lends it: { core, tokenizer, shape, threads,
 * live } (live() throws once the model or its engine was disposed); `prompt`: the encoded text
 * ({ ids, tokens }); `opts`: checkGenerateOptions()'s.
 */
export async function generateTokens(model, prompt, opts) {
  const { core, tokenizer, shape } = model;
  const { vocab, maxPositions } = shape;
  const n = prompt.ids.length;
  if (n + opts.maxTokens > maxPositions) {
    throw n >= maxPositions
      ? rangeError('text', `is ${n} tokens: the model's ${maxPositions} positions leave no room`)
      : rangeError(
          'maxTokens',
          `${opts.maxTokens} new tokens after the prompt's ${n} are more than the model's ` +
            `${maxPositions} positions (max_position_embeddings); at most ${maxPositions - n} fit`,
        );
  }
  const { signal, onToken } = opts;
  const throwIfCancelled = () => {
    if (signal?.aborted) throw abortError(signal, 'the generation was cancelled');
    model.live();
  };
  throwIfCancelled();
  const eos = tokenizer.special.eos?.id ?? -1;
  const random = mulberry32(opts.seed);
  // Each generated token is run too, for its own row of attention: n + maxTokens positions.
  const { cache } = core.createCache(n + opts.maxTokens);
  try {
    const forward = (ids, past, wantLogits) =>
      core.forward({
        ids,
        masks: null,
        logitPositions: wantLogits ? [ids.length - 1] : [],
        threads: model.threads,
        shape,
        cache,
        past,
      });
    const first = forward(prompt.ids, 0, true);
    const context = Array.from(prompt.ids);
    const tokens = [];
    let logits = first.logits;
    let stopped = 'maxTokens';
    for (let step = 0; step < opts.maxTokens; step++) {
      await nextTurn(); // lets an abort, a timer or a page update in between steps
      throwIfCancelled();
      const id = pickToken(logits, 0, vocab, opts, random);
      const last = step === opts.maxTokens - 1;
      const out = forward([id], n + step, !last);
      const { text, partial } = predictedToken(tokenizer, context, id);
      const token = { id, text, partial, step, attention: out.attention };
      if (opts.returnLogits) token.logits = logits;
      context.push(id);
      tokens.push(token);
      // A promise from onToken holds the next token back until it settles: a consumer that
      // draws each token (a page's worker waiting for the page) sets the pace.
      await onToken?.(token);
      if (id === eos) {
        stopped = 'eos';
        break;
      }
      logits = out.logits;
    }
    const ids = tokens.map((t) => t.id);
    return {
      ids,
      text: appendedText(tokenizer, prompt.ids, ids),
      tokens,
      attention: tokens.map((t) => t.attention),
      stopped,
      seed: opts.seed,
      prompt: { tokens: prompt.tokens, attention: first.attention },
    };
  } finally {
    core.destroyCache(cache);
  }
}

// What the new ids add to the prompt's text, decoded together (a character split over several
// byte tokens comes out whole), without special tokens and without rows that are no token.
function appendedText(tokenizer, promptIds, ids) {
  const options = { skipSpecialTokens: true };
  const kept = idsWithTokens(tokenizer, ids);
  const before = tokenizer.decode(Array.from(promptIds), options);
  const after = tokenizer.decode([...promptIds, ...kept], options);
  return after.startsWith(before) ? after.slice(before.length) : tokenizer.decode(kept, options);
}

// One turn of the event loop (setImmediate in Node, a message in browsers: unlike setTimeout,
// neither is clamped to 4 ms after a few nested calls).
export function nextTurn() {
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}
