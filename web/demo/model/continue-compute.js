// The compute thread's side of the Continue mode: model.generate() on the loaded causal model
// (one token at a time against a KV cache), the page's text growing by each new token and its
// run growing by the token's row of attention, so every view the page has draws the longer
// sequence as it comes. The grown run reaches the page through the request's progress channel
// in runModel's form (compute.js pageResult): tokens or words, visibility, head labels.
// Loaded with the first continuation (compute.js continueText).
import { layerVisibility } from '../../src/interpret/layer-masks.js';
import { labelHeads } from '../../src/interpret/head-labels.js';
import { rangeError } from '../../src/argument-checks.js';
import { engine } from '../compute-core.js';
import { fitText, pageResult, pageTokenLimit, runOnce } from './compute.js';

/**
 * A run's attention grown by generated tokens' rows.
 * @param {Float32Array} prompt [planes, n, n] (planes: layers x heads)
 * @param {Float32Array[]} rows generated token s: [planes, n + s + 1], its row over every key
 *   before it and itself
 * @returns {Float32Array} [planes, m, m], m = n + rows.length; a new row's keys after its query
 *   stay 0 (a causal model never sees them)
 */
export function grownAttention(prompt, n, rows, planes) {
  const m = n + rows.length;
  if (prompt.length !== planes * n * n) {
    throw new RangeError(
      `grownAttention: the prompt holds ${prompt.length} weights, not ${planes}x${n}x${n}`,
    );
  }
  const out = new Float32Array(planes * m * m);
  for (let p = 0; p < planes; p++) {
    const plane = p * m * m;
    for (let i = 0; i < n; i++) {
      out.set(prompt.subarray((p * n + i) * n, (p * n + i + 1) * n), plane + i * m);
    }
    rows.forEach((row, s) => {
      const width = n + s + 1;
      if (row.length !== planes * width) {
        throw new RangeError(
          `grownAttention: row ${s} holds ${row.length} weights, not ${planes}x${width}`,
        );
      }
      out.set(row.subarray(p * width, (p + 1) * width), plane + (n + s) * m);
    });
  }
  return out;
}

/**
 * params: { key, text, words, maxTokens, temperature, seed } -> runModel's result for the
 * continued text plus `continued: { prompt, text, added, maxTokens, stopped, seed }` (text: the
 * prompt and what was added; stopped: 'eos' or 'maxTokens'; null while it goes). The same form,
 * with stopped null, reaches progress() after each token, and the next token waits for
 * drawn() (the worker's: the page has handled it). maxTokens is cut to what the page's
 * token limit (pageTokenLimit: the model's positions, the weights' memory) leaves after the
 * prompt.
 */
export async function continueWith(model, params, { signal, progress, drawn }) {
  const info = model.info;
  const started = performance.now();
  const fitted = fitText(model, params.text, '');
  const limit = pageTokenLimit(info);
  const prompt = await runOnce(model, fitted.text, '', info.layerMasks);
  const n = prompt.tokens.length;
  if (fitted.truncated || n >= limit) {
    throw rangeError('text', `fills the ${limit} positions the page shows: nothing can follow it`);
  }
  const maxTokens = Math.min(params.maxTokens, limit - n);
  const attention = await engine();
  const eos = model.tokenizer.special.eos?.id;
  const tokens = [...prompt.tokens];
  const rows = [];
  let text = fitted.text;
  const grown = (stopped, seed, kept = text) => {
    const m = tokens.length;
    const visible = layerVisibility(attention, info.layerMasks, m);
    const special = tokens.map((token) => Boolean(token.special));
    const weights = grownAttention(prompt.attention, n, rows, info.layers * info.heads);
    const own = {
      tokens,
      attention: weights,
      visible,
      labels: labelHeads(weights, { ...info, n: m, masks: visible, special }),
      // The next token's top 10 comes with the run of the whole text once it is kept.
      predictions: [],
      layerMasks: info.layerMasks,
    };
    const page = { key: params.key, text, pair: '', truncated: null, own, surgery: null };
    return {
      ...pageResult(model, { ...page, words: params.words }, started),
      continued: { prompt: fitted.text, text: kept, added: rows.length, maxTokens, stopped, seed },
    };
  };
  const result = await model.generate(fitted.text, {
    maxTokens,
    temperature: params.temperature,
    seed: params.seed,
    signal: signal ?? undefined,
    onToken: (token) => {
      const special = token.id === eos;
      const start = text.length;
      if (!special) text += token.text;
      const piece = model.tokenizer.idToToken(token.id) ?? token.text;
      tokens.push({ id: token.id, text: piece, start, end: text.length, special, segment: 0 });
      rows.push(token.attention);
      progress(grown(null, null));
      // The next token waits until the page has drawn this one: every row is drawn, and a fast
      // model never queues whole matrices faster than the page takes them.
      return drawn?.();
    },
  });
  // The text kept: decoded together, a character split over several byte tokens comes out whole.
  return grown(result.stopped, result.seed, fitted.text + result.text);
}
