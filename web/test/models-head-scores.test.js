// model.headScores() on the tiny models of every architecture: the probe (seeded random ordinary
// tokens of the model's own vocabulary, twice, in the tokenizer's special tokens) and the scores
// against a double-precision computation written here from the definitions (TransformerLens'
// diagonal form of the induction score) on the PyTorch reference forward pass of the same ids
// (tests/models/reference.py). A trained model, the bundled stories260K, against llama2.c's
// reference (tests/models/llama2c_reference.py): the labels its scores earn, its previous-token
// heads named. Then the options' errors and a disposed model.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { createAttention } from '../src/index.js';
import { HEAD_LABEL_THRESHOLD } from '../src/interpret/head-scores.js';
import { loadModel } from '../src/models/index.js';
import { referenceForward, rejectsWith, tinyModel } from './support/tiny-models.mjs';

// Scores are means of float32 weights (abs 5e-6 each, models-run.test.js) over the rows.
const SCORE_TOL = 2e-5;
const MODELS = ['gpt2', 'gpt-neo', 'bert', 'smollm2', 'qwen2', 'llama-untied', 'qwen2-sliding'];
const PROBES = 2;

let attention;
const runs = []; // { name, model info, tokenizer facts, result }
let reference;

before(async () => {
  attention = await createAttention({ backend: 'wasm-simd', models: true });
  for (const name of MODELS) {
    const model = await loadModel(tinyModel(name), { attention });
    const result = await model.headScores({ probes: PROBES });
    const again = await model.headScores({ probes: PROBES });
    const other = await model.headScores({ probes: 1, seed: 7, length: 5 });
    const tokenizer = model.tokenizer;
    const ordinary = result.ids.map((ids) =>
      Array.from(ids, (id) => {
        const text = tokenizer.decode([id]);
        const encoded = tokenizer.encode(text, { addSpecialTokens: false }).tokens;
        return encoded.length === 1 && encoded[0].id === id && !encoded[0].special;
      }),
    );
    const wrap = tokenizer.encode('a').tokens;
    runs.push({ name, info: model.info, result, again, other, ordinary, wrap });
    model.dispose();
  }
  reference = referenceForward(
    runs.flatMap(({ name, info, result }) =>
      result.ids.map((ids) => ({
        folder: tinyModel(name),
        ids: Array.from(ids),
        types: info.causal ? null : Array.from(ids, () => 0),
      })),
    ),
  );
});

after(() => attention?.dispose());

// The scores from the definitions, in float64, on one probe's reference attention [L, H, N, N]:
// `before` special tokens, the sequence of `length` twice, `after` special tokens.
function expectedScores(weights, { layers, heads, causal }, { n, before, length, afterCount }) {
  const scores = [];
  const at = (l, h, i, j) => weights[((l * heads + h) * n + i) * n + j];
  const content = []; // rows of ordinary tokens
  for (let i = before; i < n - afterCount; i++) content.push(i);
  const second = content.slice(length); // the second copy
  const sinks = Array.from({ length: n }, (_, j) => j).filter(
    (j) => j === 0 || j < before || j >= n - afterCount,
  );
  for (let l = 0; l < layers; l++) {
    for (let h = 0; h < heads; h++) {
      const mean = (rows, value) => rows.reduce((s, i) => s + value(i), 0) / rows.length;
      // TransformerLens: the diagonal length - 1 below the main one, over the second copy.
      const induction = mean(second, (i) => at(l, h, i, i - length + 1));
      // Rows that see more than one key; with BOS first that leaves out no ordinary row.
      const rows = content.filter((i) => i > 0 || !causal);
      const previousToken = mean(
        rows.filter((i) => i > 0),
        (i) => at(l, h, i, i - 1),
      );
      const sink = mean(rows, (i) =>
        sinks.reduce((s, j) => s + (causal && j > i ? 0 : at(l, h, i, j)), 0),
      );
      scores.push({ induction, previousToken, sink });
    }
  }
  return scores;
}

