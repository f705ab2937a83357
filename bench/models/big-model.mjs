#!/usr/bin/env node
// Does a model of Qwen2.5-0.5B's or Llama-3.2-1B's size load in wasm32, and how long a text
// runs? Loads each GGUF (build_big_gguf.py's random weights in those shapes) with dtype 'q8' or
// 'q4' (from the file name, or --dtype) in an engine of its own, then run()s texts of --sizes
// tokens, smallest first; with --longest, bisects (steps of --step tokens) between the longest
// size that ran and the shortest that failed. Prints the load time, the wasm memory (the
// module's heap) after loading and after each run, model.info's weightTypes, each run's time and
// what fails where, with the error. Node, one thread. Prints numbers, asserts nothing.
//
//   node bench/models/big-model.mjs FILE.gguf [FILE.gguf ...] [--sizes 64,512,2048]
//     [--longest] [--step 64] [--dtype q4|q8|f16|f32] [--backend wasm-simd]
//
// See README.md ("Does a 1B model fit?").
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { wasmBackendOf } from '../../web/src/attention.js';
import { createAttention } from '../../web/src/index.js';
import { loadModel } from '../../web/src/models/index.js';
import { loadAverage } from '../compare/stats.js';
import { textOfTokens } from './forward-core.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    sizes: { type: 'string', default: '64,512,2048' },
    longest: { type: 'boolean', default: false },
    step: { type: 'string', default: '64' },
    dtype: { type: 'string' },
    backend: { type: 'string', default: 'wasm-simd' },
  },
});
if (positionals.length === 0) {
  console.error('usage: node bench/models/big-model.mjs FILE.gguf [...] (see the header)');
  process.exit(2);
}
const sizes = values.sizes.split(',').map(Number);
const step = Number(values.step);
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const dtypeOf = (file) =>
  values.dtype ?? (/q4_[0k]/i.test(file) ? 'q4' : /q8_0/i.test(file) ? 'q8' : 'f32');

console.log(`node ${process.version}, ${values.backend}, one thread; load ${await loadAverage()}`);

async function runOnce(model, heap, n) {
  // "the the ...", or " the the ..." where the tiny tokenizer splits a text's first "the".
  const text = [textOfTokens(n), ' the'.repeat(n)].find(
    (candidate) => model.tokenizer.encode(candidate).ids.length === n,
  );
  if (text === undefined) throw new Error(`no text of ${n} tokens`);
  const t0 = performance.now();
  try {
    const out = await model.run(text);
    const ms = performance.now() - t0;
    const finite = out.attention.every(Number.isFinite);
    const top = out.predictions[0];
    console.log(
      `    N=${String(n).padStart(5)}: ran in ${seconds(ms)}, heap ${mib(heap())}, ` +
        `attention ${mib(out.attention.byteLength)} (${finite ? 'finite' : 'NOT finite'}), ` +
        `top prediction ${JSON.stringify(top?.text)} (p ${top?.p?.toFixed(4)})`,
    );
    return true;
  } catch (error) {
    const ms = performance.now() - t0;
    console.log(
      `    N=${String(n).padStart(5)}: FAILS after ${seconds(ms)}, heap ${mib(heap())}: ` +
        `${error.name} ${error.code ?? ''} (${error.parameter ?? ''}) ${error.message}`,
    );
    return false;
  }
}

for (const file of positionals) {
  const dtype = dtypeOf(file);
  console.log(`\n${basename(file)}, dtype '${dtype}'`);
  const attention = await createAttention({ backend: values.backend, threads: 1, models: true });
  const module = wasmBackendOf(attention, 'attention').module;
  const heap = () => module.HEAPU8.buffer.byteLength;
  console.log(`  heap before loading: ${mib(heap())}`);
  const t0 = performance.now();
  let model;
  try {
    model = await loadModel(file, { attention, dtype });
  } catch (error) {
    console.log(
      `  does not load (after ${seconds(performance.now() - t0)}, heap ${mib(heap())}): ` +
        `${error.name} ${error.code ?? ''} ${error.message}`,
    );
    attention.dispose();
    continue;
  }
  const { info } = model;
  console.log(
    `  loaded in ${seconds(performance.now() - t0)}: heap ${mib(heap())}, weights ` +
      `${mib(info.bytes)} (${info.parameters.toLocaleString('en')} parameters), ` +
      `weightTypes ${JSON.stringify(info.weightTypes)}; Node RSS ` +
      `${mib(process.memoryUsage().rss)}`,
  );
  let longestRun = 0;
  let shortestFailed = Infinity;
  for (const n of sizes) {
    if (n >= shortestFailed) continue;
    if (await runOnce(model, heap, n)) longestRun = Math.max(longestRun, n);
    else shortestFailed = n;
  }
  if (values.longest && Number.isFinite(shortestFailed)) {
    let low = longestRun;
    let high = shortestFailed;
    while (high - low > step) {
      const mid = low + Math.max(step, Math.floor((high - low) / 2 / step) * step);
      if (await runOnce(model, heap, mid)) low = mid;
      else high = mid;
    }
    longestRun = low;
    shortestFailed = high;
  }
  const failed = Number.isFinite(shortestFailed) ? `; ${shortestFailed} failed` : '';
  console.log(`  longest text that ran: ${longestRun} tokens${failed}`);
  if (Number.isFinite(shortestFailed) && longestRun > 0) {
    console.log('  after the failure, once more at the longest that ran (still usable?):');
    await runOnce(model, heap, longestRun);
  }
  model.dispose();
  attention.dispose();
}
