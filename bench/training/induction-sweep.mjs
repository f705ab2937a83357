#!/usr/bin/env node
// How fast a 2-layer attention-only model grows an induction head under a given training setup,
// in Node on one thread (numbers printed, never asserted): the trainer's core (core-trainer.js)
// stepped directly on batches of one of these corpora, and every `every` steps each layer-2
// head's induction score (headScores(), the benchmark's definition) averaged over held-out probes
// that are a random sequence of context / 2 tokens repeated once, with each head's favourite
// offsets (i - j) on the probes' second halves: a head at a fixed offset is positional, not an
// induction head.
//
//   corpus offset    repeatedRandomSequences(): one sequence of length in [minL, maxL], repeated
//                    right after itself at a random place among random tokens
//          gap       the same two copies with a random stretch of random tokens between them
//          periodic  one sequence repeated to fill the row
//          mixed     half the rows offset's, half random tokens where x[i] = (7 x[i-2] + 3) mod vocab
//                    three times in four (which rewards a previous-token head on its own)
//
//   node bench/training/induction-sweep.mjs [corpus=offset] [width=64] [heads=4] [context=32]
//     [vocab=64] [batch=16] [lr=3e-3] [beta2=0.95] [minL=6] [maxL=16] [steps=6000] [every=500]
//     [seconds=60] [seed=1] [finalNorm=1] [embedding=0.02]
//
// finalNorm=0 embedding=0.2 are the settings that grow an induction head (createTrainer's
// finalNorm: false, tokenEmbeddingStd: 0.2); GPT-2's own (1, 0.02) grow none in minutes.
import { createAttention, wasmBackendOf } from '../../web/src/attention.js';
import { CoreTrainer } from '../../web/src/train/core-trainer.js';
import { repeatedRandomSequences } from '../../web/src/train/corpora.js';
import { headScores } from '../../web/src/interpret/head-scores.js';
import { mulberry32 } from '../../web/src/text/hash.js';

const DEFAULTS = {
  corpus: 'offset',
  width: 64,
  heads: 4,
  context: 32,
  vocab: 64,
  batch: 16,
  lr: 3e-3,
  beta2: 0.95,
  minL: 6,
  maxL: 16,
  steps: 6000,
  every: 500,
  seconds: 60,
  seed: 1,
  finalNorm: 1,
  embedding: 0.02,
};
const P = { ...DEFAULTS };
for (const argument of process.argv.slice(2)) {
  const [key, value] = argument.split('=');
  if (!(key in DEFAULTS)) throw new Error(`unknown setting ${key} (known: ${Object.keys(P)})`);
  P[key] = key === 'corpus' ? value : Number(value);
}
if (P.context % 2 !== 0) throw new Error(`context must be even (the probes are two halves)`);
if (!(P.minL >= 1 && P.minL <= P.maxL && 2 * P.maxL <= P.context + 1)) {
  throw new Error('needs 1 <= minL <= maxL and two copies of maxL tokens within context + 1');
}
const LAYERS = 2;
const rowLength = P.context + 1;

const random = mulberry32(P.seed + 7);
const draw = (n) => Math.floor((random() / 4294967296) * n);
const sequences = repeatedRandomSequences({
  length: { min: P.minL, max: P.maxL },
  vocabularySize: P.vocab,
  seed: P.seed,
});
let sampled = 0;
const ROWS = {
  offset: () => sequences.sample(sampled++, rowLength, P.vocab),
  gap: () => {
    const row = Int32Array.from({ length: rowLength }, () => draw(P.vocab));
    const length = P.minL + draw(P.maxL - P.minL + 1);
    const free = rowLength - 2 * length;
    const before = draw(free + 1);
    const between = draw(free - before + 1);
    row.copyWithin(before + length + between, before, before + length);
    return row;
  },
  mixed: () => {
    if (draw(2) === 0) return sequences.sample(sampled++, rowLength, P.vocab);
    const row = Int32Array.from({ length: rowLength }, () => draw(P.vocab));
    for (let i = 2; i < rowLength; i++) if (draw(4) !== 0) row[i] = (row[i - 2] * 7 + 3) % P.vocab;
    return row;
  },
  periodic: () => {
    const length = P.minL + draw(P.maxL - P.minL + 1);
    const sequence = Array.from({ length }, () => draw(P.vocab));
    return Int32Array.from({ length: rowLength }, (_, i) => sequence[i % length]);
  },
};
const nextRow = ROWS[P.corpus];
if (!nextRow) throw new Error(`corpus must be one of ${Object.keys(ROWS)}`);

