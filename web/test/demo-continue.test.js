// The Continue mode's compute side (demo/model/continue-compute.js) on the tiny GPT-2: the run
// grows by each generated token's row (the prompt's rows as run() gives them, each new row as
// generate() gives it), the grown run reaches progress() as it comes, words group it like a typed
// text, maxTokens is cut to the positions left, cancelling rejects, a full text is refused; and
// the panel's reading of its inputs (demo/model/continue-panel.js continueOptions).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAttention } from '../src/index.js';
import { loadModel } from '../src/models/index.js';
import { continueWith, grownAttention } from '../demo/model/continue-compute.js';
import { CONTINUE_DEFAULTS, continueOptions } from '../demo/model/continue-panel.js';
import { tinyModel } from './support/tiny-models.mjs';

const PROMPT = 'Once upon a time';

describe('grownAttention', () => {
  it('keeps the prompt rows and appends each new row, zeros after its query', () => {
    // 2 planes, prompt n = 2, two new tokens.
    const prompt = Float32Array.from([1, 0, 0.5, 0.5, 1, 0, 0.25, 0.75]);
    const rows = [
      Float32Array.from([0.1, 0.2, 0.7, 0.3, 0.3, 0.4]),
      new Float32Array(8).fill(0.25),
    ];
    const out = grownAttention(prompt, 2, rows, 2);
    assert.equal(out.length, 2 * 4 * 4);
    const plane = (p) =>
      Array.from({ length: 4 }, (_, i) =>
        Array.from(out.subarray(p * 16 + i * 4, p * 16 + i * 4 + 4)),
      );
    const f = (x) => Math.fround(x);
    assert.deepEqual(plane(0), [
      [1, 0, 0, 0],
      [0.5, 0.5, 0, 0],
      [f(0.1), f(0.2), f(0.7), 0],
      [0.25, 0.25, 0.25, 0.25],
    ]);
    assert.deepEqual(plane(1), [
      [1, 0, 0, 0],
      [0.25, 0.75, 0, 0],
      [f(0.3), f(0.3), f(0.4), 0],
      [0.25, 0.25, 0.25, 0.25],
    ]);
    assert.throws(() => grownAttention(prompt, 2, [new Float32Array(5)], 2), RangeError);
  });
});

