// attnlens/train in Node (its worker is a worker_threads Worker): training and its events,
// determinism, pause / resume / step, the checkpoint that loadModel() reads back with the same
// attention, every vocabulary, parameters, and the option checks.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadModel, createTokenizer } from '../src/models/index.js';
import {
  createTrainer,
  headScores,
  repeatedRandomSequences,
  SAMPLE_TEXTS,
} from '../src/train/index.js';
import { tokenizerFolder } from './support/model-fixtures.mjs';

const SMALL = { layers: 2, heads: 2, width: 16, context: 24, backend: 'wasm-simd' };
const text = SAMPLE_TEXTS.en;
const bothTexts = `${SAMPLE_TEXTS.en}\n${SAMPLE_TEXTS.zh}`;

function rejectsWith(promise, ErrorClass, code, parameter) {
  return assert.rejects(promise, (error) => {
    assert.ok(error instanceof ErrorClass, `${error.name}: ${error.message}`);
    assert.equal(error.code, code, error.message);
    assert.equal(error.parameter, parameter, error.message);
    assert.ok(error.message.startsWith(`${parameter}: `), error.message);
    return true;
  });
}

describe('training a small GPT', () => {
  let trainer;
  before(async () => {
    trainer = await createTrainer({ ...SMALL, vocabulary: { characters: bothTexts }, seed: 3 });
  });
  after(() => trainer.dispose());

  test('info describes the model and its vocabulary', () => {
    const { info } = trainer;
    assert.equal(info.layers, 2);
    assert.equal(info.vocabulary.kind, 'characters');
    assert.equal(info.vocabulary.size, new Set(Array.from(bothTexts)).size);
    assert.equal(info.mlpWidth, 64);
    assert.equal(info.backend, 'wasm-simd');
    assert.ok(info.parameters > 0);
  });

  test('every step is an event, snapshots come every k steps and at the start', async () => {
    const steps = [];
    const snapshots = [];
    const result = await trainer.train(text, {
      steps: 12,
      batchSize: 4,
      snapshotEvery: 5,
      onStep: (event) => steps.push(event),
      onSnapshot: (snapshot) => snapshots.push(snapshot),
    });
    assert.deepEqual(result, { steps: 12, loss: steps[11].loss, paused: false, remaining: 0 });
    assert.deepEqual(
      steps.map((s) => s.step),
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
    assert.ok(steps.every((s) => Number.isFinite(s.loss) && s.gradNorm > 0 && s.ms >= 0));
    assert.equal(steps[11].tokens, 12 * 4 * 24);
    assert.deepEqual(
      snapshots.map((s) => s.step),
      [0, 5, 10],
    );
    assert.equal(snapshots[0].loss, null);
    const [first] = snapshots;
    const n = first.ids.length;
    assert.equal(n, 24); // the corpus's first sequence
    assert.equal(first.attention.length, 2 * 2 * n * n);
    assert.equal(first.heads.length, 4);
    for (const head of first.heads) {
      assert.ok(head.entropy >= 0 && head.entropy <= Math.log(n));
      assert.ok(head.previousToken >= 0 && head.previousToken <= 1);
    }
    assert.equal(first.tokens.map((t) => t.text).join(''), text.slice(0, n));
    assert.equal(trainer.steps, 12);
    assert.equal(trainer.losses.length, 12);
    assert.equal(trainer.loss, steps[11].loss);
    assert.equal(trainer.snapshots.length, 3);
  });

  test('attention of any text in the vocabulary, and its tokens', async () => {
    const r = await trainer.attention('模型 the model');
    const n = 12;
    assert.equal(r.tokens.length, n);
    assert.deepEqual(r.tokens[1], { id: r.tokens[1].id, text: '型', start: 1, end: 2 });
    assert.equal(r.attention.length, 2 * 2 * n * n);
    for (let row = 0; row < 2 * 2 * n; row++) {
      let sum = 0;
      for (let j = 0; j < n; j++) sum += r.attention[row * n + j];
      assert.ok(Math.abs(sum - 1) < 1e-5);
      for (let j = (row % n) + 1; j < n; j++) assert.equal(r.attention[row * n + j], 0);
    }
    assert.equal(r.heads.length, 4);
    await rejectsWith(trainer.attention('€'), RangeError, 'out_of_range', 'text');
    await rejectsWith(trainer.attention('x'.repeat(25)), RangeError, 'out_of_range', 'text');
  });

  test('step() takes one step; train() or step() during a run is busy', async () => {
    const event = await trainer.step();
    assert.equal(event.step, 13);
    const run = trainer.train(text, { steps: 50, batchSize: 2, snapshotEvery: 0 });
    await assert.rejects(trainer.step(), (e) => e.code === 'busy' && e.parameter === 'step');
    await assert.rejects(trainer.train(text), (e) => e.code === 'busy');
    await trainer.pause();
    const result = await run;
    assert.equal(result.paused, true);
    assert.equal(result.steps + result.remaining, 13 + 50);
    const resumed = await trainer.resume();
    assert.deepEqual([resumed.steps, resumed.paused, resumed.remaining], [63, false, 0]);
  });
});

test('a seed gives the same losses, whether a run is paused or not', async () => {
  const config = { ...SMALL, vocabulary: 'bytes', seed: 9 };
  const options = { steps: 20, batchSize: 3, learningRate: 1e-2, snapshotEvery: 0 };
  const [a, b] = await Promise.all([createTrainer(config), createTrainer(config)]);
  try {
    await a.train(text, options);
    let pauses = 0;
    const run = b.train(text, {
      ...options,
      onStep: (event) => {
        if (event.step % 7 === 0 && pauses++ < 2) b.pause();
      },
    });
    let result = await run;
    while (result.paused) result = await b.resume();
    assert.ok(pauses >= 1);
    assert.deepEqual(b.losses, a.losses);
    assert.ok(a.losses[19] < a.losses[0]);
  } finally {
    a.dispose();
    b.dispose();
  }
});

describe('save() writes a checkpoint loadModel() reads back with the same attention', () => {
  for (const [name, vocabulary, config] of [
    ['characters, attention-only', { characters: bothTexts }, { attentionOnly: true }],
    ['bytes, with MLP', 'bytes', {}],
  ]) {
    test(name, async () => {
      const trainer = await createTrainer({ ...SMALL, vocabulary, ...config });
      try {
        await trainer.train(bothTexts, { steps: 5, batchSize: 2, snapshotEvery: 0 });
        const files = await trainer.save();
        assert.deepEqual(files.map((f) => f.name).sort(), [
          'config.json',
          'model.safetensors',
          'tokenizer.json',
        ]);
        const model = await loadModel(files);
        try {
          const probe = '模型 attention';
          const ours = await trainer.attention(probe);
          const run = await model.run(probe);
          assert.deepEqual(
            run.tokens.map((t) => t.id),
            ours.tokens.map((t) => t.id),
          );
          assert.deepEqual(run.attention, ours.attention); // the same ops: the same bits
        } finally {
          model.dispose();
        }
      } finally {
        trainer.dispose();
      }
    });
  }

  test('a temperature is folded into the query projection', async () => {
    const trainer = await createTrainer({ ...SMALL, vocabulary: 'bytes', attentionOnly: true });
    try {
      await trainer.train(text, {
        steps: 4,
        batchSize: 2,
        snapshotEvery: 0,
        temperatureSchedule: { from: 4, to: 0.5, steps: 3 },
      });
      assert.equal(trainer.temperature, 0.5);
      const model = await loadModel(await trainer.save());
      try {
        const ours = await trainer.attention('temperature');
        const sharp = await trainer.attention('temperature', { temperature: 1 });
        const run = await model.run('temperature');
        let worst = 0;
        for (let i = 0; i < run.attention.length; i++) {
          worst = Math.max(worst, Math.abs(run.attention[i] - ours.attention[i]));
        }
        assert.ok(worst < 1e-5, `worst ${worst}`);
        assert.notDeepEqual(sharp.attention, ours.attention);
      } finally {
        model.dispose();
      }
    } finally {
      trainer.dispose();
    }
  });

  test("a loaded model's tokenizer as the vocabulary", async () => {
    const folder = join(tokenizerFolder(), 'tiny-gpt2');
    const read = (file) => JSON.parse(readFileSync(join(folder, file), 'utf8'));
    const tokenizer = await createTokenizer({
      json: read('tokenizer.json'),
      config: read('tokenizer_config.json'),
    });
    const trainer = await createTrainer({ ...SMALL, vocabulary: { tokenizer } });
    try {
      assert.equal(trainer.info.vocabulary.size, tokenizer.vocabSize);
      await trainer.train('the cat sat on the mat and the cat sat', { steps: 2, batchSize: 2 });
      const files = await trainer.save();
      assert.ok(files.some((f) => f.name === 'tokenizer_config.json'));
      const model = await loadModel(files);
      try {
        const ours = await trainer.attention('the cat sat');
        assert.deepEqual((await model.run('the cat sat')).attention, ours.attention);
      } finally {
        model.dispose();
      }
    } finally {
      trainer.dispose();
    }
  });
});

// The logits of an attention-only GPT, in double, from the trainer's parameters (GPT-2's blocks;
// ln_f only with finalNorm).
function referenceLogits(parameters, ids, { heads, finalNorm }) {
  const p = Object.fromEntries(parameters.map((t) => [t.name, t]));
  const [vocab, width] = p.token_embedding.shape;
  const d = width / heads;
  const n = ids.length;
  const norm = (x, name) =>
    x.map((row) => {
      const mean = row.reduce((s, v) => s + v, 0) / width;
      const variance = row.reduce((s, v) => s + (v - mean) ** 2, 0) / width;
      return row.map(
        (v, j) =>
          ((v - mean) / Math.sqrt(variance + 1e-5)) * p[`${name}.weight`].data[j] +
          p[`${name}.bias`].data[j],
      );
    });
  const linear = (x, name, out) =>
    x.map((row) =>
      Array.from({ length: out }, (_, j) =>
        row.reduce(
          (s, v, i) => s + v * p[`${name}.weight`].data[i * out + j],
          p[`${name}.bias`].data[j],
        ),
      ),
    );
  let x = ids.map((id, t) =>
    Array.from(
      { length: width },
      (_, j) => p.token_embedding.data[id * width + j] + p.position_embedding.data[t * width + j],
    ),
  );
  for (let l = 0; p[`layers.${l}.attention_norm.weight`]; l++) {
    const qkv = linear(
      norm(x, `layers.${l}.attention_norm`),
      `layers.${l}.attention.qkv`,
      3 * width,
    );
    const merged = x.map(() => new Array(width).fill(0));
    for (let h = 0; h < heads; h++) {
      for (let i = 0; i < n; i++) {
        const logits = [];
        for (let j = 0; j <= i; j++) {
          let dot = 0;
          for (let e = 0; e < d; e++) dot += qkv[i][h * d + e] * qkv[j][width + h * d + e];
          logits.push(dot / Math.sqrt(d));
        }
        const top = Math.max(...logits);
        const weights = logits.map((v) => Math.exp(v - top));
        const sum = weights.reduce((s, v) => s + v, 0);
        for (let j = 0; j <= i; j++) {
          for (let e = 0; e < d; e++) {
            merged[i][h * d + e] += (weights[j] / sum) * qkv[j][2 * width + h * d + e];
          }
        }
      }
    }
    const out = linear(merged, `layers.${l}.attention.output`, width);
    x = x.map((row, i) => row.map((v, j) => v + out[i][j]));
  }
  if (finalNorm) x = norm(x, 'final_norm');
  return x.map((row) =>
    Array.from({ length: vocab }, (_, v) =>
      row.reduce((s, value, j) => s + value * p.token_embedding.data[v * width + j], 0),
    ),
  );
}

describe('without the final layer norm (finalNorm: false)', () => {
  for (const finalNorm of [false, true]) {
    test(`finalNorm ${finalNorm}: save() and loadModel() give the reference logits`, async () => {
      const trainer = await createTrainer({
        ...SMALL,
        vocabulary: { characters: text },
        attentionOnly: true,
        finalNorm,
        tokenEmbeddingStd: 0.2,
      });
      try {
        assert.equal(trainer.info.finalNorm, finalNorm);
        assert.equal(trainer.info.tokenEmbeddingStd, 0.2);
        await trainer.train(text, { steps: 3, batchSize: 2, snapshotEvery: 0 });
        const parameters = await trainer.parameters();
        const names = parameters.map((t) => t.name);
        assert.equal(names.includes('final_norm.weight'), finalNorm);
        const embedding = parameters.find((t) => t.name === 'token_embedding').data;
        const rms = Math.sqrt(embedding.reduce((s, v) => s + v * v, 0) / embedding.length);
        assert.ok(rms > 0.15 && rms < 0.25, `token embedding rms ${rms}`);
        const files = await trainer.save();
        const config = JSON.parse(await files.find((f) => f.name === 'config.json').text());
        assert.equal(config.attnlens.finalNorm, finalNorm);
        const model = await loadModel(files);
        try {
          const probe = 'the model';
          const run = await model.run(probe, { returnLogits: true });
          const ids = run.tokens.map((t) => t.id);
          const expected = referenceLogits(parameters, ids, { heads: SMALL.heads, finalNorm });
          let worst = 0;
          expected.forEach((row, i) =>
            row.forEach((v, j) => {
              worst = Math.max(worst, Math.abs(run.logits[i * row.length + j] - v));
            }),
          );
          assert.ok(worst < 1e-4, `largest logit difference ${worst}`);
        } finally {
          model.dispose();
        }
      } finally {
        trainer.dispose();
      }
    });
  }

  test("config.json's attnlens.finalNorm is checked", async () => {
    const trainer = await createTrainer({ ...SMALL, vocabulary: 'bytes', attentionOnly: true });
    try {
      const files = await trainer.save();
      const config = JSON.parse(await files.find((f) => f.name === 'config.json').text());
      for (const bad of [{ finalNorm: 'no' }, 'attnlens']) {
        const edited = files.map((f) =>
          f.name === 'config.json'
            ? new File([JSON.stringify({ ...config, attnlens: bad })], 'config.json')
            : f,
        );
        await assert.rejects(loadModel(edited), (error) => {
          assert.ok(error instanceof TypeError, error.message);
          assert.match(error.message, /attnlens/);
          return true;
        });
      }
    } finally {
      trainer.dispose();
    }
  });
});

describe('repeated random sequences and head scores', () => {
  test('a seed gives the same sequences, each repeated at a random offset', () => {
    const corpus = repeatedRandomSequences({ length: { min: 4, max: 6 }, seed: 5 });
    const a = corpus.sample(3, 20, 64);
    assert.deepEqual(
      a,
      repeatedRandomSequences({ length: { min: 4, max: 6 }, seed: 5 }).sample(3, 20, 64),
    );
    assert.notDeepEqual(a, corpus.sample(4, 20, 64));
    // Some length L in [4, 6] and offset s make a[s + i] === a[s + L + i] for every i < L.
    const found = [4, 5, 6].some((L) =>
      Array.from({ length: 20 - 2 * L + 1 }, (_, s) => s).some((s) =>
        Array.from({ length: L }, (_, i) => i).every((i) => a[s + i] === a[s + L + i]),
      ),
    );
    assert.ok(found);
    assert.ok(a.every((id) => id >= 0 && id < 64));
  });

  test('head scores of known patterns', () => {
    const ids = [5, 6, 7, 5, 6, 7];
    const n = ids.length;
    const attention = new Float32Array(2 * n * n);
    for (let i = 0; i < n; i++) {
      attention[i * n + Math.max(i - 1, 0)] = 1; // head 0: the previous token
      attention[n * n + i * n + (i >= 3 ? i - 2 : i)] = 1; // head 1: after the earlier copy
    }
    const [previous, induction] = headScores(attention, ids, 1, 2);
    assert.equal(previous.previousToken, 1);
    assert.equal(previous.label, 'previous-token');
    assert.equal(previous.entropy, 0);
    assert.equal(induction.induction, 1);
    assert.equal(induction.label, 'induction');
  });

  test('a trainer trains on them', async () => {
    const trainer = await createTrainer({ ...SMALL, vocabulary: 'bytes', attentionOnly: true });
    try {
      const corpus = repeatedRandomSequences({ length: { min: 4, max: 8 }, vocabularySize: 32 });
      const snapshots = [];
      await trainer.train(corpus, { steps: 3, batchSize: 2, onSnapshot: (s) => snapshots.push(s) });
      assert.equal(snapshots[0].ids.length, 24);
      assert.ok(snapshots[0].heads.every((h) => typeof h.induction === 'number'));
      await rejectsWith(
        trainer.train(repeatedRandomSequences({ length: 13 }), { steps: 1 }),
        RangeError,
        'out_of_range',
        'corpus',
      );
    } finally {
      trainer.dispose();
    }
  });
});

describe('parameters', () => {
  test('read with GPT-2 names, written back checked', async () => {
    const trainer = await createTrainer({ ...SMALL, vocabulary: 'bytes', attentionOnly: true });
    try {
      const parameters = await trainer.parameters();
      const names = parameters.map((p) => p.name);
      assert.equal(names[0], 'token_embedding');
      assert.ok(names.includes('layers.1.attention.qkv.weight'));
      assert.ok(!names.some((n) => n.includes('mlp')));
      const qkv = parameters.find((p) => p.name === 'layers.0.attention.qkv.weight');
      assert.deepEqual(qkv.shape, [16, 48]);
      const before = await trainer.attention('abc');
      await trainer.setParameters({ [qkv.name]: qkv.data.map((x) => x * 8) });
      assert.notDeepEqual((await trainer.attention('abc')).attention, before.attention);
      await rejectsWith(
        trainer.setParameters({ [qkv.name]: new Float32Array(3) }),
        RangeError,
        'shape_mismatch',
        qkv.name,
      );
      const bad = qkv.data.slice();
      bad[5] = NaN;
      await rejectsWith(
        trainer.setParameters({ [qkv.name]: bad }),
        RangeError,
        'non_finite',
        qkv.name,
      );
      await rejectsWith(
        trainer.setParameters({ nope: new Float32Array(1) }),
        TypeError,
        'invalid_argument',
        'nope',
      );
      await rejectsWith(trainer.setParameters({ x: [1] }), TypeError, 'invalid_argument', 'x');
    } finally {
      trainer.dispose();
    }
  });
});

describe('option checks', () => {
  test('createTrainer', async () => {
    await rejectsWith(createTrainer({ layer: 2 }), TypeError, 'invalid_argument', 'config');
    await rejectsWith(createTrainer({ heads: 3 }), RangeError, 'out_of_range', 'heads');
    await rejectsWith(createTrainer({ layers: 0 }), RangeError, 'out_of_range', 'layers');
    await rejectsWith(createTrainer({ width: '64' }), TypeError, 'invalid_argument', 'width');
    await rejectsWith(
      createTrainer({ vocabulary: 'words' }),
      TypeError,
      'invalid_argument',
      'vocabulary',
    );
    await rejectsWith(
      createTrainer({ vocabulary: { characters: '' } }),
      RangeError,
      'out_of_range',
      'vocabulary.characters',
    );
    await rejectsWith(createTrainer({ backend: 'webgpu' }), RangeError, 'out_of_range', 'backend');
    await rejectsWith(createTrainer({ threads: 0 }), RangeError, 'out_of_range', 'threads');
    await rejectsWith(createTrainer({ seed: -1 }), RangeError, 'out_of_range', 'seed');
    await rejectsWith(createTrainer({ finalNorm: 0 }), TypeError, 'invalid_argument', 'finalNorm');
    for (const std of [0, -0.1, 2, Number.NaN]) {
      await rejectsWith(
        createTrainer({ tokenEmbeddingStd: std }),
        RangeError,
        'out_of_range',
        'tokenEmbeddingStd',
      );
    }
    await rejectsWith(
      createTrainer({ tokenEmbeddingStd: '0.2' }),
      TypeError,
      'invalid_argument',
      'tokenEmbeddingStd',
    );
  });

  test('train, attention and save', async () => {
    const trainer = await createTrainer({ ...SMALL, vocabulary: { characters: 'abc' } });
    try {
      const bad = (options, ErrorClass, code, parameter, corpus = 'abcabc') =>
        rejectsWith(trainer.train(corpus, options), ErrorClass, code, parameter);
      await bad({ step: 3 }, TypeError, 'invalid_argument', 'options');
      await bad({ steps: 0 }, RangeError, 'out_of_range', 'steps');
      await bad({ batchSize: 1.5 }, RangeError, 'out_of_range', 'batchSize');
      await bad({ sequenceLength: 25 }, RangeError, 'out_of_range', 'sequenceLength');
      await bad({ learningRate: -1 }, RangeError, 'out_of_range', 'learningRate');
      await bad({ learningRate: null }, TypeError, 'invalid_argument', 'learningRate');
      await bad({ beta2: 1 }, RangeError, 'out_of_range', 'beta2');
      await bad({ temperatureSchedule: 0 }, RangeError, 'out_of_range', 'temperatureSchedule');
      await bad(
        { temperatureSchedule: { from: 2, to: 1 } },
        TypeError,
        'invalid_argument',
        'temperatureSchedule.steps',
      );
      await bad(
        { temperatureSchedule: { from: 2, to: 1, steps: 5, curve: 'cosine' } },
        RangeError,
        'out_of_range',
        'temperatureSchedule.curve',
      );
      await bad({ onStep: 'log' }, TypeError, 'invalid_argument', 'onStep');
      await bad({ probe: 'abcd' }, RangeError, 'out_of_range', 'probe');
      await bad({}, RangeError, 'out_of_range', 'corpus', '');
      await bad({}, RangeError, 'out_of_range', 'corpus', 'abd');
      await bad({}, TypeError, 'invalid_argument', 'corpus', 42);
      await bad({}, RangeError, 'out_of_range', 'corpus[1]', [0, 7]);
      await rejectsWith(trainer.step(), Error, 'busy', 'step'); // no run yet
      await rejectsWith(
        trainer.attention('abc', { temp: 1 }),
        TypeError,
        'invalid_argument',
        'options',
      );
      await rejectsWith(
        trainer.save({ temperature: 0 }),
        RangeError,
        'out_of_range',
        'temperature',
      );
      // Still usable after every error.
      assert.equal((await trainer.train('abcabcabc', { steps: 1, batchSize: 1 })).steps, 1);
    } finally {
      trainer.dispose();
    }
  });

  test('dispose() rejects pending calls and every later one', async () => {
    const trainer = await createTrainer({ ...SMALL, vocabulary: 'bytes' });
    const run = trainer.train(text, { steps: 1000 });
    trainer.dispose();
    await assert.rejects(run, (e) => e.code === 'disposed' && e.parameter === 'train');
    await assert.rejects(trainer.attention('a'), (e) => e.code === 'disposed');
    assert.throws(
      () => trainer.info,
      (e) => e.code === 'disposed',
    );
    // Every public member names itself.
    for (const member of ['info', 'steps', 'loss', 'losses', 'snapshots', 'temperature']) {
      assert.throws(() => trainer[member], { name: 'Error', code: 'disposed', parameter: member });
    }
    for (const method of ['train', 'resume', 'pause', 'step', 'attention', 'encode', 'save']) {
      await assert.rejects(trainer[method]('a'), { code: 'disposed', parameter: method });
    }
    await assert.rejects(trainer.parameters(), { code: 'disposed', parameter: 'parameters' });
    await assert.rejects(trainer.setParameters({}), {
      code: 'disposed',
      parameter: 'setParameters',
    });
    assert.throws(() => trainer.receive('step', { loss: 1, temperature: 1 }), {
      code: 'disposed',
      parameter: 'receive',
    });
    assert.equal(trainer.disposed, true);
  });
});