const probeRandom = mulberry32(999);
const probes = Array.from({ length: 8 }, () => {
  const half = Array.from({ length: P.context / 2 }, () =>
    Math.floor((probeRandom() / 4294967296) * P.vocab),
  );
  return Int32Array.from([...half, ...half]);
});

const engine = await createAttention({ backend: 'wasm-simd', threads: 1, models: true });
const core = new CoreTrainer(wasmBackendOf(engine, 'induction-sweep').module, {
  layers: LAYERS,
  heads: P.heads,
  width: P.width,
  context: P.context,
  vocab: P.vocab,
  attentionOnly: true,
  mlpWidth: 4 * P.width,
  seed: P.seed,
  finalNorm: P.finalNorm !== 0,
  tokenEmbeddingStd: P.embedding,
});

// Layer-2 induction scores and every head's three favourite offsets on the probes.
function measure() {
  const n = P.context;
  const induction = new Array(P.heads).fill(0);
  const offsets = Array.from({ length: LAYERS * P.heads }, () => new Float64Array(n));
  for (const ids of probes) {
    const attention = core.attention(ids, { temperature: 1, threads: 1 }, LAYERS * P.heads * n * n);
    for (const h of headScores(attention, ids, LAYERS, P.heads)) {
      if (h.layer === LAYERS - 1) induction[h.head] += h.induction / probes.length;
    }
    offsets.forEach((sums, index) => {
      for (let i = n / 2; i < n; i++) {
        for (let j = 0; j <= i; j++) sums[i - j] += attention[(index * n + i) * n + j];
      }
    });
  }
  const rows = probes.length * (n / 2);
  const favourite = offsets.map((sums) =>
    [...sums]
      .map((sum, offset) => [offset, sum / rows])
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([offset, share]) => `${offset}:${share.toFixed(2)}`)
      .join(' '),
  );
  return { induction, favourite };
}

console.log(JSON.stringify(P));
const started = performance.now();
let loss = null;
for (let step = 1; step <= P.steps; step++) {
  const tokens = new Int32Array(P.batch * rowLength);
  for (let b = 0; b < P.batch; b++) tokens.set(nextRow(), b * rowLength);
  const result = core.step(tokens, P.batch, {
    learningRate: P.lr,
    beta1: 0.9,
    beta2: P.beta2,
    epsilon: 1e-8,
    weightDecay: 0,
    maxGradNorm: 1,
    temperature: 1,
    threads: 1,
  });
  loss = loss === null ? result.loss : 0.9 * loss + 0.1 * result.loss;
  const seconds = (performance.now() - started) / 1000;
  if (step % P.every === 0 || step === P.steps || seconds > P.seconds) {
    const { induction, favourite } = measure();
    console.log(
      `step ${step}, ${seconds.toFixed(1)} s, loss ${loss.toFixed(3)}, layer-2 induction ` +
        induction.map((x) => x.toFixed(2)).join(' '),
    );
    if (seconds > P.seconds || step === P.steps) {
      favourite.forEach((text, index) =>
        console.log(
          `  layer ${Math.floor(index / P.heads) + 1} head ${(index % P.heads) + 1}: ${text}`,
        ),
      );
      break;
    }
  }
}
core.destroy();
engine.dispose();
