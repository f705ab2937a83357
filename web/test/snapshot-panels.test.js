// A snapshot's ablation and logit lens (the page's "Which heads matter" and "Logit lens"
// panels): a tiny model's headEffects, ablated run and lens written and read back bit for bit,
// and bad parts refused with an error naming the field.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAttention } from '../src/index.js';
import { layerVisibility } from '../src/interpret/layer-masks.js';
import { loadModel } from '../src/models/index.js';
import { readSnapshot } from '../src/snapshot/read.js';
import { writeSnapshot } from '../src/snapshot/write.js';
import { ablationField, logitLensField } from '../src/snapshot/write-panels.js';
import { tinyModel } from './support/tiny-models.mjs';

const TEXT = 'Once upon a time there was a girl';
let attention, model, written, effects, lensRun, ablation;

before(async () => {
  attention = await createAttention({ backend: 'wasm-simd', models: true });
  model = await loadModel(tinyModel('gpt-neo'), { attention });
  const { layers, heads } = model.info;
  const clean = await model.run(TEXT, { lens: { topK: 3 } });
  const measured = await model.headEffects(TEXT);
  effects = new Float32Array(layers * heads);
  for (const { layer, head, delta } of measured.heads) effects[layer * heads + head] = delta;
  const off = [
    { layer: 1, head: 0, mode: 'zero' },
    { layer: 2, head: 1, mode: 'mean' },
  ];
  const ablated = await model.run(TEXT, { ablate: off });
  ablation = {
    position: measured.position,
    target: measured.target,
    logProb: measured.logProb,
    effects,
    off,
    before: clean.predictions,
    after: ablated.predictions,
  };
  lensRun = clean;
  const n = clean.tokens.length;
  written = {
    ...writeSnapshot(
      {
        model: { id: 'roneneldan/TinyStories-1M', revision: 'main', ...model.info },
        text: TEXT,
        pair: null,
        tokens: clean.tokens,
        attention: clean.attention,
        visible: layerVisibility(attention, model.info.layerMasks, n),
        layerMasks: model.info.layerMasks,
        surgery: null,
        predictions: clean.predictions,
        selected: { layer: 0, head: 0 },
      },
      { layers: [0], heads: [0] },
    ),
    ablation: ablationField(ablation),
    logitLens: logitLensField({
      topK: 3,
      tokens: clean.tokens.map((token) => token.text),
      top: clean.lens.top,
    }),
  };
});
after(() => {
  model.dispose();
  attention.dispose();
});

const changed = (change) => {
  const copy = JSON.parse(JSON.stringify(written));
  change(copy);
  return JSON.stringify(copy);
};
const refuses = (text, parameter, name = 'RangeError') =>
  assert.throws(
    () => readSnapshot(text),
    (error) => {
      assert.equal(error.name, name, error.message);
      assert.equal(error.parameter, parameter, error.message);
      return true;
    },
  );
const base64 = (values) => Buffer.from(values.buffer).toString('base64');

describe('a snapshot of an ablation and a logit lens', () => {
  it('reads back the heads switched off, both predictions and every effect', () => {
    const read = readSnapshot(JSON.stringify(written));
    assert.deepEqual(read.ablation.off, ablation.off);
    assert.deepEqual(read.ablation.effects, effects);
    assert.equal(read.ablation.logProb, ablation.logProb);
    assert.equal(read.ablation.target.id, ablation.target.id);
    assert.deepEqual(read.ablation.before, ablation.before);
    assert.deepEqual(read.ablation.after, ablation.after);
    assert.notDeepEqual(read.ablation.before, read.ablation.after, 'switching heads off shows');
  });

  it('reads back every state and position of the lens, top k with probabilities', () => {
    const { logitLens } = readSnapshot(JSON.stringify(written));
    const { layers } = model.info;
    const n = lensRun.tokens.length;
    assert.equal(logitLens.states, layers + 1);
    assert.equal(logitLens.tokens.length, n);
    for (let s = 0; s <= layers; s++) {
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < 3; j++) {
          const at = (s * n + i) * 3 + j;
          const want = lensRun.lens.top[s][i][j];
          const word = logitLens.vocabulary[logitLens.top[at]];
          assert.equal(word.id, want.id);
          assert.equal(word.text, want.text);
          assert.equal(logitLens.probabilities[at], Math.fround(want.p));
        }
      }
    }
    assert.ok(logitLens.vocabulary.length < (layers + 1) * n * 3, 'repeated tokens listed once');
  });

  it('reads null for both in a snapshot without them, and ablation effects may be null', () => {
    const plain = changed((s) => {
      delete s.ablation;
      delete s.logitLens;
    });
    const read = readSnapshot(plain);
    assert.equal(read.ablation, null);
    assert.equal(read.logitLens, null);
    const noEffects = readSnapshot(changed((s) => (s.ablation.effects = null)));
    assert.equal(noEffects.ablation.effects, null);
  });
});