for (const name of MODELS) {
  test(`${name}: the probe is seeded, ordinary tokens twice in the tokenizer's wrapping`, () => {
    const { result, again, other, ordinary, wrap, info } = runs.find((r) => r.name === name);
    assert.equal(result.ids.length, PROBES);
    assert.deepEqual(again.ids, result.ids, 'the same seed, the same probe');
    assert.deepEqual(again.heads, result.heads, 'and the same scores');
    assert.equal(result.heads.length, info.layers * info.heads);
    const before = wrap.findIndex((t) => !t.special);
    const afterCount = wrap.length - 1 - wrap.findLastIndex((t) => !t.special);
    for (const [p, ids] of result.ids.entries()) {
      assert.ok(ids instanceof Int32Array);
      const n = ids.length;
      const length = (n - before - afterCount) / 2;
      assert.equal(length, Math.min(50, Math.floor((info.maxPositions - before - afterCount) / 2)));
      const body = Array.from(ids.subarray(before, n - afterCount));
      assert.deepEqual(body.slice(0, length), body.slice(length), 'one sequence twice');
      assert.equal(new Set(body).size, length, 'distinct tokens');
      assert.deepEqual(
        Array.from(ids.subarray(0, before)),
        wrap.slice(0, before).map((t) => t.id),
      );
      assert.deepEqual(
        Array.from(ids.subarray(n - afterCount)),
        wrap.slice(wrap.length - afterCount).map((t) => t.id),
      );
      assert.ok(ordinary[p].slice(before, n - afterCount).every(Boolean), 'ordinary tokens');
      assert.ok(body.every((id) => id < info.vocab));
    }
    assert.notDeepEqual(result.ids[1], result.ids[0], 'each probe its own draw');
    assert.equal(other.ids[0].length, before + 10 + afterCount, 'length: 5');
    assert.notDeepEqual(
      other.ids[0].subarray(before, before + 5),
      result.ids[0].subarray(before, before + 5),
    );
  });

  test(`${name}: scores match the definitions on the reference attention`, () => {
    let index = 0;
    for (const run of runs) {
      if (run.name !== name) {
        index += run.result.ids.length;
        continue;
      }
      const { info, result, wrap } = run;
      const before = wrap.findIndex((t) => !t.special);
      const afterCount = wrap.length - 1 - wrap.findLastIndex((t) => !t.special);
      const perProbe = result.ids.map((ids, p) =>
        expectedScores(reference[index + p].attention, info, {
          n: ids.length,
          before,
          length: (ids.length - before - afterCount) / 2,
          afterCount,
        }),
      );
      result.heads.forEach((score, k) => {
        assert.deepEqual([score.layer, score.head], [Math.floor(k / info.heads), k % info.heads]);
        for (const measure of ['induction', 'previousToken', 'sink']) {
          const expected = perProbe.reduce((s, scores) => s + scores[k][measure], 0) / PROBES;
          const actual = score[measure];
          assert.ok(
            Math.abs(actual - expected) <= SCORE_TOL,
            `${name} layer ${score.layer} head ${score.head} ${measure}: ${actual} vs ${expected}`,
          );
        }
      });
      return;
    }
    assert.fail(`no run of ${name}`);
  });
}

// The labels of scores, from their definition: the first of induction, previous-token and
// sink whose score passes the threshold.
function expectedLabel({ induction, previousToken, sink }) {
  if (induction > HEAD_LABEL_THRESHOLD) return 'induction';
  if (previousToken > HEAD_LABEL_THRESHOLD) return 'previous-token';
  if (sink > HEAD_LABEL_THRESHOLD) return 'sink';
  return null;
}

test("stories260K: its previous-token heads, scores as llama2.c's reference", async () => {
  const repo = fileURLToPath(new URL('../../', import.meta.url));
  const bundled = join(repo, 'web/src/models/bundled/stories260K');
  const model = await loadModel('stories260K', { attention });
  const { heads, ids } = await model.headScores();
  const info = model.info;
  model.dispose();
  const answer = execFileSync(
    '/usr/bin/python3',
    [join(repo, 'tests/models/llama2c_reference.py')],
    {
      input: JSON.stringify({
        model: join(bundled, 'stories260K.bin'),
        tokenizer: join(bundled, 'tok512.bin'),
        ids: ids.map((probe) => Array.from(probe)),
      }),
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  const { cases } = JSON.parse(answer.toString('utf8'));
  assert.equal(cases.length, ids.length);
  // BOS, then the sequence twice: llama2.c's tokenizer adds nothing after a text.
  const perProbe = cases.map(({ attention: weights }, p) =>
    expectedScores(weights, info, {
      n: ids[p].length,
      before: 1,
      length: (ids[p].length - 1) / 2,
      afterCount: 0,
    }),
  );
  const previousTokenHeads = [];
  heads.forEach((score, k) => {
    const expected = {};
    for (const measure of ['induction', 'previousToken', 'sink']) {
      expected[measure] = perProbe.reduce((s, scores) => s + scores[k][measure], 0) / ids.length;
      assert.ok(
        Math.abs(score[measure] - expected[measure]) <= SCORE_TOL,
        `layer ${score.layer} head ${score.head} ${measure}: ${score[measure]} vs ` +
          `${expected[measure]}`,
      );
    }
    assert.equal(score.label, expectedLabel(expected), `layer ${score.layer} head ${score.head}`);
    if (score.label === 'previous-token') previousTokenHeads.push([score.layer, score.head]);
  });
  // What this trained model earns (0-based layer, head; the page's L2H4, L2H7, L3H1, L4H7):
  // four previous-token heads, and no induction head, in five layers.
  assert.deepEqual(previousTokenHeads, [
    [1, 3],
    [1, 6],
    [2, 0],
    [3, 6],
  ]);
  assert.ok(heads.every((score) => score.label !== 'induction'));
});

test('options are checked; a disposed model refuses', async () => {
  const model = await loadModel(tinyModel('gpt2'), { attention });
  const expect = (options, code, parameter) =>
    rejectsWith(model.headScores(options), {
      name: code === 'out_of_range' ? 'RangeError' : 'TypeError',
      code,
      parameter,
    });
  await expect({ length: 1 }, 'out_of_range', 'length');
  await expect({ length: 17 }, 'out_of_range', 'length'); // 32 positions: 16 twice at most
  await expect({ length: 2.5 }, 'out_of_range', 'length');
  await expect({ length: '4' }, 'invalid_argument', 'length');
  await expect({ probes: 0 }, 'out_of_range', 'probes');
  await expect({ seed: -1 }, 'out_of_range', 'seed');
  await expect({ lenght: 4 }, 'invalid_argument', 'options');
  await expect('long', 'invalid_argument', 'options');
  const { heads } = await model.headScores({ length: 16, probes: 1 });
  assert.ok(heads.every((h) => h.induction >= 0 && h.induction <= 1));
  model.dispose();
  await assert.rejects(model.headScores(), /headScores: this model was disposed/);
});
