// model.generate(): the prompt's forward fills a KV cache in wasm memory, then one step per new
// token. For every decoder-only architecture (tiny GPT-2, GPT-Neo with a local layer, SmolLM2
// and Qwen2 layouts of the llama unit, Qwen2 with a sliding window, and the bundled llama2.c
// stories260K), each step's logits and attention row equal those of a full forward of the
// prefix: the prompt's against run(), every later one against the independent PyTorch and
// run.c references (which run() itself is held to, with the same tolerances). Greedy decoding of
// stories260K equals run.c's greedy continuation, which re-runs the whole prefix per token.
// Then seeded sampling, cancelling, bad input, and the model staying usable after each error.
//
// Tolerances (float32 against float64 references): attention abs 5e-6 (2e-5 for stories260K's
// five layers), logits abs 5e-5 + rel 2e-5, as models-run.test.js and models-llama2c.test.js;
// against run() in the same engine, abs 1e-5 + rel 1e-5 (a step's LM head takes dot products,
// the prompt's GEMM: only rounding differs).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { createAttention } from '../src/index.js';
import { GENERATE_OPTIONS, loadModel } from '../src/models/index.js';
import { assertClose, referenceForward, rejectsWith, tinyModel } from './support/tiny-models.mjs';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BUNDLED = join(REPO, 'web/src/models/bundled/stories260K');
const SAME_ENGINE_TOL = { abs: 1e-5, rel: 1e-5 };
const LOGIT_TOL = { abs: 5e-5, rel: 2e-5 };
const TINY = ['gpt2', 'gpt-neo', 'smollm2', 'qwen2', 'qwen2-sliding'];
const PROMPT = 'The quick brown fox';
const STEPS = 6;

let attention;
before(async () => {
  attention = await createAttention({ backend: 'wasm-simd', models: true });
});
after(() => attention.dispose());

// The rows of a [layers, heads, T, T] matrix at query `row`, keys 0..row: [layers, heads, row+1].
function attentionRow(matrix, { layers, heads }, t, row) {
  const out = new Float32Array(layers * heads * (row + 1));
  for (let lh = 0; lh < layers * heads; lh++) {
    out.set(matrix.slice((lh * t + row) * t, (lh * t + row) * t + row + 1), lh * (row + 1));
  }
  return out;
}

// Every step of `result` against the full forward of prompt + new ids (`full`: attention
// [layers, heads, T, T] and logits [T, vocab] of that whole sequence).
function checkSteps(info, promptLength, result, full, attentionTol, label) {
  const t = promptLength + result.ids.length;
  result.tokens.forEach((token, i) => {
    const position = promptLength + i;
    assert.equal(token.step, i);
    assert.equal(token.attention.length, info.layers * info.heads * (position + 1));
    assertClose(
      token.attention,
      Array.from(attentionRow(full.attention, info, t, position)),
      attentionTol,
      `${label} step ${i} attention`,
    );
    // Token i was drawn from the logits at the position before it.
    const expected = full.logits.slice((position - 1) * info.vocab, position * info.vocab);
    assertClose(token.logits, expected, LOGIT_TOL, `${label} step ${i} logits`);
  });
}

test('each step equals a full forward of the prefix, every decoder-only architecture', async () => {
  const cases = [];
  for (const name of TINY) {
    const model = await loadModel(tinyModel(name), { attention });
    const run = await model.run(PROMPT, { returnLogits: true });
    const result = await model.generate(PROMPT, { maxTokens: STEPS, returnLogits: true });
    const n = run.tokens.length;
    // The prompt's own run is run()'s, and the first token comes from run()'s last logits.
    assertClose(result.prompt.attention, run.attention, SAME_ENGINE_TOL, `${name} prompt`);
    assert.deepEqual(
      result.prompt.tokens.map((t) => t.id),
      run.tokens.map((t) => t.id),
    );
    const lastRow = run.logits.slice((n - 1) * model.info.vocab);
    assertClose(result.tokens[0].logits, lastRow, SAME_ENGINE_TOL, `${name} first logits`);
    // Greedy decoding of random weights repeats itself, and may reach EOS (tiny GPT-Neo does).
    if (result.stopped === 'eos') {
      assert.equal(result.ids.at(-1), model.tokenizer.special.eos.id);
      assert.equal(result.tokens.at(-1).text, '');
    } else {
      assert.equal(result.ids.length, STEPS);
    }
    cases.push({ name, info: model.info, n, result, ids: [...run.tokens.map((t) => t.id)] });
    model.dispose();
  }
  const reference = referenceForward(
    cases.map(({ name, ids, result }) => ({
      folder: tinyModel(name),
      ids: [...ids, ...result.ids],
    })),
  );
  cases.forEach(({ name, info, n, result }, i) => {
    checkSteps(info, n, result, reference[i], { abs: 5e-6 }, name);
  });
});

