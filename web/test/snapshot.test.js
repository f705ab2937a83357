// Snapshots: a real (tiny) model's run written and read back bit for bit, and every kind of bad
// file refused with an error naming the field, before anything would be drawn.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAttention } from '../src/index.js';
import { layerVisibility } from '../src/interpret/layer-masks.js';
import { attentionRollout, loadModel } from '../src/models/index.js';
import { SNAPSHOT_LIMITS, snapshotBytes } from '../src/snapshot/format.js';
import { readSnapshot, snapshotHead } from '../src/snapshot/read.js';
import { writeSnapshot } from '../src/snapshot/write.js';
import { tinyModel } from './support/tiny-models.mjs';

const TEXT = 'Once upon a time there was a girl';
let attention, model, run, written;

before(async () => {
  attention = await createAttention({ backend: 'wasm-simd', models: true });
  model = await loadModel(tinyModel('gpt-neo'), { attention });
  const result = await model.run(TEXT);
  const n = result.tokens.length;
  const { layers, heads } = model.info;
  const visible = layerVisibility(attention, model.info.layerMasks, n);
  run = {
    model: { id: 'roneneldan/TinyStories-1M', revision: 'main', ...model.info },
    text: TEXT,
    pair: null,
    tokens: result.tokens,
    attention: result.attention,
    visible,
    layerMasks: model.info.layerMasks,
    surgery: null,
    predictions: result.predictions,
    selected: { layer: 1, head: 1 },
  };
  written = writeSnapshot(run, { layers: [1, 2], heads: [0, 1] });
  assert.equal(layers, 3);
  assert.equal(heads, 2);
});
after(() => {
  model.dispose();
  attention.dispose();
});

// A copy of the written snapshot with `change` applied to it.
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

describe('snapshot round trip', () => {
  it('reads back the same bits of every included head, and the masks', () => {
    const text = JSON.stringify(written);
    const read = readSnapshot(text);
    assert.deepEqual(read.layers, [1, 2]);
    assert.equal(read.n, run.tokens.length);
    const n = read.n;
    for (const layer of [1, 2]) {
      for (const head of [0, 1]) {
        const { weights, mask } = snapshotHead(read, layer, head);
        const at = (layer * 2 + head) * n * n;
        assert.deepEqual(weights, run.attention.subarray(at, at + n * n));
        assert.deepEqual(mask, run.visible[layer]);
      }
    }
    assert.equal(snapshotHead(read, 0, 0), null, 'layer 0 was not included');
    assert.deepEqual(read.masks.layerMasks, ['causal+local:2', 'causal']);
    assert.deepEqual(read.predictions, run.predictions);
    assert.deepEqual(read.selected, { layer: 1, head: 1 });
    // The size the page announces before writing is close to what it writes.
    const estimate = snapshotBytes({ layers: 2, heads: 2, n });
    assert.ok(
      Math.abs(estimate - text.length) / text.length < 0.5,
      `${estimate} vs ${text.length}`,
    );
  });
});

