#!/usr/bin/env node
// Translation on Marian base's shape (opus-mt: 6 + 6 layers, d_model 512, 8 heads, ffn 2048,
// vocab 65001): model.translate() of a 20-word sentence, greedy and with 4 beams (opus-mt's
// num_beams), calls alternating. Prints numbers, asserts nothing. See bench/models/README.md,
// "Translation".
//
//   node bench/models/translate.mjs [--tokens 32] [--runs 5] [--backend wasm-simd]
//
// Needs the wasm modules (./scripts/build-wasm.sh) and build_models.py's marian-base/ in
// bench/models/build/ (random weights in the Hub's layout: with them the translation never
// stops early, so every call produces --tokens tokens, the last a forced </s>).
//
// Time to first token: from the call to the first onToken (tokenizing, the encoder, the first
// decoder step). Greedy streams each token as it is chosen; beam search streams its leading
// beam (a token may be replaced later when another beam overtakes it).
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createAttention } from '../../web/src/index.js';
import { loadModel } from '../../web/src/models/index.js';
import { median } from './forward-core.js';

const { values } = parseArgs({
  options: {
    tokens: { type: 'string', default: '32' },
    runs: { type: 'string', default: '5' },
    backend: { type: 'string', default: 'wasm-simd' },
  },
});
const maxTokens = Number(values.tokens);
const runs = Number(values.runs);
// The 20-word sentence, spelt as build_models.py's MARIAN_SENTENCE (part of the spm models' corpus).
const SENTENCE =
  'The little girl walked to the park with her cat, and they sat on the grass to watch the birds.';
const load = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`;

console.log(`${load()} (before)`);
const attention = await createAttention({ backend: values.backend, threads: 1, models: true });
const folder = fileURLToPath(new URL('build/marian-base/', import.meta.url));
const loadStart = performance.now();
const model = await loadModel(folder, { attention });
const loadMs = performance.now() - loadStart;
const source = model.tokenizer.encode(SENTENCE);
console.log(
  `Node ${process.version}, ${model.info.backend}, one thread; Marian base shape ` +
    `(${model.info.encoderLayers} + ${model.info.layers - model.info.encoderLayers} layers, ` +
    `${model.info.heads} heads, d_model ${model.info.hidden}, vocab ${model.info.vocab}), loaded in ` +
    `${loadMs.toFixed(0)} ms; a ${SENTENCE.split(' ').length}-word sentence, ` +
    `${source.ids.length} source tokens with </s>; up to ${maxTokens} new tokens`,
);

async function translate(beams) {
  const stamps = [];
  const start = performance.now();
  const result = await model.translate(SENTENCE, {
    maxTokens,
    beams,
    onToken: () => stamps.push(performance.now()),
  });
  const end = performance.now();
  const tokens = result.ids.length - 1; // without the decoder's start token
  return {
    tokens,
    firstMs: stamps[0] - start,
    totalMs: end - start,
    perSecond: (tokens * 1000) / (end - start),
    stepMs: beams === 1 ? (stamps.at(-1) - stamps[0]) / (stamps.length - 1) : NaN,
    decoderTokens: result.stats.decoderTokens,
  };
}

await translate(1); // untimed: compilation, first allocations
const sides = { 1: [], 4: [] };
for (let r = 0; r < runs; r++) {
  for (const beams of r % 2 ? [4, 1] : [1, 4]) sides[beams].push(await translate(beams));
}
for (const beams of [1, 4]) {
  const list = sides[beams];
  const pick = (key) => median(list.map((x) => x[key]));
  console.log(
    `${beams === 1 ? 'greedy ' : '4 beams'}: ${pick('tokens')} tokens, first token ` +
      `${pick('firstMs').toFixed(0)} ms, whole translation ${pick('totalMs').toFixed(0)} ms = ` +
      `${pick('perSecond').toFixed(2)} tokens/s` +
      (beams === 1 ? `, ${pick('stepMs').toFixed(1)} ms per token after the first` : '') +
      ` (${pick('decoderTokens')} decoder tokens run; medians of ${list.length})`,
  );
}
model.dispose();
attention.dispose();
console.log(`${load()} (after)`);
