// Model.translate(text, options) for encoder-decoder models (Marian): the source through the
// encoder, then the translation token by token from the decoder's start token, greedy or by
// beam search (beam-search.js), as the transformers library's generate() decodes with the
// model's config: bad_words_ids (the pad token) never generated, EOS forced at the last position
// allowed, stopping at EOS or maxTokens.
//
// Each step runs the decoder over the target so far and returns, for the new token, its row of
// the decoder's self-attention [decoder layers, heads, t + 1] and of its cross-attention
// [decoder layers, heads, source tokens]: what the new token looked at. Decided, for now: a step
// re-runs the encoder and the whole target prefix (the core's KV cache for decoder stacks is
// not wired to this yet), which gives the same rows and logits as a cached step, only slower.

import { integerOption, optionsObject, rangeError, typeError } from '../argument-checks.js';
import { describe } from '../errors.js';
import { beamSearch } from './beam-search.js';

/** The options translate() accepts. */
export const TRANSLATE_OPTIONS = Object.freeze([
  'maxTokens',
  'beams',
  'signal',
  'onToken',
  'returnLogits',
]);
const MAX_BEAMS = 16;

/**
 * @param {{ core, tokenizer, shape, generation, maxPositions, threads }} model the loaded parts
 * @returns {Promise<{ text, source: { ids, tokens }, ids, tokens, encoderAttention, steps,
 *   beams, score? }>}
 */
export async function translate(model, text, options) {
  const opts = checkOptions(model, text, options);
  const source = model.tokenizer.encode(text);
  if (source.ids.length > model.maxPositions) {
    throw rangeError(
      'text',
      `is ${source.ids.length} tokens with </s>, more than the model's ${model.maxPositions} ` +
        'positions (max_position_embeddings)',
    );
  }
  const decoder = createDecoder(model, source.ids, opts);
  const { generation } = model;
  const searched =
    opts.beams === 1
      ? await greedy(decoder, model.tokenizer, generation, opts)
      : await beamSearch(decoder, opts);
  // The rows of every generated token from one pass over the final target (the decoder is
  // causal, so these are the rows each step saw).
  const final = decoder.run(searched.ids, rows(searched.ids));
  const steps = searched.ids.slice(1).map((id, i) => ({
    id,
    text: model.tokenizer.appendedText(searched.ids.slice(1, i + 1), id).text,
    selfAttention: decoder.selfRow(final, i, searched.ids.length),
    crossAttention: decoder.crossRow(final, i, searched.ids.length),
    ...(opts.returnLogits ? { logits: logitsRow(final.logits, i, model.shape.vocab) } : {}),
  }));
  if (opts.beams > 1) for (const step of steps) opts.onToken?.(step);
  return {
    text: model.tokenizer.decode(searched.ids, { skipSpecialTokens: true }),
    source: { ids: source.ids, tokens: source.tokens },
    ids: searched.ids,
    encoderAttention: final.encoderAttention,
    steps,
    beams: opts.beams,
    ...(searched.score !== undefined ? { score: searched.score } : {}),
  };
}

// The positions whose logits chose each generated token: 0 .. T - 2.
const rows = (ids) => ids.slice(0, -1).map((_, i) => i);
const logitsRow = (logits, i, vocab) => logits.slice(i * vocab, (i + 1) * vocab);

function checkOptions(model, text, options) {
  if (typeof text !== 'string') {
    throw typeError('text', `must be a string, got ${describe(text)}`);
  }
  if (text.trim() === '') throw rangeError('text', 'is empty: there is nothing to translate');
  const opts = optionsObject(options, 'options', TRANSLATE_OPTIONS);
  const { generation } = model;
  const limit = Math.min(generation.maxLength, model.maxPositions) - 1;
  const maxTokens = integerOption(opts.maxTokens, 'maxTokens', {
    min: 1,
    max: limit,
    fallback: limit,
  });
  const beams = integerOption(opts.beams, 'beams', {
    min: 1,
    max: MAX_BEAMS,
    fallback: Math.min(generation.numBeams, MAX_BEAMS),
  });
  if (opts.onToken !== undefined && typeof opts.onToken !== 'function') {
    throw typeError('onToken', `must be a function, got ${describe(opts.onToken)}`);
  }
  if (opts.signal !== undefined && !(opts.signal instanceof AbortSignal)) {
    throw typeError('signal', `must be an AbortSignal, got ${describe(opts.signal)}`);
  }
  if (opts.returnLogits !== undefined && typeof opts.returnLogits !== 'boolean') {
    throw typeError('returnLogits', `must be a boolean, got ${describe(opts.returnLogits)}`);
  }
  return { ...opts, maxTokens, beams, maxLength: maxTokens + 1 };
}

