// The optional parts of a snapshot (format.js) that the page's "Which heads matter" and "Logit
// lens" panels add: an ablation and a logit lens, written from what the model gave.

import { float32Bytes, int32Bytes, toBase64 } from './format.js';

const prediction = ({ id, token, text, partial, p }) => ({
  id,
  token: token ?? '',
  text,
  partial: Boolean(partial),
  p,
});

/**
 * @param {object} ablation
 *   position, target { id, token, text }, logProb   from model.headEffects()
 *   effects   Float32Array [layers, heads] of each head's delta, or null (not measured)
 *   off       [{ layer, head, mode }] the heads switched off
 *   before, after   the top predictions without and with them (model.run()'s)
 */
export function ablationField({ position, target, logProb, effects, off, before, after }) {
  return {
    position,
    target: { id: target.id, token: target.token ?? '', text: target.text },
    logProb,
    effects: effects ? binary('float32', float32Bytes(effects)) : null,
    off: off.map(({ layer, head, mode }) => ({ layer, head, mode })),
    before: before.map(prediction),
    after: after.map(prediction),
  };
}

/**
 * @param {{ topK: number, tokens: string[], top: { id, text, p }[][][] }} lens the position
 *   labels and, for every state and position, its top k (model.run()'s lens.top)
 */
export function logitLensField({ topK, tokens, top }) {
  const vocabulary = [];
  const index = new Map(); // `${id}\u0000${text}` -> its place in vocabulary
  const states = top.length;
  const n = tokens.length;
  const ids = new Int32Array(states * n * topK);
  const probabilities = new Float32Array(states * n * topK);
  top.forEach((rows, s) =>
    rows.forEach((row, i) =>
      row.forEach(({ id, text, p }, j) => {
        const key = `${id}\u0000${text}`;
        if (!index.has(key)) {
          index.set(key, vocabulary.length);
          vocabulary.push({ id, text });
        }
        const at = (s * n + i) * topK + j;
        ids[at] = index.get(key);
        probabilities[at] = p;
      }),
    ),
  );
  return {
    topK,
    tokens: [...tokens],
    vocabulary,
    top: binary('int32', int32Bytes(ids)),
    probabilities: binary('float32', float32Bytes(probabilities)),
  };
}

const binary = (dtype, bytes) => ({ dtype, encoding: 'base64', data: toBase64(bytes) });
