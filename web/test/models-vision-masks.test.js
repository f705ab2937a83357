// Mask surgery on pictures: model.run(image, { masks }) with patch:K, the 2-D local window over
// the patch grid (the class token and registers stay global), against the torch reference
// (tests/models/vision_reference.py), which adds the same window to the scores as -inf, on the
// tiny checkpoints of tests/models/make_tiny_vit.py. Tolerance as models-vision.test.js: every
// attention weight and logit within 2e-5. A window one patch too wide in the reference must
// fail that comparison, so the check can tell an off-by-one window apart. Then the errors, and
// a hostile checkpoint's ViT pooler (run({ returnPooled }); its values: models-vision.test.js).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { loadModel } from '../src/models/index.js';
import { checkMasks } from '../src/models/layer-masks.js';
import { readSafetensors, writeSafetensors } from '../src/models/files/safetensors.js';
import { mulberry32 } from '../scripts/random.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'attnlens-vision-masks-'));
const TOLERANCE = 2e-5;
const PICTURE = { width: 60, height: 45 };

// Each case: a model, the masks run() gets, and the reference's windows (one per layer; the
// tiny models have 2 layers).
const CASES = [
  { model: 'vit', masks: 'patch:3', windows: [3, 3] },
  { model: 'vit', masks: ['patch:1', 'global'], windows: [1, null] },
  { model: 'vit', masks: 'window2d:5', windows: [5, 5] },
  { model: 'dinov2-wide', masks: 'patch:3', windows: [3, 3] },
  { model: 'dinov2-registers', masks: ['global', 'patch:3'], windows: [null, 3] },
  // Off by one: the reference's window a patch wider than attnlens' patch:3.
  { model: 'vit', masks: 'patch:3', windows: [5, 5], offByOne: true },
  { model: 'dinov2-registers', masks: 'patch:3', windows: [5, 5], offByOne: true },
];

let references;
before(() => {
  execFileSync('/usr/bin/python3', [join(repo, 'tests/models/make_tiny_vit.py'), out]);
  const next = mulberry32(7);
  PICTURE.data = new Uint8ClampedArray(PICTURE.width * PICTURE.height * 4).map(() => next() & 255);
  const file = join(out, 'picture.rgba');
  writeFileSync(file, PICTURE.data);
  const cases = CASES.map(({ model, windows }) => ({
    folder: join(out, model),
    rgba: file,
    width: PICTURE.width,
    height: PICTURE.height,
    windows,
  }));
  const answer = execFileSync(
    '/usr/bin/python3',
    [join(repo, 'tests/models/vision_reference.py')],
    { input: JSON.stringify({ cases }), maxBuffer: 1 << 28 },
  );
  references = JSON.parse(answer).cases;
});
after(() => rmSync(out, { recursive: true, force: true }));

function largestDifference(got, want) {
  assert.equal(got.length, want.length, 'length');
  let worst = { difference: 0, index: -1 };
  for (let i = 0; i < want.length; i++) {
    const difference = Math.abs(got[i] - want[i]);
    if (!(difference <= worst.difference)) worst = { difference, index: i };
  }
  return worst;
}

const image = () => ({ data: PICTURE.data, width: PICTURE.width, height: PICTURE.height });

describe('patch windows against the torch reference', () => {
  CASES.forEach(({ model: name, masks, windows, offByOne }, i) => {
    const what = `${name}, ${JSON.stringify(masks)} against windows ${JSON.stringify(windows)}`;
    it(`${what}${offByOne ? ': an off-by-one window fails' : ''}`, async () => {
      const model = await loadModel(join(out, name));
      try {
        const ref = references[i];
        const predicts = model.info.predicts;
        const result = await model.run(image(), { masks, returnLogits: predicts });
        const full = await model.run(image(), { returnLogits: predicts });
        const attention = largestDifference(result.attention, ref.attention);
        const logits = predicts ? largestDifference(result.logits, ref.logits).difference : 0;
        if (offByOne) {
          assert.ok(attention.difference > 100 * TOLERANCE, `${what}: ${attention.difference}`);
          return;
        }
        assert.ok(attention.difference <= TOLERANCE, `${what}: attention ${attention.difference}`);
        assert.ok(logits <= TOLERANCE, `${what}: logits ${logits}`);
        // The window changes what the model computes: not the full attention's maps.
        assert.ok(largestDifference(full.attention, ref.attention).difference > 1e-3, what);
        if (predicts) {
          const order = [...ref.logits.keys()].sort((a, b) => ref.logits[b] - ref.logits[a]);
          assert.deepEqual(
            result.labels.map((l) => l.index),
            order.slice(0, 5),
          );
        }
      } finally {
        model.dispose();
      }
    });
  });

  it('patch:1 leaves each patch only itself and the class token', async () => {
    const model = await loadModel(join(out, 'dinov2-registers'));
    try {
      const { attention, tokens: n, registers } = await model.run(image(), { masks: 'patch:1' });
      const first = 1 + registers;
      for (let h = 0; h < model.info.heads * model.info.layers; h++) {
        for (let i = first; i < n; i++) {
          for (let j = first; j < n; j++) {
            const w = attention[(h * n + i) * n + j];
            assert.ok(i === j ? w > 0 : w === 0, `head ${h}, ${i} -> ${j}: ${w}`);
          }
        }
      }
    } finally {
      model.dispose();
    }
  });
});