// The decoder over one source: run(target, positions) and the logits processors.
function createDecoder(model, sourceIds, opts) {
  const { core, shape, generation, threads } = model;
  const { decoderLayers, heads, vocab } = shape;
  const n = sourceIds.length;
  return {
    generation,
    vocab,
    maxLength: opts.maxLength,
    turn: () => nextTurn(opts.signal),
    run(targetIds, logitPositions, wantAttention = true) {
      return core.forwardEncoderDecoder({
        sourceIds,
        targetIds,
        logitPositions,
        threads,
        shape,
        wantAttention,
      });
    },
    // Row i of every decoder layer's and head's self-attention over a target of t tokens:
    // [layers, heads, i + 1].
    selfRow(out, i, t) {
      const row = new Float32Array(decoderLayers * heads * (i + 1));
      for (let lh = 0; lh < decoderLayers * heads; lh++) {
        const from = (lh * t + i) * t;
        row.set(out.decoderAttention.subarray(from, from + i + 1), lh * (i + 1));
      }
      return row;
    },
    crossRow(out, i, t) {
      const row = new Float32Array(decoderLayers * heads * n);
      for (let lh = 0; lh < decoderLayers * heads; lh++) {
        const from = (lh * t + i) * n;
        row.set(out.crossAttention.subarray(from, from + n), lh * n);
      }
      return row;
    },
    // The logits processors the config asks for, in place on one row: bad words (a banned
    // sequence's last token where the target ends with the rest), then EOS forced at the last
    // position max_length allows.
    process(scores, targetIds) {
      for (const words of generation.badWordsIds) {
        const prefix = words.slice(0, -1);
        const at = targetIds.length - prefix.length;
        if (at >= 0 && prefix.every((w, k) => targetIds[at + k] === w)) {
          scores[words.at(-1)] = -Infinity;
        }
      }
      const forced = generation.forcedEosTokenId;
      if (forced !== null && targetIds.length === opts.maxLength - 1) {
        const keep = scores[forced];
        scores.fill(-Infinity);
        scores[forced] = keep;
      }
      return scores;
    },
  };
}

async function greedy(decoder, tokenizer, generation, opts) {
  const ids = [generation.decoderStartTokenId];
  while (ids.length < opts.maxLength) {
    await nextTurn(opts.signal);
    const out = decoder.run(ids, [ids.length - 1], opts.onToken !== undefined);
    const scores = decoder.process(out.logits, ids);
    let best = 0;
    for (let v = 1; v < scores.length; v++) if (scores[v] > scores[best]) best = v;
    ids.push(best);
    if (opts.onToken) {
      const t = ids.length - 1;
      opts.onToken({
        id: best,
        text: tokenizer.appendedText(ids.slice(1, -1), best).text,
        selfAttention: decoder.selfRow(out, t - 1, t),
        crossAttention: decoder.crossRow(out, t - 1, t),
      });
    }
    if (best === generation.eosTokenId) break;
  }
  await nextTurn(opts.signal);
  return { ids };
}

/**
 * Lets the event loop run between steps (so an abort can arrive), then throws an AbortError if
 * the caller cancelled.
 */
async function nextTurn(signal) {
  await new Promise((resolve) => setTimeout(resolve, 0));
  if (signal?.aborted) {
    const reason = signal.reason;
    if (reason instanceof Error && reason.name === 'AbortError') throw reason;
    const error = new DOMException('the translation was cancelled', 'AbortError');
    if (reason !== undefined) Object.defineProperty(error, 'cause', { value: reason });
    throw error;
  }
}