describe('bad ablations and lenses', () => {
  it('refuses heads outside the model, twice, or in an unknown mode', () => {
    refuses(
      changed((s) => (s.ablation.off[0].layer = 3)),
      'snapshot.ablation.off[0].layer',
    );
    refuses(
      changed((s) => (s.ablation.off[1] = { ...s.ablation.off[0] })),
      'snapshot.ablation.off[1]',
      'TypeError',
    );
    refuses(
      changed((s) => (s.ablation.off[0].mode = 'constructor')),
      'snapshot.ablation.off[0].mode',
      'TypeError',
    );
    refuses(
      changed((s) => (s.ablation.off = Array(100).fill({ layer: 0, head: 0, mode: 'zero' }))),
      'snapshot.ablation.off',
    );
  });

  it('refuses effects of the wrong size or not finite, and log-probabilities above 0', () => {
    refuses(
      changed((s) => (s.ablation.effects.data = base64(new Float32Array(5)))),
      'snapshot.ablation.effects.data',
    );
    const bad = new Float32Array(effects);
    bad[2] = NaN;
    refuses(
      changed((s) => (s.ablation.effects.data = base64(bad))),
      'snapshot.ablation.effects[2]',
    );
    refuses(
      changed((s) => (s.ablation.logProb = 0.5)),
      'snapshot.ablation.logProb',
      'TypeError',
    );
    refuses(
      changed((s) => (s.ablation.after[0].p = 2)),
      'snapshot.ablation.after[0].p',
      'TypeError',
    );
    refuses(
      changed((s) => (s.ablation.target = 'dog')),
      'snapshot.ablation.target',
      'TypeError',
    );
  });

  it('refuses a lens whose indices leave the vocabulary list or whose sizes disagree', () => {
    const read = readSnapshot(JSON.stringify(written)).logitLens;
    const outside = new Int32Array(read.top);
    outside[7] = read.vocabulary.length;
    refuses(
      changed((s) => (s.logitLens.top.data = base64(outside))),
      'snapshot.logitLens[0][2][1].top',
    );
    const negative = new Int32Array(read.top);
    negative[0] = -1;
    refuses(
      changed((s) => (s.logitLens.top.data = base64(negative))),
      'snapshot.logitLens[0][0][0].top',
    );
    refuses(
      changed((s) => s.logitLens.tokens.pop()),
      'snapshot.logitLens.top.data',
    );
    refuses(
      changed((s) => (s.logitLens.topK = 11)),
      'snapshot.logitLens.topK',
    );
    refuses(
      changed((s) => (s.logitLens.top.dtype = 'float32')),
      'snapshot.logitLens.top',
      'TypeError',
    );
  });

  it('refuses probabilities that are none, not best first, or sum past 1', () => {
    const read = readSnapshot(JSON.stringify(written)).logitLens;
    const edit = (at, value) => {
      const p = new Float32Array(read.probabilities);
      p[at] = value;
      return changed((s) => (s.logitLens.probabilities.data = base64(p)));
    };
    refuses(edit(4, -0.1), 'snapshot.logitLens[0][1][1].p');
    refuses(edit(5, Infinity), 'snapshot.logitLens[0][1][2].p');
    refuses(edit(4, read.probabilities[3] + 0.01), 'snapshot.logitLens[0][1][1].p');
    const p = new Float32Array(read.probabilities);
    p.set([0.9, 0.9, 0.9], 0);
    refuses(
      changed((s) => (s.logitLens.probabilities.data = base64(p))),
      'snapshot.logitLens.probabilities',
    );
  });

  it('caps a lens too large before decoding it', () => {
    refuses(
      changed((s) => {
        s.logitLens.topK = 10;
        s.logitLens.tokens = Array(1024).fill('x');
        s.logitLens.vocabulary = [];
      }),
      'snapshot.logitLens.top.data',
    );
    refuses(
      changed((s) => (s.logitLens.vocabulary = Array(1000).fill({ id: 0, text: '' }))),
      'snapshot.logitLens.vocabulary',
    );
  });
});
