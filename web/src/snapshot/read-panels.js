// Reading a snapshot's ablation and logit lens (format.js), as hostile as the rest of the file:
// types, caps, indices inside the model and the vocabulary list, finite numbers, probabilities.

import { fromBase64, SNAPSHOT_LIMITS } from './format.js';
import { array, fail, int, object, readPrediction, string, typeFail } from './fields.js';

const ABLATION_MODES = ['zero', 'mean'];
// A log-probability change larger than this is no float32 softmax's.
const MAX_EFFECT = 1e4;
const SUM_TOLERANCE = 1e-3;

// Little-endian values of `dtype` from a base64 field holding exactly `count` of them.
function binary(value, field, dtype, count) {
  const block = object(value, field);
  if (block.dtype !== dtype || block.encoding !== 'base64') {
    throw fail('invalid_argument', field, `must be { dtype: '${dtype}', encoding: 'base64' }`);
  }
  const bytes = fromBase64(block.data, count * 4);
  if (!bytes) throw fail('shape_mismatch', `${field}.data`, `must be base64 of ${count} ${dtype}`);
  const view = new DataView(bytes.buffer);
  const out = dtype === 'int32' ? new Int32Array(count) : new Float32Array(count);
  for (let i = 0; i < count; i++) {
    out[i] = dtype === 'int32' ? view.getInt32(i * 4, true) : view.getFloat32(i * 4, true);
  }
  return out;
}

function predictions(value, field) {
  return array(value, field, SNAPSHOT_LIMITS.topK).map((item, i) =>
    readPrediction(item, `${field}[${i}]`),
  );
}

/**
 * @returns {null | { position, target: { id, token, text }, logProb, effects: Float32Array
 *   [layers, heads] | null, off: { layer, head, mode }[], before, after }}
 */
export function readAblation(value, model) {
  if (value === undefined || value === null) return null;
  const ablation = object(value, 'ablation');
  const L = SNAPSHOT_LIMITS;
  const target = object(ablation.target, 'ablation.target');
  const logProb = ablation.logProb;
  if (typeof logProb !== 'number' || !(logProb <= 0 && logProb >= -MAX_EFFECT)) {
    throw typeFail('ablation.logProb', 'a log-probability', logProb);
  }
  let effects = null;
  if (ablation.effects !== null) {
    effects = binary(ablation.effects, 'ablation.effects', 'float32', model.layers * model.heads);
    effects.forEach((delta, i) => {
      if (!(Math.abs(delta) <= MAX_EFFECT)) {
        throw fail('out_of_range', `ablation.effects[${i}]`, `is ${delta}, not a finite change`);
      }
    });
  }
  const seen = new Set();
  const off = array(ablation.off, 'ablation.off', model.layers * model.heads).map((raw, i) => {
    const field = `ablation.off[${i}]`;
    const entry = object(raw, field);
    const layer = int(entry.layer, `${field}.layer`, 0, model.layers - 1);
    const head = int(entry.head, `${field}.head`, 0, model.heads - 1);
    if (!ABLATION_MODES.includes(entry.mode)) {
      throw typeFail(`${field}.mode`, "'zero' or 'mean'", entry.mode);
    }
    if (seen.has(layer * model.heads + head)) {
      throw fail('invalid_argument', field, `layer ${layer} head ${head} is listed twice`);
    }
    seen.add(layer * model.heads + head);
    return { layer, head, mode: entry.mode };
  });
  return {
    position: int(ablation.position, 'ablation.position', 0, L.tokens - 1),
    target: {
      id: int(target.id, 'ablation.target.id', 0, 2 ** 31),
      token: string(target.token, 'ablation.target.token', L.tokenText),
      text: string(target.text, 'ablation.target.text', L.tokenText),
    },
    logProb,
    effects,
    off,
    before: predictions(ablation.before, 'ablation.before'),
    after: predictions(ablation.after, 'ablation.after'),
  };
}

/**
 * @returns {null | { topK, states, tokens: string[], vocabulary: { id, text }[], top: Int32Array
 *   [states, P, topK] (indices into vocabulary), probabilities: Float32Array [states, P, topK] }}
 *   states: model.layers + 1
 */
export function readLogitLens(value, model) {
  if (value === undefined || value === null) return null;
  const lens = object(value, 'logitLens');
  const L = SNAPSHOT_LIMITS;
  const topK = int(lens.topK, 'logitLens.topK', 1, L.lensTopK);
  const tokens = array(lens.tokens, 'logitLens.tokens', L.tokens).map((text, i) =>
    string(text, `logitLens.tokens[${i}]`, L.tokenText),
  );
  if (tokens.length === 0) throw fail('out_of_range', 'logitLens.tokens', 'must name a position');
  const states = model.layers + 1;
  const count = states * tokens.length * topK;
  if (count > L.lensEntries) {
    throw fail('out_of_range', 'logitLens', `${count} entries are more than the cap`);
  }
  const vocabulary = array(lens.vocabulary, 'logitLens.vocabulary', count).map((raw, i) => {
    const entry = object(raw, `logitLens.vocabulary[${i}]`);
    return {
      id: int(entry.id, `logitLens.vocabulary[${i}].id`, 0, 2 ** 31),
      text: string(entry.text, `logitLens.vocabulary[${i}].text`, L.tokenText),
    };
  });
  const top = binary(lens.top, 'logitLens.top', 'int32', count);
  const probabilities = binary(lens.probabilities, 'logitLens.probabilities', 'float32', count);
  for (let row = 0; row < count / topK; row++) {
    let sum = 0;
    for (let j = 0; j < topK; j++) {
      const at = row * topK + j;
      const where = `logitLens[${Math.floor(row / tokens.length)}][${row % tokens.length}][${j}]`;
      if (!(top[at] >= 0 && top[at] < vocabulary.length)) {
        throw fail('out_of_range', `${where}.top`, `${top[at]} is not in the vocabulary list`);
      }
      const p = probabilities[at];
      if (!(p >= 0 && p <= 1)) throw fail('out_of_range', `${where}.p`, `${p} is no probability`);
      if (j > 0 && p > probabilities[at - 1]) {
        throw fail('out_of_range', `${where}.p`, 'is above the one before (best first)');
      }
      sum += p;
    }
    if (sum > 1 + SUM_TOLERANCE) {
      throw fail(
        'out_of_range',
        `logitLens.probabilities`,
        `a position's top ${topK} sum to ${sum}`,
      );
    }
  }
  return { topK, states, tokens, vocabulary, top, probabilities };
}
