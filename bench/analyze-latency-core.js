// Latency of analyze() on a 64-token text with 4 heads (issue 6 targets under 2 ms in Chromium),
// and of its JavaScript stages, in Node or in a page. Two texts that differ in one word alternate,
// as when someone types: nothing can be served from a cache keyed on the whole text.
//
// Rows: analyze() end to end; `timing.ms` of its result (attn.multiHead: checks, copies, wasm);
// tokenize() and embed() of the same text on their own; the first analyze() after
// createAttention() (it builds the position table and the seeded weights).

import { analyze, createAttention, embed, tokenize } from '../web/src/index.js';

const WORDS = (
  'the quick brown fox jumps over a lazy dog while curious attention heads watch ' +
  'every token of this sentence and weigh how much each word matters to the others'
).split(' ');

/** A text of exactly `count` word tokens; `variant` changes one word in the middle. */
export function latencyText(count = 64, variant = 0) {
  const words = Array.from({ length: count }, (_, i) => WORDS[i % WORDS.length]);
  words[count >> 1] = variant ? 'cat' : 'dog';
  return words.join(' ');
}

function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p10: at(0.1), p90: at(0.9), calls: sorted.length };
}

/**
 * @param {{ calls?: number, warmup?: number, heads?: number, tokens?: number }} [options]
 * @returns {Promise<object>} milliseconds: { analyze, engine, tokenize, embed } as
 *   { median, p10, p90, calls }, firstAnalyze, and the problem's shape
 */
export async function measureAnalyzeLatency({
  calls = 300,
  warmup = 50,
  heads = 4,
  tokens = 64,
} = {}) {
  const attn = await createAttention({ backend: 'wasm' });
  const texts = [latencyText(tokens, 0), latencyText(tokens, 1)];
  const options = { heads, attention: attn };
  const counted = tokenize(texts[0]).length;
  if (counted !== tokens)
    throw new Error(`the latency text has ${counted} tokens, expected ${tokens}`);

  let started = performance.now();
  const first = await analyze(texts[0], options);
  const firstAnalyze = performance.now() - started;
  for (let i = 0; i < warmup; i++) await analyze(texts[i & 1], options);

  const total = [];
  const engine = [];
  const tokenizeMs = [];
  const embedMs = [];
  const dim = first.shape.modelDim;
  for (let i = 0; i < calls; i++) {
    const text = texts[i & 1];
    started = performance.now();
    const result = await analyze(text, options);
    total.push(performance.now() - started);
    engine.push(result.timing.ms);

    started = performance.now();
    const tokenList = tokenize(text);
    tokenizeMs.push(performance.now() - started);
    started = performance.now();
    embed(tokenList, { dim, seed: 1 });
    embedMs.push(performance.now() - started);
  }
  attn.dispose();
  return {
    shape: first.shape,
    backend: first.backend,
    firstAnalyze,
    analyze: stats(total),
    engine: stats(engine),
    tokenize: stats(tokenizeMs),
    embed: stats(embedMs),
  };
}
