#!/usr/bin/env node
// headEffects() on GPT-2 small's shape (144 heads) at N tokens: its total time, against the
// naive way, one full run({ ablate }) per head. Prints numbers, asserts nothing. See
// bench/models/README.md, "Head effects".
//
//   node bench/models/head-effects.mjs [--tokens 64] [--naive 24] [--backend wasm-simd]
//                                      [--model FOLDER]
//
// Needs the wasm modules (./scripts/build-wasm.sh) and bench/models/build/gpt2-small/
// (build_models.py), or another model folder. The naive side times `--naive` heads spread over
// the layers (the later a layer, the less headEffects() reruns, so a spread is fair) and scales
// their mean to every head.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createAttention } from '../../web/src/index.js';
import { loadModel } from '../../web/src/models/index.js';

const { values } = parseArgs({
  options: {
    tokens: { type: 'string', default: '64' },
    naive: { type: 'string', default: '24' },
    backend: { type: 'string', default: 'wasm-simd' },
    model: { type: 'string' },
  },
});
const folder = values.model ?? fileURLToPath(new URL('build/gpt2-small/', import.meta.url));
const attention = await createAttention({ backend: values.backend, models: true });
const model = await loadModel(folder, { attention });
const { layers, heads } = model.info;
const paragraph =
  'The history of the city begins with a small settlement by the river, where traders met ' +
  'to exchange grain, salt and cloth. Over the centuries it grew into a market town, then a ' +
  'port, and its people learned to build bridges, schools and a library that still stands. ';
const ids = model.tokenizer.encode(paragraph.repeat(20), { addSpecialTokens: false }).ids;
const text = model.tokenizer.decode(ids.slice(0, Number(values.tokens)));

await model.run(text); // warm-up: first-call allocations and the module's lazy parts
const start = performance.now();
const effects = await model.headEffects(text);
const total = performance.now() - start;

const count = Math.min(Number(values.naive), layers * heads);
const naive = [];
for (let i = 0; i < count; i++) {
  const at = Math.floor((i * layers * heads) / count);
  const t = performance.now();
  await model.run(text, { ablate: [{ layer: Math.floor(at / heads), head: at % heads }] });
  naive.push(performance.now() - t);
}
const perHead = naive.reduce((s, x) => s + x, 0) / naive.length;
const naiveTotal = perHead * layers * heads + perHead; // one clean run too

console.log(
  `Node ${process.version}, ${model.info.backend}, one thread; ${model.info.modelType}: ` +
    `${layers} layers x ${heads} heads, ${model.info.hidden} wide, ${effects.heads.length} ` +
    `heads at N = ${Number(values.tokens)}`,
);
console.log(
  `headEffects(): ${(total / 1000).toFixed(2)} s (${effects.forwards} passes, ` +
    `${effects.layersRun} layers run of ${effects.forwards * layers} in full passes)`,
);
console.log(
  `naive (a full run({ ablate }) per head, ${count} timed): ${(naiveTotal / 1000).toFixed(2)} s ` +
    `(${perHead.toFixed(0)} ms each); headEffects faster by ${(naiveTotal / total).toFixed(2)}x`,
);
const best = effects.heads[0];
console.log(
  `most important head for '${effects.target.text}': layer ${best.layer} head ${best.head}, ` +
    `delta log p ${best.delta.toFixed(3)}`,
);
model.dispose();
attention.dispose();
