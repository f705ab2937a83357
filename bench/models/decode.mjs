#!/usr/bin/env node
// Decoding on GPT-2 small's shape: one generate() step against the KV cache, against re-running
// the whole prefix with run() (what producing a token cost before the cache), at a prefix of N
// tokens. Prints numbers, asserts nothing. See bench/models/README.md, "Decoding".
//
//   node bench/models/decode.mjs [--sizes 64,256,1024] [--steps 8] [--backend wasm-simd]
//
// Needs the wasm modules (./scripts/build-wasm.sh) and bench/models/build/gpt2-small/
// (build_models.py). A step is timed from one onToken() to the next: the token's forward
// against the cache, copying its attention row out and what generate() does in JavaScript.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createAttention } from '../../web/src/index.js';
import { loadModel } from '../../web/src/models/index.js';
import { median } from './forward-core.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '64,256,1024' },
    steps: { type: 'string', default: '8' },
    backend: { type: 'string', default: 'wasm-simd' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const steps = Number(values.steps);
const folder = fileURLToPath(new URL('build/gpt2-small/', import.meta.url));

const attention = await createAttention({ backend: values.backend, models: true });
const model = await loadModel(folder, { attention });
const { maxPositions } = model.info;
// A long English text, cut by token count: decoded ids re-encode to (nearly) the same count.
const paragraph =
  'The history of the city begins with a small settlement by the river, where traders met ' +
  'to exchange grain, salt and cloth. Over the centuries it grew into a market town, then a ' +
  'port, and its people learned to build bridges, schools and a library that still stands. ';
const ids = model.tokenizer.encode(paragraph.repeat(60), { addSpecialTokens: false }).ids;
const textOf = (count) => model.tokenizer.decode(ids.slice(0, count));

console.log(
  `Node ${process.version}, ${model.info.backend}, one thread; GPT-2 small shape ` +
    `(${model.info.layers} layers, ${model.info.heads} heads, ${model.info.hidden} wide)`,
);
console.log('prefix N | step against the cache | re-run of the prefix | step faster by');
for (const n of sizes) {
  // The prompt leaves room for `steps` timed steps after the first token, ending at or below N.
  const promptLength = Math.min(n, maxPositions) - steps - 1;
  const stamps = [];
  const generated = await model.generate(textOf(promptLength), {
    maxTokens: steps + 1,
    onToken: () => stamps.push(performance.now()),
  });
  const stepTimes = stamps.slice(1).map((t, i) => t - stamps[i]);
  const prefixTokens = generated.prompt.tokens.length + generated.ids.length;
  const rerun = [];
  const text = textOf(Math.min(n, maxPositions));
  for (let r = 0; r < (n >= 1024 ? 2 : 3); r++) {
    const start = performance.now();
    const run = await model.run(text);
    rerun.push(performance.now() - start);
    if (r === 0 && run.tokens.length !== Math.min(n, maxPositions)) {
      console.log(`  (the re-run's text is ${run.tokens.length} tokens)`);
    }
  }
  const step = median(stepTimes);
  const again = median(rerun);
  console.log(
    `${String(n).padStart(8)} | ${step.toFixed(1).padStart(8)} ms (${(1000 / step).toFixed(1)} ` +
      `tokens/s, past ${prefixTokens - steps}..${prefixTokens - 1}) | ` +
      `${again.toFixed(0).padStart(6)} ms | ${(again / step).toFixed(1)}x`,
  );
}
model.dispose();
attention.dispose();
