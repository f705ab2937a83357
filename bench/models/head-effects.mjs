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
// their mean to every head. On a shared machine the wall times of the two sides, measured one
// after the other, move with the load; the process's CPU time (one thread) moves much less, so
// both are printed and the ratio is taken of both.
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
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const start = performance.now();
const startCpu = cpuMs();
const effects = await model.headEffects(text);
const total = performance.now() - start;
const totalCpu = cpuMs() - startCpu;

const count = Math.min(Number(values.naive), layers * heads);
let naiveWall = 0;
let naiveCpu = 0;
for (let i = 0; i < count; i++) {
  const at = Math.floor((i * layers * heads) / count);
  const t = performance.now();
  const c = cpuMs();
  await model.run(text, { ablate: [{ layer: Math.floor(at / heads), head: at % heads }] });
  naiveWall += performance.now() - t;
  naiveCpu += cpuMs() - c;
}
// Every head, and one clean run.
const scale = (layers * heads + 1) / count;
const naiveTotal = naiveWall * scale;
const naiveTotalCpu = naiveCpu * scale;

console.log(
  `Node ${process.version}, ${model.info.backend}, one thread; ${model.info.modelType}: ` +
    `${layers} layers x ${heads} heads, ${model.info.hidden} wide, ${effects.heads.length} ` +
    `heads at N = ${Number(values.tokens)}`,
);
const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;
console.log(
  `headEffects(): ${seconds(total)} wall, ${seconds(totalCpu)} CPU (${effects.forwards} ` +
    `passes, ${effects.layersRun} layers run of ${effects.forwards * layers} in full passes)`,
);
console.log(
  `naive (a full run({ ablate }) per head, ${count} timed, scaled): ${seconds(naiveTotal)} ` +
    `wall, ${seconds(naiveTotalCpu)} CPU (${(naiveCpu / count).toFixed(0)} ms CPU each)`,
);
console.log(
  `headEffects faster by ${(naiveTotal / total).toFixed(2)}x wall, ` +
    `${(naiveTotalCpu / totalCpu).toFixed(2)}x CPU`,
);
const best = effects.heads[0];
console.log(
  `most important head for '${effects.target.text}': layer ${best.layer} head ${best.head}, ` +
    `delta log p ${best.delta.toFixed(3)}`,
);
model.dispose();
attention.dispose();
