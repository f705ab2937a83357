// The training benchmark (train.mjs runs it in headless Chromium; numbers printed, never
// asserted):
//
//   induction   a 2-layer attention-only model on repeated random sequences, for up to
//               `seconds`, with GPT-2's settings and with INDUCTION_MODEL's: the first snapshot at which some layer-2 head puts on average more
//               than half its weight on the token after the previous occurrence of each token
//               (headScores' induction score on the probe), its step and the time since the
//               run started; each head's mean row entropy at every snapshot (the figure).
//               INDUCTION_MODEL runs at temperature 1 and with a falling temperature.
//   throughput  the same model, batch and context trained by attnlens/train (in its worker) and
//               by TensorFlow.js's wasm backend (tfjs-gpt.js, on this page's thread, from the
//               same initial parameters on the same batches), one thread each: tokens per
//               second over timed steps after warm-up steps.

import { createTfjsGpt } from './tfjs-gpt.js';

export const MODEL = {
  layers: 2,
  heads: 4,
  width: 64,
  context: 32,
  attentionOnly: true,
  vocabulary: { characters: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-' },
  seed: 1,
  threads: 1,
};
// What grows an induction head: no final layer norm and a wider token embedding (docs/JS_API.md,
// "Induction heads"). The throughput runs keep MODEL, which tfjs-gpt.js implements.
export const INDUCTION_MODEL = { ...MODEL, finalNorm: false, tokenEmbeddingStd: 0.2 };
// lr 1e-3: at 3e-3 the induction head formed for some seeds only (docs/benchmarks.md).
export const TRAINING = {
  batchSize: 16,
  learningRate: 1e-3,
  weightDecay: 0,
  beta1: 0.9,
  beta2: 0.95,
  epsilon: 1e-8,
  maxGradNorm: 1,
};
export const SEQUENCES = { length: { min: 6, max: 16 }, repeats: 2, seed: 1 };
const SNAPSHOT_EVERY = 25;
const FALLING = { from: 4, to: 1, steps: 1500, curve: 'geometric' };

const now = () => performance.now();

async function inductionRun(api, { model, seconds, temperatureSchedule, log }) {
  const trainer = await api.createTrainer(model);
  const corpus = api.repeatedRandomSequences(SEQUENCES);
  const started = now();
  const snapshots = [];
  let found = null;
  let timer = null;
  const run = trainer.train(corpus, {
    ...TRAINING,
    steps: 1e6,
    snapshotEvery: SNAPSHOT_EVERY,
    temperatureSchedule,
    onSnapshot(snapshot) {
      const heads = snapshot.heads.map(({ layer, head, entropy, induction, previousToken }) => ({
        layer,
        head,
        entropy,
        induction,
        previousToken,
      }));
      snapshots.push({ step: snapshot.step, loss: snapshot.loss, ms: now() - started, heads });
      const best = heads
        .filter((h) => h.layer === MODEL.layers - 1)
        .sort((a, b) => b.induction - a.induction)[0];
      if (!found && best.induction > 0.5) {
        found = {
          step: snapshot.step,
          seconds: (now() - started) / 1000,
          head: best,
          loss: snapshot.loss,
        };
        log(
          `  induction head: layer 2 head ${best.head + 1} at step ${found.step}, ` +
            `${found.seconds.toFixed(1)} s (induction score ${best.induction.toFixed(2)})`,
        );
      }
    },
  });
  timer = setTimeout(() => trainer.pause(), seconds * 1000);
  const result = await run;
  clearTimeout(timer);
  const elapsed = (now() - started) / 1000;
  trainer.dispose();
  return { found, snapshots, steps: result.steps, seconds: elapsed, loss: result.loss };
}

async function attnlensThroughput(api, { warmup, steps }) {
  const trainer = await api.createTrainer(MODEL);
  const corpus = api.repeatedRandomSequences(SEQUENCES);
  await trainer.train(corpus, { ...TRAINING, steps: warmup, snapshotEvery: 0 });
  const started = now();
  await trainer.train(corpus, { ...TRAINING, steps, snapshotEvery: 0 });
  const ms = now() - started;
  const info = trainer.info;
  trainer.dispose();
  return { ms, tokensPerSecond: (steps * TRAINING.batchSize * MODEL.context) / (ms / 1000), info };
}

async function tfjsThroughput(api, tf, { warmup, steps, log }) {
  // The attnlens trainer's initial parameters and batches, so both train the same model.
  const trainer = await api.createTrainer(MODEL);
  const parameters = await trainer.parameters();
  const vocab = trainer.info.vocabulary.size;
  const reference = [];
  await trainer.train(api.repeatedRandomSequences(SEQUENCES), {
    ...TRAINING,
    steps: 3,
    snapshotEvery: 0,
    onStep: (e) => reference.push(e.loss),
  });
  trainer.dispose();
  const sequences = api.repeatedRandomSequences(SEQUENCES);
  const rowLength = MODEL.context + 1;
  const batch = (step) => {
    const out = new Int32Array(TRAINING.batchSize * rowLength);
    for (let r = 0; r < TRAINING.batchSize; r++) {
      out.set(sequences.sample(step * TRAINING.batchSize + r, rowLength, vocab), r * rowLength);
    }
    return out;
  };
  const model = createTfjsGpt(tf, { ...MODEL, vocab }, parameters);
  const first = [];
  for (let s = 0; s < 3; s++)
    first.push(await model.step(batch(s), TRAINING.batchSize, MODEL.context, TRAINING));
  const agreement = Math.max(...first.map((loss, i) => Math.abs(loss - reference[i])));
  log(
    `  TensorFlow.js's first losses ${first.map((l) => l.toFixed(4)).join(', ')}, attnlens' ` +
      `${reference.map((l) => l.toFixed(4)).join(', ')} (largest difference ${agreement.toExponential(1)})`,
  );
  for (let s = 3; s < 3 + warmup; s++)
    await model.step(batch(s), TRAINING.batchSize, MODEL.context, TRAINING);
  const started = now();
  for (let s = 0; s < steps; s++) {
    await model.step(batch(3 + warmup + s), TRAINING.batchSize, MODEL.context, TRAINING);
  }
  const ms = now() - started;
  model.dispose();
  return {
    ms,
    tokensPerSecond: (steps * TRAINING.batchSize * MODEL.context) / (ms / 1000),
    agreement,
  };
}

export async function runTrainingBenchmark({
  api,
  tf,
  tfjsDetail,
  seconds = 60,
  log = console.log,
}) {
  log(
    `model: ${MODEL.layers} layers, ${MODEL.heads} heads, width ${MODEL.width}, context ` +
      `${MODEL.context}, attention-only, ${MODEL.vocabulary.characters.length} tokens; batch ` +
      `${TRAINING.batchSize}, AdamW lr ${TRAINING.learningRate}; sequences of ` +
      `${SEQUENCES.length.min}-${SEQUENCES.length.max} tokens, repeated, at random offsets`,
  );
  log('throughput (tokens per second, one thread each):');
  const ours = await attnlensThroughput(api, { warmup: 5, steps: 60 });
  log(
    `  attnlens/train (${ours.info.backend}, worker): ${ours.tokensPerSecond.toFixed(0)} tokens/s`,
  );
  const theirs = await tfjsThroughput(api, tf, { warmup: 3, steps: 20, log });
  log(`  TensorFlow.js wasm (${tfjsDetail}): ${theirs.tokensPerSecond.toFixed(0)} tokens/s`);
  const ratio = ours.tokensPerSecond / theirs.tokensPerSecond;
  log(`  attnlens/train is ${ratio.toFixed(2)}x TensorFlow.js`);
  const runs = [];
  const falling = `temperature ${FALLING.from} falling to ${FALLING.to} over ${FALLING.steps} steps`;
  for (const [name, model, temperatureSchedule] of [
    ["GPT-2's settings (ln_f, token embedding std 0.02), temperature 1", MODEL, 1],
    ['no ln_f, token embedding std 0.2, temperature 1', INDUCTION_MODEL, 1],
    [`no ln_f, token embedding std 0.2, ${falling}`, INDUCTION_MODEL, FALLING],
  ]) {
    log(`induction, ${name}, up to ${seconds} s:`);
    const run = await inductionRun(api, { model, seconds, temperatureSchedule, log });
    if (!run.found)
      log(`  no induction head within ${run.seconds.toFixed(1)} s (${run.steps} steps)`);
    log(`  ${run.steps} steps in ${run.seconds.toFixed(1)} s, last loss ${run.loss.toFixed(3)}`);
    runs.push({ name, ...run });
  }
  return {
    model: MODEL,
    training: TRAINING,
    sequences: SEQUENCES,
    throughput: { ours, theirs, ratio },
    runs,
  };
}
