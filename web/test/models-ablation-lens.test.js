// Head ablation, headEffects() and the logit lens against the independent PyTorch reference
// (tests/models/reference.py, which zeroes or averages a head's merged-heads columns before the
// output projection, and puts every hidden state through the final norm and LM head):
// GPT-2, llama (untied head, grouped K/V) and BERT (its MLM transform) tiny fixtures.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAttention } from '../src/index.js';
import { loadModel } from '../src/models/index.js';
import { assertClose, referenceForward, rejectsWith, tinyModel } from './support/tiny-models.mjs';

const LOGIT_TOL = { abs: 5e-5, rel: 2e-5 };
const PROBABILITY_TOL = { abs: 2e-6, rel: 1e-5 };
const FIXTURES = [
  { name: 'gpt2', text: 'The quick brown fox jumps' },
  { name: 'llama-untied', text: 'Once upon a time there was' },
  { name: 'bert', text: 'the cat [MASK] on the mat' },
];
const ABLATIONS = {
  zero: [{ layer: 1, head: 2, mode: 'zero' }],
  mean: [{ layer: 0, head: 1, mode: 'mean' }],
  both: [
    { layer: 0, head: 0, mode: 'zero' },
    { layer: 1, head: 1, mode: 'mean' },
  ],
};

let attention;
const models = new Map();

before(async () => {
  attention = await createAttention({ backend: 'wasm-simd', models: true });
  for (const { name } of FIXTURES)
    models.set(name, await loadModel(tinyModel(name), { attention }));
});

after(() => {
  for (const model of models.values()) model.dispose();
  attention.dispose();
});

const idsOf = (run) => run.tokens.map((t) => t.id);
const typesOf = (model, run) => (model.info.causal ? null : run.tokens.map((t) => t.segment));
const triples = (list) => list.map(({ layer, head, mode }) => [layer, head, mode]);

test('an ablated head (zero, mean, both) gives the reference logits with it ablated', async () => {
  const runs = [];
  for (const { name, text } of FIXTURES) {
    const model = models.get(name);
    for (const [kind, ablate] of Object.entries(ABLATIONS)) {
      const result = await model.run(text, { ablate, returnLogits: true });
      assert.deepEqual(result.ablated, ablate);
      runs.push({ name, kind, model, result, ablate });
    }
  }
  // One reference process: each run with its ablations, then each without.
  const cases = runs.map(({ name, model, result, ablate }) => ({
    folder: tinyModel(name),
    ids: idsOf(result),
    types: typesOf(model, result),
    ablate: triples(ablate),
  }));
  const answers = referenceForward([...cases, ...cases.map((c) => ({ ...c, ablate: [] }))]);
  const expected = answers.slice(0, runs.length);
  const clean = answers.slice(runs.length);
  runs.forEach(({ name, kind, result }, i) => {
    const label = `${name} ${kind}`;
    assertClose(result.logits, expected[i].logits, LOGIT_TOL, `${label} logits`);
    // The ablation moves the logits, so matching the ablated reference says something.
    const moved = Math.max(...expected[i].logits.map((v, j) => Math.abs(v - clean[i].logits[j])));
    assert.ok(moved > 1e-3, `${label}: the ablation changed the logits by only ${moved}`);
  });
});

test("every layer's logit lens is the reference's top tokens and probabilities", async () => {
  const runs = [];
  for (const { name, text } of FIXTURES) {
    const model = models.get(name);
    runs.push({ name, model, result: await model.run(text, { lens: { topK: 3 } }) });
  }
  const expected = referenceForward(
    runs.map(({ name, model, result }) => ({
      folder: tinyModel(name),
      ids: idsOf(result),
      types: typesOf(model, result),
      lens: true,
    })),
  );
  runs.forEach(({ name, model, result }, i) => {
    const { layers, vocab } = model.info;
    const n = result.tokens.length;
    const { lens } = result;
    assert.equal(lens.topK, 3);
    assert.equal(lens.ids.length, (layers + 1) * n * 3);
    assert.equal(lens.top.length, layers + 1);
    for (let state = 0; state <= layers; state++) {
      for (let position = 0; position < n; position++) {
        const row = expected[i].lens.slice(
          (state * n + position) * vocab,
          (state * n + position + 1) * vocab,
        );
        const max = Math.max(...row);
        const sum = row.reduce((s, v) => s + Math.exp(v - max), 0);
        const p = row.map((v) => Math.exp(v - max) / sum);
        const ranked = p.map((_, id) => id).sort((a, b) => p[b] - p[a] || a - b);
        const label = `${name} state ${state} position ${position}`;
        const mine = lens.top[state][position];
        for (let j = 0; j < 3; j++) {
          // The same token, or one the reference holds equally likely (a float32 near-tie).
          const id = mine[j].id;
          assert.ok(
            id === ranked[j] || Math.abs(p[id] - p[ranked[j]]) < 1e-6,
            `${label} rank ${j}: ${id}, reference ${ranked[j]}`,
          );
          assertClose([mine[j].p], [p[id]], PROBABILITY_TOL, `${label} rank ${j} p`);
          assert.equal(lens.ids[(state * n + position) * 3 + j], id);
          assert.equal(typeof mine[j].text, 'string');
        }
      }
    }
  });
});

