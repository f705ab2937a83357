// Hostile model folders and calls that reach a loaded model: prototype names in config.json,
// fields the core cannot hold, a config that drops layers, huge texts, and use after dispose().
// Each gets a named error (code and parameter), quickly, and the engine and models stay usable.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAttention } from '../src/index.js';
import { describeModel, loadModel } from '../src/models/index.js';
import { MAX_TEXT_LENGTH } from '../src/text/limits.js';
import { rejectsWith, tinyModel, withConfig } from './support/tiny-models.mjs';

let attention;
let gpt2;
let bert;

before(async () => {
  attention = await createAttention({ backend: 'wasm-simd', models: true });
  gpt2 = await loadModel(tinyModel('gpt2'), { attention });
  bert = await loadModel(tinyModel('bert'), { attention });
});

after(() => {
  gpt2.dispose();
  bert.dispose();
  attention.dispose();
});

// The engine and the loaded models still work after a refused load or call.
async function stillUsable() {
  assert.equal((await gpt2.run('The quick brown fox')).predictions.length, 10);
  const extra = await loadModel(tinyModel('gpt2'), { attention });
  extra.dispose();
}

test('model_type naming an Object prototype member is not an architecture', async () => {
  for (const type of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
    const folder = withConfig('gpt2', (c) =>
      JSON.parse(JSON.stringify({ ...c, model_type: type })),
    );
    for (const open of [loadModel, describeModel]) {
      await rejectsWith(open(folder, { attention }), {
        name: 'RangeError',
        code: 'out_of_range',
        parameter: 'model_type',
        message: new RegExp(`model_type '${type}' is not supported`),
      });
    }
  }
  await stillUsable();
});

test("config fields the core cannot hold are named by the checkpoint's own keys", async () => {
  const cases = [
    ['gpt2', { n_layer: 2 ** 31 - 1 }, /^config\.json: n_layer must be between 1 and 4096/],
    ['bert', { num_hidden_layers: 5000 }, /^config\.json: num_hidden_layers .*4096/],
    ['smollm2', { num_hidden_layers: 2 ** 31 - 1 }, /^config\.json: num_hidden_layers /],
    [
      'smollm2',
      { rms_norm_eps: 1e-50 },
      /^config\.json: rms_norm_eps 1e-50 is too small for float32, which the model computes in/,
    ],
    ['gpt2', { layer_norm_epsilon: 1e39 }, /^config\.json: layer_norm_epsilon 1e\+39 is too large/],
  ];
  for (const [name, fields, message] of cases) {
    const folder = withConfig(name, (c) => ({ ...c, ...fields }));
    for (const open of [loadModel, describeModel]) {
      await rejectsWith(open(folder, { attention }), {
        name: 'RangeError',
        code: 'out_of_range',
        parameter: 'config.json',
        message,
      });
    }
  }
  await stillUsable();
});

test('a config with fewer layers than the checkpoint is refused', async () => {
  await rejectsWith(
    loadModel(
      withConfig('gpt2', (c) => ({ ...c, n_layer: 1 })),
      { attention },
    ),
    {
      name: 'RangeError',
      code: 'out_of_range',
      parameter: 'config.json',
      message: /n_layer is 1, but the checkpoint holds more layers \('h\.1\.ln_1\.weight'\)/,
    },
  );
  await rejectsWith(
    loadModel(
      withConfig('smollm2', (c) => ({ ...c, num_hidden_layers: 1 })),
      { attention },
    ),
    {
      name: 'RangeError',
      code: 'out_of_range',
      parameter: 'config.json',
      message: /num_hidden_layers is 1, but the checkpoint holds more layers \('model\.layers\.1\./,
    },
  );
  await stillUsable();
});

test('a long text is cut before it is tokenized, or refused at once', async () => {
  // 2 MB: tokenizing and aligning all of it took tens of seconds.
  const book = 'the quick brown fox jumps over the lazy dog. '.repeat(45000);
  const started = performance.now();
  const cut = await gpt2.run(book, { truncate: true });
  assert.equal(cut.tokens.length, 32);
  assert.deepEqual(
    cut.tokens.map((t) => t.text),
    (await gpt2.run(book.slice(0, 400), { truncate: true })).tokens.map((t) => t.text),
    'the same tokens as a short prefix gives',
  );
  const bertCut = await bert.run(book, { pair: book, truncate: true });
  assert.equal(bertCut.tokens.length, 24);
  assert.equal(bertCut.tokens.at(-1).text, '[SEP]');
  await rejectsWith(gpt2.run(book), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'text',
    message: new RegExp(
      `is ${book.length} characters, more than run\\(\\) reads ` +
        `.*${MAX_TEXT_LENGTH}.*truncate: true`,
    ),
  });
  await rejectsWith(bert.run('a', { pair: book }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'pair',
  });
  // Within the cap, a text of too many tokens still gets the positions error.
  await rejectsWith(gpt2.run(book.slice(0, MAX_TEXT_LENGTH)), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'text',
    message: /more than the model's 32 positions/,
  });
  // A surrogate pair at the cut is kept whole or dropped whole.
  const emoji = await gpt2.run('😀'.repeat(MAX_TEXT_LENGTH), { truncate: true });
  assert.ok(emoji.tokens.every((t) => t.end <= 2 * MAX_TEXT_LENGTH));
  // Generous: the whole of it took 20 s or more before.
  assert.ok(performance.now() - started < 8000, `${performance.now() - started} ms`);
  await stillUsable();
});

test("after dispose(), every member of a model says 'disposed' and its own name", async () => {
  const model = await loadModel(tinyModel('gpt2'), { attention });
  model.dispose();
  for (const member of ['info', 'source', 'tokenizer']) {
    assert.throws(() => model[member], { name: 'Error', code: 'disposed', parameter: member });
  }
  await assert.rejects(model.run('hi'), {
    name: 'Error',
    code: 'disposed',
    parameter: 'run',
    message: 'run: this model was disposed',
  });
  // A model whose engine was disposed.
  const engine = await createAttention({ backend: 'wasm-scalar', models: true });
  const orphan = await loadModel(tinyModel('gpt2'), { attention: engine });
  engine.dispose();
  await assert.rejects(orphan.run('hi'), {
    name: 'Error',
    code: 'disposed',
    parameter: 'run',
    message: /the attention instance this model runs on was disposed/,
  });
  orphan.dispose();
  await stillUsable();
});
