// model.headEffects(text, { target }): which heads matter for one prediction. Each head is
// zero-ablated in turn (ablation.js) and the change in the target token's log-probability
// measured, then the heads are ranked.
//
// Cheaper than heads x full forwards: ablating a head of layer l leaves layers 0 .. l-1 as they
// were, so one clean run keeps the residual stream at every layer's input (its hidden states)
// and each ablated run resumes there (the core's startLayer/startState), running only layers
// l .. L-1. That is (L + 1) / 2 of the layers on average (6.5 of GPT-2 small's 12); the ablated
// runs also skip the attention weights (the fused kernel runs instead of the materialized one)
// and compute one row of logits.

import { describe } from '../errors.js';
import { integer, optionsObject, rangeError, typeError } from '../argument-checks.js';
import { abortError } from './files/abort.js';
import { optional } from './files/options.js';
import { nextTurn } from './generate.js';
import { predictedToken, topIds } from './predictions.js';

export const HEAD_EFFECTS_OPTIONS = Object.freeze(['target', 'position', 'signal', 'onProgress']);

/** headEffects()'s options, before the text is tokenized. */
export function checkHeadEffectsOptions(options) {
  const raw = optionsObject(options, 'options', HEAD_EFFECTS_OPTIONS);
  const target = raw.target;
  if (target !== undefined && typeof target !== 'number' && typeof target !== 'string') {
    throw typeError(
      'target',
      `must be a token id or a string of one token, got ${describe(target)}`,
    );
  }
  optional(raw.signal, 'signal', 'signal');
  optional(raw.onProgress, 'onProgress', 'function');
  return {
    target,
    position: raw.position,
    signal: raw.signal ?? null,
    onProgress: raw.onProgress ?? null,
  };
}

/** The target's id: an id of the vocabulary, or a string the tokenizer makes one token of. */
export function targetId(target, tokenizer, vocab) {
  if (typeof target === 'number') return integer(target, 'target', 0, vocab - 1);
  const ids = tokenizer.encode(target, { addSpecialTokens: false }).ids;
  if (ids.length === 1) return ids[0];
  const exact = tokenizer.tokenToId(target);
  if (exact !== undefined && exact !== null) return exact;
  throw rangeError(
    'target',
    `'${target}' is ${ids.length} tokens (ids: ${ids.join(', ') || 'none'}); ` +
      'give a string of one token or a token id',
  );
}

/**
 * Runs the clean pass, then one resumed pass per head. `lent`: { forward(args) (CoreModel's
 * forward with ids, types, shape and threads bound), shape, tokenizer, live() }.
 * @returns {Promise<{ position, target: { id, token, text }, logProb, p, heads: { layer, head,
 *   logProb, delta, top: { id, p } }[], forwards, layersRun }>} heads ranked by delta, the most
 *   negative first (the heads the target depends on most); delta = logProb with the head removed
 *   minus without; top: the ablated run's most likely token
 */
export async function headEffects(lent, { ids, position, context }, opts) {
  const { shape, tokenizer } = lent;
  const { layers, heads, vocab, hidden } = shape;
  const n = ids.length;
  const clean = lent.forward({ logitPositions: [position], hiddenStates: true });
  const id =
    opts.target === undefined
      ? topIds(clean.logits, 0, vocab, 1)[0]
      : targetId(opts.target, tokenizer, vocab);
  const logProbOf = (run) => run.logits[id] - run.logSumExp[0];
  const base = logProbOf(clean);
  const results = [];
  let layersRun = layers;
  for (let layer = 0; layer < layers; layer++) {
    await nextTurn(); // an abort, a page update or another call between two layers
    if (opts.signal?.aborted) throw abortError(opts.signal, 'headEffects() was cancelled');
    lent.live();
    const startState = clean.hiddenStates.subarray(layer * n * hidden, (layer + 1) * n * hidden);
    for (let head = 0; head < heads; head++) {
      const run = lent.forward({
        logitPositions: [position],
        ablations: [{ layer, head, mode: 'zero' }],
        startLayer: layer,
        startState,
      });
      const logProb = logProbOf(run);
      const top = topIds(run.logits, 0, vocab, 1)[0];
      results.push({
        layer,
        head,
        logProb,
        delta: logProb - base,
        top: { id: top, p: Math.exp(run.logits[top] - run.logSumExp[0]) },
      });
      layersRun += layers - layer;
    }
    opts.onProgress?.({ done: (layer + 1) * heads, total: layers * heads });
  }
  results.sort((a, b) => a.delta - b.delta || a.layer - b.layer || a.head - b.head);
  return {
    position,
    target: { id, ...predictedToken(tokenizer, context, id) },
    logProb: base,
    p: Math.exp(base),
    heads: results,
    forwards: 1 + layers * heads,
    layersRun,
  };
}
