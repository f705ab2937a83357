#!/usr/bin/env node
// Weight types side by side: a whole forward and a decode step of the same model loaded with
// dtype f32, f16 and q8 (more: --dtypes, e.g. q4 once the core has it), against onnxruntime-web
// running the same weights as int8 graphs (build_models.py's gpt2-small-q8*.onnx: MatMulNBits
// over attnlens' own Q8_0 blocks; gpt2-small-int8.onnx: DynamicQuantizeLinear + MatMulInteger).
// One thread each, the sides' calls alternating (the side that goes first rotating each round),
// so they meet the same machine load. Prints numbers, asserts nothing. See README.md.
//
//   node bench/models/quantized.mjs [--models gpt2,qwen2] [--dtypes f32,f16,q8] [--sizes 64,256]
//     [--prompt 32] [--steps 8] [--rounds 5] [--ort q8,int8,q4] [--backend wasm-simd]
//
// Needs the wasm modules, onnxruntime-web in bench/peers/node_modules, and in bench/models/build/
// gpt2-small/ and the graphs above (build_models.py), qwen2.5-0.5b-shape/ for --models qwen2.
// Forward: model.run(text) (tokenizing, every layer's attention copied out) against
// session.run(feeds) (feeds built beforehand). Decode: one generate() step against the KV cache
// (onToken to onToken) against one run of the decode graph with the last run's present as its
// past (ortGreedy). Agreement is against the first dtype (f32): the largest attention difference
// and whether the last position's top prediction is the same token; in decoding, how many of the
// greedy tokens are the same.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpus } from 'node:os';
import { createAttention } from '../../web/src/index.js';
import { loadModel } from '../../web/src/models/index.js';
import { comparePairs, formatRatio, loadAverage } from '../compare/stats.js';
import { causalMask, maxDifference, median, textOfTokens } from './forward-core.js';
import { argmax, ortGreedy } from './generate-core.js';

const { values } = parseArgs({
  options: {
    models: { type: 'string', default: 'gpt2,qwen2' },
    dtypes: { type: 'string', default: 'f32,f16,q8' },
    sizes: { type: 'string', default: '64,256' },
    prompt: { type: 'string', default: '32' },
    steps: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '5' },
    ort: { type: 'string', default: 'q8,int8,q4' },
    backend: { type: 'string', default: 'wasm-simd' },
  },
});
const list = (text) => text.split(',').filter(Boolean);
const build = new URL('build/', import.meta.url);
const ort = await import('../peers/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs');
ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';

// The onnxruntime graphs per model: forward and decode files of each int8 form (GPT-2 only).
const MODELS = {
  gpt2: {
    folder: 'gpt2-small',
    title: 'GPT-2 small shape (12 layers, 12 heads, 768 wide, vocab 50257)',
    ort: {
      q8: {
        forward: 'gpt2-small-q8.onnx',
        decode: 'gpt2-small-q8-decode.onnx',
        label: 'MatMulNBits 8-bit',
      },
      int8: {
        forward: 'gpt2-small-int8.onnx',
        decode: 'gpt2-small-int8-decode.onnx',
        label: 'MatMulInteger',
      },
      q4: {
        forward: 'gpt2-small-q4.onnx',
        decode: 'gpt2-small-q4-decode.onnx',
        label: 'MatMulNBits 4-bit',
      },
    },
  },
  qwen2: {
    folder: 'qwen2.5-0.5b-shape',
    title: 'Qwen2.5-0.5B shape (24 layers, 14 heads / 2 KV heads, 896 wide, vocab 151936)',
    ort: {},
  },
};

const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

/** Runs `sides` (each { name, call: async () => ms }) `rounds` times, rotating who goes first. */
async function alternate(sides, rounds) {
  const times = sides.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < sides.length; i++) {
      const s = (r + i) % sides.length;
      times[s].push(await sides[s].call());
    }
  }
  return times;
}

/** One line per side: median and best, and its time against the first side's, pair by pair. */
function report(sides, times, extra) {
  for (let s = 0; s < sides.length; s++) {
    const pairs = comparePairs(times[0], times[s]);
    console.log(
      `  ${sides[s].name.padEnd(40)} ${median(times[s]).toFixed(1).padStart(8)} ms ` +
        `(best ${Math.min(...times[s]).toFixed(1)})  time / ${sides[0].name}'s ` +
        `${formatRatio(pairs)}${extra(s)}`,
    );
  }
}