function llama2cReference(request) {
  const answer = execFileSync(
    '/usr/bin/python3',
    [join(REPO, 'tests/models/llama2c_reference.py')],
    {
      input: JSON.stringify({
        model: join(BUNDLED, 'stories260K.bin'),
        tokenizer: join(BUNDLED, 'tok512.bin'),
        ...request,
      }),
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  return JSON.parse(answer.toString('utf8'));
}

test("stories260K: greedy generate() is run.c's greedy continuation, step by step", async () => {
  const model = await loadModel('stories260K', { attention });
  const streamed = [];
  const result = await model.generate('Once upon a time', {
    maxTokens: 24,
    returnLogits: true,
    onToken: (token) => streamed.push(token),
  });
  const prompt = result.prompt.tokens.map((t) => t.id);
  const reference = llama2cReference({
    greedy: 24,
    greedy_from: prompt,
    ids: [[...prompt, ...result.ids]],
  });
  assert.deepEqual([...prompt, ...result.ids], reference.greedy.ids);
  assert.equal(result.text, reference.greedy.text);
  assert.ok(result.text.startsWith(', there was a little girl'), result.text);
  assert.equal(result.stopped, 'maxTokens');
  // onToken streamed every token, in order, the same objects the result holds.
  assert.deepEqual(streamed, result.tokens);
  assert.equal(streamed.map((t) => t.text).join(''), result.text);
  checkSteps(model.info, prompt.length, result, reference.cases[0], { abs: 2e-5 }, 'stories260K');
  model.dispose();
});

test('seeded sampling: a seed draws one text; topK 1 and a tiny topP are greedy', async () => {
  const model = await loadModel('stories260K', { attention });
  const greedy = await model.generate('Lily', { maxTokens: 12 });
  const sample = (options) => model.generate('Lily', { maxTokens: 12, ...options });
  const a = await sample({ temperature: 1, seed: 7 });
  const b = await sample({ temperature: 1, seed: 7 });
  assert.deepEqual(a.ids, b.ids);
  assert.equal(a.seed, 7);
  const others = await Promise.all([1, 2, 3, 4].map((seed) => sample({ temperature: 1.5, seed })));
  assert.ok(
    others.some((o) => o.ids.join() !== greedy.ids.join()),
    'sampling drew the greedy text',
  );
  const drawn = await sample({ temperature: 1 });
  assert.deepEqual((await sample({ temperature: 1, seed: drawn.seed })).ids, drawn.ids);
  assert.deepEqual((await sample({ temperature: 2, topK: 1, seed: 3 })).ids, greedy.ids);
  assert.deepEqual((await sample({ temperature: 2, topP: 1e-6, seed: 3 })).ids, greedy.ids);
  // With topK 3, every token is among its step's three largest logits.
  const top3 = await sample({ temperature: 5, topK: 3, seed: 11, returnLogits: true });
  for (const token of top3.tokens) {
    const larger = token.logits.filter((x) => x > token.logits[token.id]).length;
    assert.ok(larger < 3, `token ${token.id} has ${larger} larger logits`);
  }
  model.dispose();
});

test('an AbortSignal cancels mid-stream; the model then generates as before', async () => {
  const model = await loadModel('stories260K', { attention });
  const whole = await model.generate('Once upon a time', { maxTokens: 10 });
  const controller = new AbortController();
  const seen = [];
  await assert.rejects(
    model.generate('Once upon a time', {
      maxTokens: 10,
      signal: controller.signal,
      onToken: (token) => {
        seen.push(token.id);
        if (seen.length === 3) controller.abort();
      },
    }),
    (error) => error.name === 'AbortError',
  );
  assert.deepEqual(seen, whole.ids.slice(0, 3));
  // A timer fires between steps too: generation yields to the event loop after every token.
  const timed = new AbortController();
  setTimeout(() => timed.abort(), 5);
  await assert.rejects(
    model.generate('Once', { maxTokens: 500, signal: timed.signal }),
    (error) => error.name === 'AbortError',
  );
  const reason = new Error('stop');
  await assert.rejects(
    model.generate('Once', { signal: AbortSignal.abort(reason) }),
    (error) =>
      error.name === 'AbortError' &&
      /generation was cancelled/.test(error.message) &&
      error.cause === reason,
  );
  assert.deepEqual((await model.generate('Once upon a time', { maxTokens: 10 })).ids, whole.ids);
  // Disposing the model, or the engine it runs on, mid-stream ends the generation as disposed.
  const engine = await createAttention({ backend: 'wasm-simd', models: true });
  const own = await loadModel('stories260K', { attention: engine });
  await rejectsWith(own.generate('Once', { onToken: () => engine.dispose() }), {
    name: 'Error',
    code: 'disposed',
    parameter: 'generate',
  });
  own.dispose();
  const second = await loadModel('stories260K', { attention });
  await rejectsWith(second.generate('Once', { onToken: () => second.dispose() }), {
    name: 'Error',
    code: 'disposed',
    parameter: 'generate',
  });
  model.dispose();
  await rejectsWith(model.generate('Once'), {
    name: 'Error',
    code: 'disposed',
    parameter: 'generate',
  });
});

test('bad input is refused with a named error, and the model stays usable', async () => {
  const model = await loadModel('stories260K', { attention });
  const expected = (await model.generate('Lily', { maxTokens: 4 })).ids;
  const cases = [
    [[''], 'RangeError', 'out_of_range', 'text'],
    [[42], 'TypeError', 'invalid_argument', 'text'],
    [['Lily', { maxTokens: 0 }], 'RangeError', 'out_of_range', 'maxTokens'],
    [['Lily', { maxTokens: -3 }], 'RangeError', 'out_of_range', 'maxTokens'],
    [['Lily', { maxTokens: 2.5 }], 'RangeError', 'out_of_range', 'maxTokens'],
    [['Lily', { maxTokens: '3' }], 'TypeError', 'invalid_argument', 'maxTokens'],
    [['Lily', { maxTokens: 511 }], 'RangeError', 'out_of_range', 'maxTokens'], // 512 positions
    [['Lily', { topP: 0 }], 'RangeError', 'out_of_range', 'topP'],
    [['Lily', { topP: 1.5 }], 'RangeError', 'out_of_range', 'topP'],
    [['Lily', { topP: NaN }], 'RangeError', 'out_of_range', 'topP'],
    [['Lily', { temperature: -1 }], 'RangeError', 'out_of_range', 'temperature'],
    [['Lily', { temperature: Infinity }], 'RangeError', 'out_of_range', 'temperature'],
    [['Lily', { topK: 0 }], 'RangeError', 'out_of_range', 'topK'],
    [['Lily', { seed: -1 }], 'RangeError', 'out_of_range', 'seed'],
    [['Lily', { signal: {} }], 'TypeError', 'invalid_argument', 'signal'],
    [['Lily', { onToken: 'log' }], 'TypeError', 'invalid_argument', 'onToken'],
    [['Lily', { maxToken: 3 }], 'TypeError', 'invalid_argument', 'options'],
  ];
  for (const [args, name, code, parameter] of cases) {
    await rejectsWith(model.generate(...args), { name, code, parameter });
  }
  // A prompt past the positions names them (run()'s truncate option is not generate()'s).
  await rejectsWith(model.generate('Lily '.repeat(600)), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'text',
    message:
      /^text: is \d+ tokens, more than the model's 512 positions \(max_position_embeddings\)$/,
  });
  // A promise from onToken holds the next token back until it settles.
  const order = [];
  await model.generate('Lily', {
    maxTokens: 3,
    onToken: ({ step }) => {
      order.push(`token ${step}`);
      return new Promise((resolve) => setTimeout(resolve, 5)).then(() =>
        order.push(`drawn ${step}`),
      );
    },
  });
  assert.deepEqual(order, ['token 0', 'drawn 0', 'token 1', 'drawn 1', 'token 2', 'drawn 2']);
  const thrown = new Error('from onToken');
  await assert.rejects(
    model.generate('Lily', {
      onToken: () => {
        throw thrown;
      },
    }),
    (error) => error === thrown,
  );
  assert.deepEqual((await model.generate('Lily', { maxTokens: 4 })).ids, expected);
  model.dispose();
  const bert = await loadModel(tinyModel('bert'), { attention });
  await rejectsWith(bert.generate('hello'), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'model',
  });
  bert.dispose();
  assert.ok(GENERATE_OPTIONS.includes('topP'));
});
