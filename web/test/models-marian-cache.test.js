// Marian decoding against KV caches in wasm memory (translate-decoder.js): the encoder runs once
// per translation (counted by the core's forward stats, not timed), each step runs one token,
// and beam search's per-beam caches give the reference's beam, score and the rows of every step
// that chose its tokens. Cross-attention surgery (translate()'s crossMask): each mask's rows are
// what it says (zero outside, summing to 1, 1/N for 'mean') and the greedy and beam outputs, rows
// and scores equal the PyTorch reference run with the same mask (tests/models/marian_reference.py).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { loadModel } from '../src/models/index.js';
import { assertClose } from './support/tiny-models.mjs';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
// As models-marian.test.js: float32 through 2 + 2 post-LN layers against float64.
const ATTENTION_TOL = { abs: 5e-6 };
const LOGIT_TOL = { abs: 5e-5, rel: 2e-5 };

let reference;
let model;

before(async () => {
  const folder = mkdtempSync(join(tmpdir(), 'attnlens-marian-cache-'));
  execFileSync('/usr/bin/python3', [join(REPO, 'tests/models/make_tiny_marian.py'), folder]);
  reference = JSON.parse(readFileSync(join(folder, 'marian-reference.json'), 'utf8'));
  model = await loadModel(join(folder, 'marian.safetensors'));
});

after(() => model?.dispose());

function assertRows(steps, expected, label) {
  assert.equal(steps.length, expected.length, `${label}: steps`);
  steps.forEach((step, i) => {
    const want = expected[i];
    assertClose(
      step.selfAttention,
      want.selfAttention.flat(2),
      ATTENTION_TOL,
      `${label} self ${i}`,
    );
    assertClose(step.crossAttention, want.crossAttention.flat(2), ATTENTION_TOL, `${label} x ${i}`);
    if (want.logits) assertClose(step.logits, want.logits, LOGIT_TOL, `${label}: logits ${i}`);
  });
}

test('the encoder runs once per translation and each step runs one token', async () => {
  const { text } = reference.sources[0];
  for (const beams of [1, 3]) {
    const result = await model.translate(text, { beams, maxTokens: reference.maxNewTokens });
    assert.equal(result.stats.encoderRuns, 1, `beams ${beams}`);
    // Greedy: one token per generated one but the last; beams: the first step once, then
    // one token per running beam and step.
    const generated = result.steps.length;
    if (beams === 1) assert.equal(result.stats.decoderTokens, generated);
    else {
      const after = result.stats.decoderTokens - 1;
      assert.ok(after % beams === 0 && after <= beams * (reference.maxNewTokens - 1), `${after}`);
    }
  }
});

test('per-beam caches give the reference beam, score and the rows of every step', async () => {
  for (const expected of reference.sources) {
    const result = await model.translate(expected.text, { maxTokens: reference.maxNewTokens });
    assert.deepEqual(result.ids, expected.beam, expected.text);
    assert.ok(Math.abs(result.score - expected.beamScore) < 1e-4, `${result.score}`);
    assertRows(result.steps, expected.beamSteps, `beam ${expected.text}`);
  }
});

// What a reader of onToken holds after each call: its tokens from `index` on are replaced.
function replay(calls) {
  const held = [];
  for (const step of calls) {
    assert.ok(step.index <= held.length, `index ${step.index} after ${held.length} tokens`);
    held.length = step.index;
    held.push(step);
  }
  return held;
}

test('beam search streams the leading beam through onToken as the lead changes', async () => {
  let revised = 0;
  for (const expected of reference.sources) {
    const calls = [];
    const result = await model.translate(expected.text, {
      beams: 3,
      maxTokens: reference.maxNewTokens,
      onToken: (step) => calls.push(step),
    });
    // Replayed, the calls give the translation's tokens and rows, the same objects' values.
    const held = replay(calls);
    assert.deepEqual(
      held.map((s) => s.id),
      result.ids.slice(1),
      expected.text,
    );
    held.forEach((step, i) => {
      assert.equal(step.text, result.steps[i].text);
      assert.deepEqual(step.crossAttention, result.steps[i].crossAttention);
      assert.deepEqual(step.selfAttention, result.steps[i].selfAttention);
    });
    revised += calls.filter((step, i) => i > 0 && step.index <= calls[i - 1].index).length;
  }
  // On these sources another beam takes the lead mid-search (its tokens replace the shown ones),
  // and the kept hypothesis replaces the last leader's last token by EOS.
  assert.ok(revised >= 2, `${revised} revisions`);
  // The first token arrives before the search ends: cancelling from onToken stops it.
  const controller = new AbortController();
  const seen = [];
  await assert.rejects(
    model.translate(reference.sources[0].text, {
      beams: 3,
      maxTokens: reference.maxNewTokens,
      signal: controller.signal,
      onToken: (step) => {
        seen.push(step);
        controller.abort();
      },
    }),
    { name: 'AbortError' },
  );
  assert.equal(seen.length, 1);
  assert.equal(seen[0].index, 0);
  // Greedy decoding's tokens come once each, in order.
  const greedy = [];
  await model.translate(reference.sources[0].text, {
    beams: 1,
    maxTokens: 6,
    onToken: (step) => greedy.push(step.index),
  });
  assert.deepEqual(
    greedy,
    greedy.map((_, i) => i),
  );
});

