// run()'s readings of its own attention, asked for by option: { rollout, flow, sinks }
// (interpret/rollout.js, flow.js, sinks.js, which the page and the CLI call directly on a run's
// attention). Checked in two steps: the values' types with the other options, before anything is
// tokenized; the positions once the text's length is known.

import { describe } from '../errors.js';
import { boolean, integer, typeError } from '../argument-checks.js';
import { attentionFlow, checkFlowSize } from '../interpret/flow.js';
import { attentionRollout, checkRolloutWork, checkRows } from '../interpret/rollout.js';
import { attentionSinks } from '../interpret/sinks.js';

/** The run() options this module reads. */
export const INTERPRET_OPTIONS = Object.freeze(['rollout', 'flow', 'sinks']);

/**
 * rollout: true (every position) or an array of positions; flow: true (the position the model
 * predicts from) or a position; sinks: true. False or undefined: not computed.
 */
export function checkInterpretOptions(raw) {
  const rollout = raw.rollout === undefined || raw.rollout === false ? null : raw.rollout;
  if (rollout !== null && rollout !== true && !Array.isArray(rollout)) {
    throw typeError('rollout', `must be true or an array of positions, got ${describe(rollout)}`);
  }
  const flow = raw.flow === undefined || raw.flow === false ? null : raw.flow;
  if (flow !== null && flow !== true && typeof flow !== 'number') {
    throw typeError('flow', `must be true or a position, got ${describe(flow)}`);
  }
  return { rollout, flow, sinks: boolean(raw.sinks, 'sinks') };
}

/**
 * The positions of the asked readings once the text is tokenized, and their size checked before
 * the forward pass runs: { rollout: positions | null, flow: position | null, sinks }.
 * @param {{ n, layers, predictedAt }} run predictedAt: the position the model predicts from
 *   (the last token; BERT's first [MASK], else its [CLS] at 0), flow's default
 */
export function planInterpret(asked, { n, layers, predictedAt }) {
  let rollout = null;
  if (asked.rollout !== null) {
    rollout = checkRows(asked.rollout === true ? undefined : asked.rollout, n, 'rollout');
    checkRolloutWork(rollout.length, layers, n, 'rollout');
  }
  let flow = null;
  if (asked.flow !== null) {
    flow = asked.flow === true ? predictedAt : integer(asked.flow, 'flow', 0, n - 1);
    checkFlowSize(layers, n, 'flow');
  }
  return { rollout, flow, sinks: asked.sinks };
}

/**
 * What run() adds: rollout { positions, values [positions, N] }, flow { position, values [N] },
 * sinks { first, bos, rows } ([layers, heads] each; bos: the share on the tokenizer's BOS, or
 * [CLS] for bidirectional models, where the text has it).
 * @param {{ rollout, flow, sinks }} plan planInterpret's result
 */
export function interpretRun(plan, { attention, layers, heads, tokens, causal, bosId }) {
  const shape = { layers, heads, n: tokens.length };
  const added = {};
  if (plan.rollout !== null) {
    const values = attentionRollout(attention, shape, { rows: plan.rollout });
    added.rollout = { positions: plan.rollout, values };
  }
  if (plan.flow !== null) {
    const values = attentionFlow(attention, shape, { position: plan.flow });
    added.flow = { position: plan.flow, values };
  }
  if (plan.sinks) {
    const bos = tokens.map((token) => token.special && token.id === bosId);
    added.sinks = attentionSinks(attention, shape, { causal, bos });
  }
  return added;
}