test('headEffects ranks the heads as the reference does', async () => {
  const model = models.get('gpt2');
  const text = FIXTURES[0].text;
  const effects = await model.headEffects(text);
  const { layers, heads, vocab } = model.info;
  const clean = await model.run(text, { returnLogits: true });
  const n = clean.tokens.length;
  assert.equal(effects.position, n - 1);
  assert.equal(effects.target.id, clean.predictions[0].id);
  assert.equal(effects.heads.length, layers * heads);
  assert.equal(effects.forwards, 1 + layers * heads);
  const cases = [{ ablate: [] }];
  for (let layer = 0; layer < layers; layer++) {
    for (let head = 0; head < heads; head++) cases.push({ ablate: [[layer, head, 'zero']] });
  }
  const reference = referenceForward(
    cases.map(({ ablate }) => ({ folder: tinyModel('gpt2'), ids: idsOf(clean), ablate })),
  );
  const logProb = ({ logits }) => {
    const row = logits.slice((n - 1) * vocab, n * vocab);
    const max = Math.max(...row);
    return row[effects.target.id] - max - Math.log(row.reduce((s, v) => s + Math.exp(v - max), 0));
  };
  const base = logProb(reference[0]);
  assertClose([effects.logProb], [base], LOGIT_TOL, 'clean log-probability');
  const expected = cases.slice(1).map(({ ablate: [[layer, head]] }, i) => ({
    layer,
    head,
    delta: logProb(reference[i + 1]) - base,
  }));
  expected.sort((a, b) => a.delta - b.delta);
  effects.heads.forEach((mine, rank) => {
    const theirs = expected[rank];
    const label = `rank ${rank}: layer ${mine.layer} head ${mine.head}`;
    // The same head at each rank, unless two heads' effects are a float32 near-tie.
    assert.ok(
      (mine.layer === theirs.layer && mine.head === theirs.head) ||
        Math.abs(mine.delta - theirs.delta) < 1e-4,
      `${label}, reference layer ${theirs.layer} head ${theirs.head}`,
    );
    assertClose([mine.delta], [theirs.delta], LOGIT_TOL, `${label} delta`);
  });
  // A given target: a token id, or a string of one token.
  const byId = await model.headEffects(text, { target: effects.heads[0].top.id });
  assert.equal(byId.target.id, effects.heads[0].top.id);
  const word = clean.predictions.find((p, i) => i > 0 && /^ ?[a-z]+$/i.test(p.text));
  const byText = await model.headEffects(text, { target: word.text });
  assert.equal(byText.target.id, word.id);
});

test('bad ablations, lens and headEffects options are TypeErrors and RangeErrors', async () => {
  const model = models.get('gpt2');
  const run = (options) => model.run('The fox', options);
  await rejectsWith(run({ ablate: { layer: 0, head: 0 } }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'ablate',
  });
  await rejectsWith(run({ ablate: [{ layer: 2, head: 0 }] }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'ablate[0].layer',
  });
  await rejectsWith(run({ ablate: [{ layer: 0, head: 3 }] }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'ablate[0].head',
  });
  await rejectsWith(run({ ablate: [{ layer: 0, head: 0, mode: 'half' }] }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'ablate[0].mode',
  });
  await rejectsWith(run({ ablate: [{ layer: 0, head: 0, mode: 0 }] }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'ablate[0].mode',
  });
  await rejectsWith(
    run({
      ablate: [
        { layer: 1, head: 1 },
        { layer: 1, head: 1, mode: 'mean' },
      ],
    }),
    {
      name: 'RangeError',
      code: 'out_of_range',
      parameter: 'ablate[1]',
      message: /listed twice/,
    },
  );
  await rejectsWith(run({ ablate: [{ layer: 0, head: 0, heads: 2 }] }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'ablate[0]',
  });
  await rejectsWith(run({ lens: 'yes' }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'lens',
  });
  await rejectsWith(run({ lens: { topK: 0 } }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'lens.topK',
  });
  await rejectsWith(model.headEffects('The fox', { target: 'quick brown fox' }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'target',
  });
  await rejectsWith(model.headEffects('The fox', { target: model.info.vocab }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'target',
  });
  await rejectsWith(model.headEffects('The fox', { target: {} }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'target',
  });
  const bert = models.get('bert');
  await rejectsWith(bert.headEffects('the cat sat'), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'text',
  });
  // Still usable, and a BERT [MASK] is where headEffects looks by default.
  const effects = await bert.headEffects('the cat [MASK] on the mat');
  assert.equal(effects.heads.length, bert.info.layers * bert.info.heads);
  assert.equal((await run({ lens: true })).lens.topK, 5);
});