describe('bad snapshots', () => {
  it('refuses what is not a snapshot of this version', () => {
    refuses('{"format": "something else"}', 'snapshot.format', 'TypeError');
    refuses(
      changed((s) => (s.version = 2)),
      'snapshot.version',
    );
    refuses('not json', 'snapshot.file', 'TypeError');
    refuses('[]', 'snapshot.file', 'TypeError');
  });

  it('checks counts against each other: tokens, layers, heads and N x N', () => {
    refuses(
      changed((s) => s.tokens.pop()),
      'snapshot.attention.data',
    );
    refuses(
      changed((s) => (s.heads = [0])),
      'snapshot.attention.data',
    );
    refuses(
      changed((s) => (s.layers = [1, 1])),
      'snapshot.layers',
      'TypeError',
    );
    refuses(
      changed((s) => (s.layers = [1, 3])),
      'snapshot.layers[1]',
    );
    refuses(
      changed((s) => s.masks.layerMasks.pop()),
      'snapshot.masks.layerMasks',
    );
    refuses(
      changed((s) => (s.visible.data = s.visible.data.slice(4))),
      'snapshot.visible.data',
    );
  });

  it('checks types, offsets and caps', () => {
    refuses(
      changed((s) => (s.tokens[0].start = '0')),
      'snapshot.tokens[0].start',
      'TypeError',
    );
    refuses(
      changed((s) => (s.tokens[2].end = TEXT.length + 1)),
      'snapshot.tokens[2].end',
    );
    refuses(
      changed((s) => (s.tokens[1].segment = 1)),
      'snapshot.tokens[1].segment',
    );
    refuses(
      changed((s) => (s.model.heads = 1e9)),
      'snapshot.model.heads',
    );
    refuses(
      changed((s) => (s.attention.data = '!!!!')),
      'snapshot.attention.data',
    );
    refuses(
      changed((s) => (s.predictions[0].p = 2)),
      'snapshot.predictions[0].p',
      'TypeError',
    );
    const tokens = Array.from({ length: SNAPSHOT_LIMITS.tokens + 1 }, () => written.tokens[0]);
    refuses(
      changed((s) => (s.tokens = tokens)),
      'snapshot.tokens',
    );
  });

  it('checks the weights: probabilities, zero where masked, rows that sum to 1', () => {
    const withWeight = (index, value) =>
      changed((s) => {
        const bytes = Uint8Array.from(atob(s.attention.data), (c) => c.charCodeAt(0));
        new DataView(bytes.buffer).setFloat32(index * 4, value, true);
        s.attention.data = btoa(String.fromCharCode(...bytes));
      });
    const n = written.tokens.length;
    refuses(withWeight(0, Number.NaN), 'snapshot.attention[0][0][0][0]');
    refuses(withWeight(0, 1.5), 'snapshot.attention[0][0][0][0]');
    // Layer 1 is causal+local: row 0 hides key 1.
    refuses(withWeight(1, 0.25), 'snapshot.attention[0][0][0][1]');
    // Row 1 sees keys 0 and 1; moving weight off key 0 breaks its sum.
    refuses(withWeight(n, 0), 'snapshot.attention[0][0][1]');
  });
});

describe('the rollout a snapshot may carry', () => {
  const shape = () => ({ layers: 3, heads: 2, n: run.tokens.length });
  const withRollout = () =>
    writeSnapshot(
      { ...run, rollout: attentionRollout(run.attention, shape()) },
      { layers: [1], heads: [0] },
    );

  it('reads back the same bits; a snapshot without one reads null', () => {
    const read = readSnapshot(JSON.stringify(withRollout()));
    assert.deepEqual(read.rollout, attentionRollout(run.attention, shape()));
    assert.equal(readSnapshot(JSON.stringify(written)).rollout, null);
  });

  it('refuses a rollout of the wrong size, values that are no shares, rows off 1', () => {
    const edited = (change) => {
      const copy = withRollout();
      change(copy.rollout);
      return JSON.stringify(copy);
    };
    const withValue = (index, value) =>
      edited((field) => {
        const bytes = Uint8Array.from(atob(field.data), (c) => c.charCodeAt(0));
        new DataView(bytes.buffer).setFloat32(index * 4, value, true);
        field.data = btoa(String.fromCharCode(...bytes));
      });
    const n = run.tokens.length;
    refuses(
      edited((field) => (field.data = field.data.slice(8))),
      'snapshot.rollout.data',
    );
    refuses(
      edited((field) => (field.dtype = 'float64')),
      'snapshot.rollout',
      'TypeError',
    );
    refuses(withValue(n + 1, Number.NaN), 'snapshot.rollout[1][1]');
    refuses(withValue(n + 1, -0.5), 'snapshot.rollout[1][1]');
    refuses(withValue(0, 0.5), 'snapshot.rollout[0]');
    refuses(JSON.stringify({ ...withRollout(), rollout: 'x' }), 'snapshot.rollout', 'TypeError');
  });
});