describe('bad masks on a picture get clear errors and leave the model usable', () => {
  it('K zero, even, wider than the grid; text patterns; text models refuse patch:K', async () => {
    const model = await loadModel(join(out, 'vit'));
    try {
      const bad = [
        ['patch:0', RangeError, 'masks', /positive integer/],
        ['patch:4', RangeError, 'masks', /must be odd/],
        ['patch', RangeError, 'masks', null], // patch:3 by default: fine, checked below
        ['patch:9', RangeError, 'masks', /at most 7/],
        ['patch:x', RangeError, 'masks', /positive integer/],
        ['local:1', RangeError, 'masks', /not a line of text/],
        ['causal+patch:3', RangeError, 'masks', /not a line of text/],
        ['patch:3+local:1', RangeError, 'masks', /only one/],
        ['topk:2', RangeError, 'masks', /topk and lsh/],
        [['patch:3', 'patch:2'], RangeError, 'masks[1]', /must be odd/],
        [['patch:3'], RangeError, 'masks', /one mask per layer \(2\)/],
        [3, TypeError, 'masks', /mask string/],
        [['patch:3', 3], TypeError, 'masks[1]', /mask string/],
      ];
      for (const [masks, Class, parameter, message] of bad) {
        if (message === null) {
          assert.equal((await model.run(image(), { masks })).tokens, 17);
          continue;
        }
        await assert.rejects(model.run(image(), { masks }), (error) => {
          assert.ok(error instanceof Class, `${masks}: ${error.message}`);
          assert.equal(error.parameter, parameter, error.message);
          assert.ok(error.code, error.message);
          assert.match(error.message, message);
          return true;
        });
      }
      const widest = await model.run(image(), { masks: 'patch:7' });
      const full = await model.run(image());
      assert.ok(largestDifference(widest.attention, full.attention).difference < 1e-6);
      assert.equal(widest.labels[0].index, full.labels[0].index);
    } finally {
      model.dispose();
    }
    assert.throws(
      () => checkMasks(['global', 'patch:3'], 2),
      (e) => e instanceof RangeError && e.parameter === 'masks[1]' && /text model/.test(e.message),
    );
  });
});

describe('a ViT pooler from a hostile checkpoint is checked before it is used', () => {
  // DINO's layout with its pooler rewritten: `edit(entries)` changes the tensors.
  function variant(name, edit) {
    const folder = join(out, name);
    cpSync(join(out, 'dino-vit'), folder, { recursive: true });
    const file = join(folder, 'model.safetensors');
    const { entries } = readSafetensors(new Uint8Array(readFileSync(file)));
    const tensors = new Map(entries.map((e) => [e.name, { ...e, data: e.bytes.slice() }]));
    edit(tensors);
    writeFileSync(file, writeSafetensors(tensors));
    return folder;
  }

  it('a pooler of the wrong shape or with a NaN is refused, naming the tensor', async () => {
    const shape = variant('pooler-shape', (tensors) => {
      const bias = tensors.get('pooler.dense.bias');
      tensors.set('pooler.dense.bias', {
        ...bias,
        shape: [bias.shape[0] - 1],
        data: bias.data.slice(4),
      });
    });
    await assert.rejects(
      loadModel(shape),
      (e) => e.code === 'shape_mismatch' && e.parameter === 'pooler.dense.bias',
    );
    const nan = variant('pooler-nan', (tensors) => {
      const weight = tensors.get('pooler.dense.weight');
      new Float32Array(weight.data.buffer)[3] = NaN;
    });
    await assert.rejects(
      loadModel(nan),
      (e) => e.parameter === 'pooler.dense.weight' && /NaN at element 3/.test(e.message),
    );
  });
});