test('cross-attention surgery: rows as each mask says, outputs as the reference', async () => {
  const source = reference.sources[0];
  const n = source.inputIds.length;
  const full = await model.translate(source.text, { beams: 1, maxTokens: 8 });
  assert.equal(full.crossMask, 'full');
  for (const [mask, expected] of Object.entries(reference.crossMasks)) {
    const greedy = await model.translate(source.text, {
      beams: 1,
      maxTokens: reference.maxNewTokens,
      crossMask: mask,
      returnLogits: true,
    });
    assert.equal(greedy.crossMask, mask);
    assert.deepEqual(greedy.ids, expected.greedy, `${mask}: greedy ids`);
    assertRows(greedy.steps, expected.steps, `${mask} greedy`);
    greedy.steps.forEach((step, t) => {
      const centre = Math.min(t, n - 1);
      for (let row = 0; row < step.crossAttention.length / n; row++) {
        let sum = 0;
        for (let j = 0; j < n; j++) {
          const w = step.crossAttention[row * n + j];
          sum += w;
          const visible =
            mask === 'last' ? j === n - 1 : mask === 'local:1' ? Math.abs(j - centre) <= 1 : true;
          if (!visible) assert.equal(w, 0, `${mask}: step ${t} row ${row} key ${j}`);
          if (mask === 'mean') assert.ok(Math.abs(w - 1 / n) < 1e-6, `${mask}: ${w}`);
        }
        assert.ok(Math.abs(sum - 1) < 1e-5, `${mask}: step ${t} row ${row} sums to ${sum}`);
      }
    });
    // The surgery changes what the decoder computes (the rows here; the output for some).
    assert.notDeepEqual(greedy.steps[1].crossAttention, full.steps[1].crossAttention, mask);
    const beam = await model.translate(source.text, {
      maxTokens: reference.maxNewTokens,
      crossMask: mask,
    });
    assert.deepEqual(beam.ids, expected.beam, `${mask}: beam ids`);
    assert.ok(Math.abs(beam.score - expected.beamScore) < 1e-4, `${mask}: ${beam.score}`);
    assertRows(beam.steps, expected.beamSteps, `${mask} beam`);
  }
  assert.notDeepEqual(reference.crossMasks.last.greedy, source.greedy, 'last changes the output');
  assert.deepEqual(
    (await model.translate(source.text, { beams: 1, maxTokens: 8, crossMask: 'local' })).crossMask,
    'local:2',
  );
});

test('bad cross masks get named errors; the model stays usable', async () => {
  const { text } = reference.sources[0];
  for (const crossMask of ['all', 'local:x', 'local:-1', 'last:1', 'local:1:2', 7, 'local:99']) {
    await assert.rejects(
      model.translate(text, { beams: 1, crossMask }),
      (error) => error.parameter === 'crossMask',
      String(crossMask),
    );
  }
  const again = await model.translate(text, { beams: 1, maxTokens: reference.maxNewTokens });
  assert.deepEqual(again.ids, reference.sources[0].greedy);
});

// The page's Translate mode (demo/model/translate-compute.js) with beam search: the steps it
// posts, kept as the page keeps them (dropped from `index` on), end as the translation's own.
test("the Translate mode's beam search posts the steps the page replays", async () => {
  const { translateWith } = await import('../demo/model/translate-compute.js');
  const source = reference.sources[0].text;
  const posted = [];
  const result = await translateWith(
    model,
    { key: 'k', text: source, decoding: 'beams' },
    { progress: (message) => posted.push(message) },
  );
  const held = replay(posted.map(({ step, index }) => ({ ...step, index })));
  const direct = await model.translate(source, { maxTokens: model.info.maxPositions - 1 });
  assert.equal(result.beams, direct.beams);
  assert.ok(result.beams > 1, `the fixture's num_beams: ${result.beams}`);
  assert.deepEqual(
    held.map((step) => step.id),
    result.steps.map((step) => step.id),
  );
  assert.deepEqual(
    result.steps.map((step) => step.id),
    direct.ids.slice(1),
  );
  const greedy = await translateWith(model, { key: 'k', text: source }, { progress: () => {} });
  assert.equal(greedy.beams, 1);
});