async function benchModel(key) {
  const spec = MODELS[key];
  const folder = fileURLToPath(new URL(`${spec.folder}/`, build));
  const models = [];
  for (const dtype of list(values.dtypes)) {
    const attention = await createAttention({ backend: values.backend, threads: 1, models: true });
    const t0 = performance.now();
    try {
      const model = await loadModel(folder, { attention, dtype });
      const loadMs = performance.now() - t0;
      models.push({ dtype, model, attention });
      console.log(
        `  loaded dtype ${dtype}: ${mib(model.info.bytes)} of weights in wasm memory, ` +
          `${(loadMs / 1000).toFixed(1)} s to load`,
      );
    } catch (error) {
      attention.dispose();
      console.log(`  dtype ${dtype} does not load: ${error.code ?? ''} ${error.message}`);
    }
  }
  if (models.length === 0) throw new Error(`no dtype of ${values.dtypes} loads ${spec.folder}`);
  const sessions = [];
  for (const kind of list(values.ort)) {
    const graph = spec.ort[kind];
    if (!graph) continue;
    const open = (file) =>
      ort.InferenceSession.create(readFileSync(new URL(file, build)), {
        executionProviders: ['wasm'],
        graphOptimizationLevel: 'all',
      });
    sessions.push({
      kind,
      label: graph.label,
      forward: await open(graph.forward),
      decode: graph.decode ? await open(graph.decode) : null,
    });
  }
  const { layers, heads, headDim } = models[0].model.info;
  const rounds = Number(values.rounds);

  for (const n of list(values.sizes).map(Number)) {
    const text = textOfTokens(n);
    const ids = models[0].model.tokenizer.encode(text).ids;
    const feeds = {
      ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [ids.length]),
      positions: new ort.Tensor(
        'int64',
        BigInt64Array.from(ids, (_, i) => BigInt(i)),
        [ids.length],
      ),
      causal_mask: new ort.Tensor('float32', causalMask(ids.length), [ids.length, ids.length]),
    };
    const sides = [
      ...models.map(({ dtype, model }) => ({
        name: `attnlens ${dtype}`,
        once: async () => {
          const run = await model.run(text, { returnLogits: false, topK: 1 });
          return { attention: run.attention, top: run.predictions[0].id };
        },
      })),
      ...sessions.map((session) => ({
        name: `onnxruntime-web ${session.kind} (${session.label})`,
        twin: `attnlens ${session.kind}`,
        once: async () => {
          const out = await session.forward.run(feeds);
          return { attention: out.attention.data, top: argmax(out.logits.data) };
        },
      })),
    ];
    for (const side of sides) {
      side.call = async () => {
        const t0 = performance.now();
        await side.once();
        return performance.now() - t0;
      };
    }
    // One untimed call each (compilation, first allocations) gives the agreement.
    const outputs = [];
    for (const side of sides) outputs.push(await side.once());
    // Against the first side (f32), and an int8 graph against attnlens on the same weights.
    const against = (s, r) =>
      `attention max |diff| ${maxDifference(outputs[r].attention, outputs[s].attention).toExponential(1)}, ` +
      `top-1 same: ${outputs[s].top === outputs[r].top}`;
    const agreement = (s) => {
      const twin = sides.findIndex((side) => side.name === sides[s].twin);
      return `; ${against(s, 0)}${twin > 0 ? `; against ${sides[twin].name}: ${against(s, twin)}` : ''}`;
    };
    console.log(
      `forward, N = ${ids.length} tokens (${rounds} rounds), load ${await loadAverage()}`,
    );
    report(sides, await alternate(sides, rounds), agreement);
  }

  // Decode: the prompt's first `prompt` tokens, then `steps` timed steps.
  const promptTokens = Number(values.prompt);
  const steps = Number(values.steps);
  const text = textOfTokens(promptTokens);
  const promptIds = models[0].model.tokenizer.encode(text).ids;
  const sides = [
    ...models.map(({ dtype, model }) => ({
      name: `attnlens ${dtype}`,
      once: async () => {
        const stamps = [];
        const result = await model.generate(text, {
          maxTokens: steps + 1,
          temperature: 0,
          onToken: () => stamps.push(performance.now()),
        });
        return { ids: result.ids, stamps };
      },
    })),
    ...sessions
      .filter((s) => s.decode)
      .map((session) => ({
        name: `onnxruntime-web ${session.kind} (${session.label})`,
        once: () => ortGreedy(ort, session.decode, promptIds, steps + 1, layers, heads, headDim),
      })),
  ];
  const outputs = [];
  for (const side of sides) {
    side.call = async () => {
      const { stamps } = await side.once();
      return median(stamps.slice(1).map((t, i) => t - stamps[i]));
    };
    outputs.push(await side.once());
  }
  const same = (s) => {
    const matching = outputs[s].ids.filter((id, i) => id === outputs[0].ids[i]).length;
    return `; greedy tokens the same as ${sides[0].name}'s: ${matching} of ${outputs[0].ids.length}`;
  };
  console.log(
    `decode step (median of ${steps} steps a call, ${rounds} rounds) after a ${promptIds.length}-token ` +
      `prompt, load ${await loadAverage()}`,
  );
  report(sides, await alternate(sides, rounds), same);

  for (const { model, attention } of models) {
    model.dispose();
    attention.dispose();
  }
  for (const session of sessions) {
    await session.forward.release?.();
    await session.decode?.release?.();
  }
}

console.log(
  `Node ${process.version}, ${values.backend}, one thread; onnxruntime-web ` +
    `${ort.env.versions?.web ?? ''} (wasm EP); ${cpus()[0]?.model ?? ''}; ` +
    `${new Date().toISOString()}`,
);
for (const key of list(values.models)) {
  if (!MODELS[key]) throw new Error(`--models: ${key} is not one of ${Object.keys(MODELS)}`);
  console.log(MODELS[key].title);
  await benchModel(key);
}
