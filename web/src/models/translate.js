// Model.translate(text, options) for encoder-decoder models (Marian): the source through the
// encoder, then the translation token by token from the decoder's start token, greedy or by
// beam search (beam-search.js), as the transformers library's generate() decodes with the
// model's config: bad_words_ids (the pad token) never generated, EOS forced at the last position
// allowed, stopping at EOS or maxTokens.
//
// The encoder runs once per source; each step runs one token of a beam against that beam's KV
// cache in wasm memory (translate-decoder.js) and returns, for the new token, its row of the
// decoder's self-attention [decoder layers, heads, t + 1] and of its cross-attention
// [decoder layers, heads, source tokens]: what the new token looked at.
//
// crossMask: surgery on the cross-attention of every decoder layer (the core's CrossMask):
//   'full'     the model as trained (the default)
//   'last'     each target token sees only the last source token (</s>): "one fixed vector", as
//              an RNN encoder-decoder passes its final state
//   'mean'     each target token gives every source token the weight 1/N, whatever the scores:
//              its cross-attention output is the mean of the source's value vectors
//   'local:D'  Luong's local-m attention: target token t sees the source tokens within D of the
//              monotonic position min(t, N - 1) ("local" alone is local:2, as the mask notation
//              has it); the target's length is not known while decoding, so not t * N / T

import { integerOption, optionsObject, rangeError, typeError } from '../argument-checks.js';
import { describe } from '../errors.js';
import { beamSearch } from './beam-search.js';
import { createDecoder } from './translate-decoder.js';

/** The options translate() accepts. */
export const TRANSLATE_OPTIONS = Object.freeze([
  'maxTokens',
  'beams',
  'signal',
  'onToken',
  'returnLogits',
  'crossMask',
]);
/** The cross-attention surgeries translate() knows ('local' takes ':D'). */
export const CROSS_MASKS = Object.freeze(['full', 'last', 'mean', 'local']);
const MAX_BEAMS = 16;

/**
 * @param {{ core, tokenizer, shape, generation, maxPositions, threads }} model the loaded parts
 * @returns {Promise<{ text, source: { ids, tokens }, ids, tokens, encoderAttention, steps,
 *   beams, score?, crossMask, stats: { encoderRuns, decoderTokens } }>}
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
  let searched;
  try {
    searched =
      opts.beams === 1
        ? await greedy(decoder, model.tokenizer, opts)
        : await beamSearch(decoder, {
            beams: opts.beams,
            turn: () => nextTurn(opts.signal),
            onLead: leadStreamer(model.tokenizer, opts),
          });
  } finally {
    decoder.dispose();
  }
  // Each generated token with the rows of the step that chose it (the appended EOS of a beam
  // search's hypothesis: the step that scored it).
  const steps = searched.ids
    .slice(1)
    .map((id, i) => stepOf(model.tokenizer, searched.ids, searched.steps, i, opts));
  return {
    text: model.tokenizer.decode(searched.ids, { skipSpecialTokens: true }),
    source: { ids: source.ids, tokens: source.tokens },
    ids: searched.ids,
    encoderAttention: decoder.encoderAttention,
    steps,
    beams: opts.beams,
    crossMask: formatCrossMask(opts.crossMask),
    stats: { ...decoder.stats },
    ...(searched.score !== undefined ? { score: searched.score } : {}),
  };
}

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
  const crossMask = parseCrossMask(opts.crossMask, model.maxPositions);
  return { ...opts, maxTokens, beams, maxLength: maxTokens + 1, crossMask };
}

// 'full' | 'last' | 'mean' | 'local' | 'local:D' -> { name, radius }.
function parseCrossMask(value, maxPositions) {
  if (value === undefined) return { name: 'full', radius: 0 };
  if (typeof value !== 'string') {
    throw typeError('crossMask', `must be a string, got ${describe(value)}`);
  }
  const [name, radius, ...rest] = value.split(':');
  if (
    !CROSS_MASKS.includes(name) ||
    rest.length > 0 ||
    (radius !== undefined && name !== 'local')
  ) {
    throw rangeError(
      'crossMask',
      `must be 'full', 'last', 'mean' or 'local:D' (D a whole number), got ${describe(value)}`,
    );
  }
  if (name !== 'local') return { name, radius: 0 };
  if (radius !== undefined && !/^[0-9]{1,9}$/.test(radius)) {
    throw rangeError('crossMask', `'local:D' needs D in digits, got ${describe(value)}`);
  }
  const d = radius === undefined ? 2 : Number(radius);
  if (d > maxPositions) {
    throw rangeError('crossMask', `D is ${d}, more than the model's ${maxPositions} positions`);
  }
  return { name, radius: d };
}

const formatCrossMask = ({ name, radius }) => (name === 'local' ? `local:${radius}` : name);

// Generated token i of `ids` (which start with the decoder's start token) with the rows of the
// step that chose it.
function stepOf(tokenizer, ids, steps, i, opts) {
  const id = ids[i + 1];
  return {
    id,
    text: tokenizer.appendedText(ids.slice(1, i + 1), id).text,
    selfAttention: steps[i].selfAttention,
    crossAttention: steps[i].crossAttention,
    ...(opts.returnLogits ? { logits: steps[i].logits } : {}),
  };
}

// Beam search's onToken: the leading beam's tokens as the lead changes. Only what differs from
// the tokens already streamed is sent, from the first position where it differs (`index`): a
// reader drops its tokens from `index` on and appends these.
function leadStreamer(tokenizer, opts) {
  let streamed = []; // the ids sent, after the start token
  return (ids, steps) => {
    if (!opts.onToken) return;
    const tokens = ids.slice(1);
    let from = 0;
    while (from < streamed.length && from < tokens.length && streamed[from] === tokens[from]) {
      from++;
    }
    // Shorter than what was sent: its last token goes again, so a reader drops the rest.
    if (from === tokens.length && tokens.length < streamed.length) from = tokens.length - 1;
    streamed = tokens;
    for (let i = from; i < tokens.length; i++) {
      opts.onToken({ ...stepOf(tokenizer, ids, steps, i, opts), index: i });
    }
  };
}

async function greedy(decoder, tokenizer, opts) {
  const { generation } = decoder;
  const ids = [generation.decoderStartTokenId];
  const steps = [];
  while (ids.length < opts.maxLength) {
    await nextTurn(opts.signal);
    const step = decoder.step(0, ids);
    const scores = decoder.process(Float32Array.from(step.logits), ids);
    let best = 0;
    for (let v = 1; v < scores.length; v++) if (scores[v] > scores[best]) best = v;
    ids.push(best);
    steps.push(step);
    opts.onToken?.({
      id: best,
      text: tokenizer.appendedText(ids.slice(1, -1), best).text,
      selfAttention: step.selfAttention,
      crossAttention: step.crossAttention,
      index: steps.length - 1,
    });
    if (best === generation.eosTokenId) break;
  }
  await nextTurn(opts.signal);
  return { ids, steps };
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