describe('continueWith (tiny GPT-2)', () => {
  let attention, model;
  const key = 'tiny';
  before(async () => {
    attention = await createAttention({ backend: 'wasm-simd', models: true });
    model = await loadModel(tinyModel('gpt2'), { attention });
  });
  after(() => {
    model?.dispose();
    attention?.dispose();
  });

  const params = (extra) => ({
    key,
    text: PROMPT,
    words: false,
    temperature: 0,
    seed: 1,
    ...extra,
  });

  it('grows by each token: prompt rows as run() has them, new rows as generate()', async () => {
    const seen = [];
    const result = await continueWith(model, params({ maxTokens: 6 }), {
      progress: (grown) => seen.push(grown),
    });
    const reference = await model.generate(PROMPT, { maxTokens: 6, temperature: 0 });
    const { layers, heads } = model.info;
    const n = reference.prompt.tokens.length;
    const m = n + reference.tokens.length;
    assert.equal(result.continued.added, reference.tokens.length);
    assert.equal(result.continued.stopped, reference.stopped);
    assert.equal(result.continued.text, PROMPT + reference.text);
    assert.equal(result.continued.prompt, PROMPT);
    assert.equal(result.rows.length, m);
    assert.equal(result.own.attention.length, layers * heads * m * m);
    assert.equal(result.own.visible.length, layers * m * m);
    assert.equal(result.own.labels.length, layers);
    assert.deepEqual(
      result.tokens.slice(n).map((t) => t.piece),
      reference.ids.map((id) => model.tokenizer.idToToken(id)),
    );
    const run = await model.run(PROMPT);
    for (let p = 0; p < layers * heads; p++) {
      for (let i = 0; i < m; i++) {
        const row = result.own.attention.subarray((p * m + i) * m, (p * m + i + 1) * m);
        const want =
          i < n
            ? run.attention.subarray((p * n + i) * n, (p * n + i + 1) * n)
            : reference.tokens[i - n].attention.subarray(p * (i + 1), (p + 1) * (i + 1));
        assert.deepEqual(Array.from(row.subarray(0, want.length)), Array.from(want), `${p}:${i}`);
        assert.ok(row.subarray(want.length).every((w) => w === 0));
      }
    }
    // The first token reaches progress() at once; each drawing has more rows than the last.
    assert.ok(seen.length >= 1);
    assert.equal(seen[0].rows.length, n + 1);
    assert.equal(seen[0].continued.stopped, null);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i].rows.length > seen[i - 1].rows.length);
  });

  it('waits for each drawing before the next token', async () => {
    const order = [];
    await continueWith(model, params({ maxTokens: 3 }), {
      progress: (grown) => order.push(`grown ${grown.continued.added}`),
      drawn: () => new Promise((resolve) => setTimeout(resolve, 5)).then(() => order.push('drawn')),
    });
    assert.deepEqual(order, ['grown 1', 'drawn', 'grown 2', 'drawn', 'grown 3', 'drawn']);
  });

  it('groups the grown run into words as a typed text is grouped', async () => {
    const result = await continueWith(model, params({ maxTokens: 4, words: true }), {
      progress: () => {},
    });
    assert.equal(result.words, true);
    const g = result.rows.length;
    assert.ok(g <= result.tokens.length);
    assert.equal(result.own.attention.length, model.info.layers * model.info.heads * g * g);
    assert.equal(result.rows[0].text, 'Once');
  });

  it('cuts maxTokens to the positions the text leaves, and refuses a full text', async () => {
    const n = model.tokenizer.encode(PROMPT).ids.length;
    const room = model.info.maxPositions - n;
    const result = await continueWith(model, params({ maxTokens: 200 }), {
      progress: () => {},
    });
    assert.equal(result.continued.maxTokens, room);
    assert.ok(result.rows.length <= model.info.maxPositions);
    const full = 'a '.repeat(model.info.maxPositions + 4);
    await assert.rejects(
      continueWith(model, params({ text: full, maxTokens: 1 }), { progress: () => {} }),
      (error) =>
        error instanceof RangeError && error.code === 'out_of_range' && error.parameter === 'text',
    );
  });

  it('stops when cancelled mid-stream, and the model stays usable', async () => {
    const controller = new AbortController();
    let drawn = 0;
    await assert.rejects(
      continueWith(model, params({ maxTokens: 12 }), {
        signal: controller.signal,
        progress: () => {
          drawn++;
          controller.abort();
        },
      }),
      { name: 'AbortError' },
    );
    assert.equal(drawn, 1);
    const again = await continueWith(model, params({ maxTokens: 2 }), {
      progress: () => {},
    });
    assert.ok(again.continued.added >= 1);
  });

  it('draws with the seed at a temperature: the same seed, the same continuation', async () => {
    const run = () =>
      continueWith(model, params({ maxTokens: 8, temperature: 1, seed: 7 }), {
        signal: null,
        progress: () => {},
      });
    const [a, b] = [await run(), await run()];
    assert.equal(a.continued.text, b.continued.text);
    assert.equal(a.continued.seed, 7);
  });
});

describe('continueOptions', () => {
  it('reads the inputs, with the nearest allowed value for one out of range or empty', () => {
    assert.deepEqual(continueOptions({ maxTokens: '12', temperature: '0.7', seed: '5' }), {
      maxTokens: 12,
      temperature: 0.7,
      seed: 5,
    });
    assert.deepEqual(
      continueOptions({ maxTokens: '', temperature: 'x', seed: '' }),
      CONTINUE_DEFAULTS,
    );
    assert.deepEqual(continueOptions({ maxTokens: '0', temperature: '-1', seed: '-3' }), {
      maxTokens: 1,
      temperature: 0,
      seed: 0,
    });
    assert.deepEqual(continueOptions({ maxTokens: '9999', temperature: '5', seed: '1e12' }), {
      maxTokens: 256,
      temperature: 2,
      seed: 2 ** 32 - 1,
    });
    assert.equal(continueOptions({ maxTokens: '3.6', temperature: 0, seed: 1 }).maxTokens, 4);
  });
});
