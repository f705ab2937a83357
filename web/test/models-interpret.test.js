// model.run(text, { rollout, flow, sinks }) on the bundled stories260K and the tiny BERT: the
// readings equal interpret/'s functions on the run's own attention (which
// interpret-rollout-flow.test.js holds to a hand computation and a numpy reference), their
// defaults (the predicted position, BOS and [CLS]) and their errors, raised before the forward
// pass with the model still usable.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAttention } from '../src/index.js';
import {
  attentionFlow,
  attentionRollout,
  attentionSinks,
  FLOW_LIMITS,
  loadModel,
} from '../src/models/index.js';
import { rejectsWith, tinyModel } from './support/tiny-models.mjs';

const TEXT = 'Once upon a time, there was a little girl named Lily.';
let attention;
let story;

before(async () => {
  attention = await createAttention({ backend: 'wasm-simd', models: true });
  story = await loadModel('stories260K', { attention });
});
after(() => {
  story.dispose();
  attention.dispose();
});

test('stories260K: rollout, flow and sinks of a run', async () => {
  const run = await story.run(TEXT, { rollout: true, flow: true, sinks: true });
  const { layers, heads } = story.info;
  const n = run.tokens.length;
  const shape = { layers, heads, n };
  assert.deepEqual(
    run.rollout.positions,
    Array.from({ length: n }, (_, i) => i),
  );
  assert.deepEqual(run.rollout.values, attentionRollout(run.attention, shape));
  for (let p = 0; p < n; p++) {
    const row = run.rollout.values.subarray(p * n, (p + 1) * n);
    assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5, `rollout row ${p} sums to 1`);
    // Causal: nothing reaches back from a later token.
    assert.ok(
      row.subarray(p + 1).every((value) => value === 0),
      `rollout row ${p} is causal`,
    );
  }
  // Flow defaults to the last position, the one the model predicts from.
  assert.equal(run.flow.position, n - 1);
  assert.deepEqual(run.flow.values, attentionFlow(run.attention, shape));
  // llama2.c's tokenizer puts BOS first: the BOS share is the first token's.
  assert.equal(run.tokens[0].special, true);
  const sinks = attentionSinks(run.attention, shape, {
    bos: run.tokens.map((_, i) => i === 0),
  });
  assert.deepEqual(run.sinks, sinks);
  assert.deepEqual(run.sinks.bos, run.sinks.first);
  assert.equal(run.sinks.first.length, layers * heads);
  assert.equal(run.sinks.rows, n - 1);

  const picked = await story.run(TEXT, { rollout: [3, 1], flow: 2 });
  assert.deepEqual(picked.rollout.positions, [3, 1]);
  assert.deepEqual(picked.rollout.values.subarray(0, n), run.rollout.values.subarray(3 * n, 4 * n));
  assert.deepEqual(picked.flow.values, attentionFlow(run.attention, shape, { position: 2 }));
  assert.equal(picked.sinks, undefined);
  const plain = await story.run(TEXT, { rollout: false });
  assert.equal(plain.rollout, undefined);
});

test('BERT: flow from the [MASK], the sink share on [CLS]', async () => {
  const bert = await loadModel(tinyModel('bert'), { attention });
  const run = await bert.run('the cat [MASK] on the mat', { flow: true, sinks: true });
  const mask = run.tokens.findIndex((token) => token.text === '[MASK]');
  assert.ok(mask > 0);
  assert.equal(run.flow.position, mask);
  const shape = { layers: bert.info.layers, heads: bert.info.heads, n: run.tokens.length };
  assert.deepEqual(run.flow.values, attentionFlow(run.attention, shape, { position: mask }));
  const cls = run.tokens.map((token) => token.text === '[CLS]');
  assert.deepEqual(run.sinks, attentionSinks(run.attention, shape, { causal: false, bos: cls }));
  assert.equal(run.sinks.rows, run.tokens.length);
  bert.dispose();
});

test('errors name the option, before the forward pass; the model stays usable', async () => {
  const bad = [
    [{ rollout: 'yes' }, 'TypeError', 'rollout'],
    [{ rollout: [0, 999] }, 'RangeError', 'rollout[1]'],
    [{ rollout: [] }, 'TypeError', 'rollout'],
    [{ flow: 'last' }, 'TypeError', 'flow'],
    [{ flow: 999 }, 'RangeError', 'flow'],
    [{ sinks: 1 }, 'TypeError', 'sinks'],
  ];
  for (const [options, name, parameter] of bad) {
    const code = name === 'TypeError' ? 'invalid_argument' : 'out_of_range';
    await rejectsWith(story.run(TEXT, options), { name, code, parameter });
  }
  // Past the flow's cap on tokens: refused with the cap named.
  const long = Array.from({ length: FLOW_LIMITS.tokens }, () => 'the').join(' ');
  await rejectsWith(story.run(long, { flow: true }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'flow',
    message: /at most 256 tokens \(FLOW_LIMITS\)/,
  });
  const again = await story.run(TEXT, { flow: true });
  assert.equal(again.flow.values.length, again.tokens.length);
});
