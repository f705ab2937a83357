// Vision transformers through loadModel() and model.run(image): tiny checkpoints in the Hub's
// layouts (tests/models/make_tiny_vit.py: ViTForImageClassification, DINO's ViTModel, Dinov2Model
// on its trained grid and on an uneven one that interpolates its position embeddings, DINOv2
// with register tokens and its antialiased interpolation) against
// the torch reference (tests/models/vision_reference.py), which preprocesses each picture with
// Pillow. Tolerances: pixel_values equal (the preprocessing is bit-exact); every layer's and
// head's attention, every hidden state, the pooled output and every logit within 2e-5 absolute
// (float32 against float64; measured ~6e-7 for attention). Then bad pictures and what the model
// does after them.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { describeModel, loadModel, SUPPORTED_MODEL_TYPES } from '../src/models/index.js';
import { mulberry32 } from '../scripts/random.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'attnlens-vision-models-'));
const TOLERANCE = 2e-5;

// Seeded RGBA pictures: a landscape one and a portrait one (each model resizes and crops them).
const PICTURES = [
  { name: 'landscape', width: 60, height: 45 },
  { name: 'portrait', width: 23, height: 50 },
];

function picture({ width, height }, seed) {
  const next = mulberry32(seed);
  const data = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < data.length; i++) data[i] = next() & 255;
  return data;
}

let references;
before(() => {
  execFileSync('/usr/bin/python3', [join(repo, 'tests/models/make_tiny_vit.py'), out]);
  const cases = [];
  for (const [i, p] of PICTURES.entries()) {
    p.data = picture(p, 100 + i);
    p.file = join(out, `${p.name}.rgba`);
    writeFileSync(p.file, p.data);
  }
  for (const model of ['vit', 'dino-vit', 'dinov2', 'dinov2-wide', 'dinov2-registers']) {
    for (const p of PICTURES) {
      cases.push({ folder: join(out, model), rgba: p.file, width: p.width, height: p.height });
    }
  }
  const answer = execFileSync(
    '/usr/bin/python3',
    [join(repo, 'tests/models/vision_reference.py')],
    {
      input: JSON.stringify({ cases }),
      maxBuffer: 1 << 28,
    },
  );
  references = new Map(
    JSON.parse(answer).cases.map((ref, i) => [`${cases[i].folder}|${cases[i].rgba}`, ref]),
  );
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

function assertClose(got, want, what) {
  const worst = largestDifference(got, want);
  assert.ok(
    worst.difference <= TOLERANCE,
    `${what}: |${got[worst.index]} - ${want[worst.index]}| = ${worst.difference} at ${worst.index}`,
  );
}

describe('vision transformers against the torch reference', () => {
  assert.ok(SUPPORTED_MODEL_TYPES.includes('vit') && SUPPORTED_MODEL_TYPES.includes('dinov2'));

  for (const [name, expected] of Object.entries({
    vit: { classifier: true, grids: [[4, 4]], registers: 0, pooled: false },
    'dino-vit': { classifier: false, grids: [[4, 4]], registers: 0, pooled: true },
    dinov2: { classifier: false, grids: [[4, 4]], registers: 0, pooled: true },
    'dinov2-wide': { classifier: false, grids: [[4, 6]], registers: 0, pooled: true },
    'dinov2-registers': { classifier: false, grids: [[4, 5]], registers: 3, pooled: true },
  })) {
    it(`${name}: every layer's and head's attention, the grid, the labels`, async () => {
      const model = await loadModel(join(out, name));
      try {
        const { layers, heads } = model.info;
        assert.equal(model.info.vision, true);
        assert.equal(model.info.predicts, expected.classifier);
        const pooling = name === 'dino-vit' ? 'pooler' : expected.pooled ? 'class-token' : null;
        assert.equal(model.info.pooling, pooling);
        for (const p of PICTURES) {
          const ref = references.get(`${join(out, name)}|${p.file}`);
          const image = { data: p.data, width: p.width, height: p.height };
          const result = await model.run(image, {
            returnLogits: expected.classifier,
            returnPixelValues: true,
            returnHiddenStates: true,
            returnPooled: expected.pooled,
          });
          const where = `${name}, ${p.name}`;
          assert.deepEqual([result.grid.rows, result.grid.columns], ref.grid, where);
          assert.deepEqual([result.grid.rows, result.grid.columns], expected.grids[0], where);
          assert.equal(largestDifference(result.pixelValues, ref.pixel_values).difference, 0);
          const n = result.tokens;
          assert.equal(result.registers, expected.registers);
          assert.equal(n, 1 + expected.registers + ref.grid[0] * ref.grid[1]);
          assert.equal(result.attention.length, layers * heads * n * n);
          assertClose(result.attention, ref.attention, `${where} attention`);
          // The embeddings and each layer's output; the last after the final layernorm.
          const { hidden } = model.info;
          const last = layers * n * hidden;
          assert.equal(result.hiddenStates.length, last + n * hidden);
          assertClose(
            result.hiddenStates.subarray(0, last),
            ref.hidden_states.slice(0, last),
            `${where} hidden states`,
          );
          assertClose(
            result.hiddenStates.subarray(last),
            ref.last_hidden_state,
            `${where} last hidden state`,
          );
          if (expected.pooled) assertClose(result.pooled, ref.pooled, `${where} pooled`);
          else assert.equal(ref.pooled, null);
          if (expected.classifier) {
            assertClose(result.logits, ref.logits, `${where} logits`);
            const order = [...ref.logits.keys()].sort((a, b) => ref.logits[b] - ref.logits[a]);
            assert.deepEqual(
              result.labels.map((l) => l.index),
              order.slice(0, 5),
            );
            assert.equal(result.labels[0].label, model.labels[order[0]]);
            const total = ref.logits.reduce((s, x) => s + Math.exp(x), 0);
            assert.ok(Math.abs(result.labels[0].p - Math.exp(ref.logits[order[0]]) / total) < 1e-5);
          } else {
            assert.equal(result.labels, null);
          }
        }
      } finally {
        model.dispose();
      }
    });
  }
});

describe('bad pictures get clear errors and leave the model usable', () => {
  it('zero size, a huge claim, RGB bytes, a corrupt file, then a good picture', async () => {
    const model = await loadModel(join(out, 'vit'));
    try {
      const bad = [
        [{ data: new Uint8Array(0), width: 0, height: 3 }, RangeError, 'image.width'],
        [{ data: new Uint8Array(4), width: 30000, height: 30000 }, RangeError, 'image.width'],
        [{ data: new Uint8Array(5 * 5 * 3), width: 5, height: 5 }, RangeError, 'image.data'],
        [new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2])]), TypeError, 'image'],
        ['picture.png', TypeError, 'image'],
      ];
      for (const [image, Class, parameter] of bad) {
        await assert.rejects(model.run(image), (error) => {
          assert.ok(error instanceof Class, error.message);
          assert.equal(error.parameter, parameter, error.message);
          assert.ok(error.code, error.message);
          return true;
        });
      }
      await assert.rejects(model.run(PICTURES[0], { topK: 6 }), RangeError);
      await assert.rejects(model.run(PICTURES[0], { masks: 'local:1' }), RangeError);
      await assert.rejects(
        model.run(PICTURES[0], { returnPooled: true }),
        (e) =>
          e instanceof TypeError && e.parameter === 'returnPooled' && /no pooler/.test(e.message),
      );
      const result = await model.run(PICTURES[0]);
      assert.equal(result.labels.length, 5);
    } finally {
      model.dispose();
    }
    await assert.rejects(model.run(PICTURES[0]), (e) => e.code === 'disposed');
  });

  it('a ViT preprocessed to a size it was not trained at is refused by the core', async () => {
    const folder = join(out, 'vit-resized');
    execFileSync('cp', ['-r', join(out, 'vit'), folder]);
    writeFileSync(
      join(folder, 'preprocessor_config.json'),
      JSON.stringify({ feature_extractor_type: 'ViTFeatureExtractor', size: 40, resample: 2 }),
    );
    const model = await loadModel(folder);
    try {
      await assert.rejects(
        model.run(PICTURES[0]),
        (e) =>
          e instanceof RangeError && e.parameter === 'pixels' && /trained 4 x 4/.test(e.message),
      );
    } finally {
      model.dispose();
    }
  });
});

describe("a camera loop: the maps into the caller's buffer", () => {
  it('attentionBuffer receives the same maps each frame; a wrong one is refused', async () => {
    const model = await loadModel(join(out, 'dinov2-registers'));
    try {
      const [first, second] = PICTURES;
      const fresh = [await model.run(first), await model.run(second)];
      const buffer = new Float32Array(fresh[0].attention.length).fill(-1);
      for (const [i, p] of [first, first].entries()) {
        const result = await model.run(p, { attentionBuffer: buffer, returnPixelValues: true });
        assert.equal(result.attention, buffer, `frame ${i}: the caller's own array`);
        assert.deepEqual(result.attention, fresh[0].attention);
        assert.equal(result.pixelValues.length, 3 * result.input.height * result.input.width);
      }
      // RGBA read in place: a Uint8Array and an ImageData-like Uint8ClampedArray agree.
      const bytes = { ...first, data: new Uint8Array(first.data) };
      assert.deepEqual((await model.run(bytes)).attention, fresh[0].attention);
      const refused = [
        [new Float32Array(buffer.length - 1), RangeError, 'shape_mismatch'],
        [new Float64Array(buffer.length), TypeError, 'invalid_argument'],
        [Array.from(buffer), TypeError, 'invalid_argument'],
      ];
      for (const [attentionBuffer, Class, code] of refused) {
        await assert.rejects(model.run(first, { attentionBuffer }), (error) => {
          assert.ok(error instanceof Class, error.message);
          assert.equal(error.code, code, error.message);
          assert.equal(error.parameter, 'attentionBuffer', error.message);
          return true;
        });
      }
      // Pixels are read in place: a buffer transferred while run() awaits is refused.
      const moved = { ...first, data: new Uint8Array(first.data) };
      const running = model.run(moved);
      structuredClone(moved.data.buffer, { transfer: [moved.data.buffer] });
      await assert.rejects(running, (error) => {
        assert.ok(error instanceof TypeError, error.message);
        assert.equal(error.parameter, 'image.data', error.message);
        return true;
      });
      // Still usable, and a fresh array again without the option.
      assert.deepEqual((await model.run(second)).attention, fresh[1].attention);
    } finally {
      model.dispose();
    }
  });
});

describe('bad vision checkpoints get clear errors', () => {
  // A copy of a fixture with one file rewritten.
  function variant(from, name, file, edit) {
    const folder = join(out, name);
    execFileSync('cp', ['-r', join(out, from), folder]);
    if (file) {
      const path = join(folder, file);
      writeFileSync(path, JSON.stringify(edit(JSON.parse(readFileSync(path, 'utf8')))));
    }
    return folder;
  }

  it('a missing or bad preprocessor_config.json, a config unlike the weights', async () => {
    const missing = variant('dinov2', 'no-preprocessor');
    rmSync(join(missing, 'preprocessor_config.json'));
    await assert.rejects(loadModel(missing), (e) => e.code === 'not_found');
    const bad = variant('vit', 'bad-preprocessor', 'preprocessor_config.json', (c) => ({
      ...c,
      image_std: [0.5, 0, 0.5],
    }));
    await assert.rejects(
      loadModel(bad),
      (e) => e instanceof RangeError && /image_std/.test(e.parameter),
    );
    const patch = variant('vit', 'bad-patch', 'config.json', (c) => ({ ...c, patch_size: 4 }));
    await assert.rejects(loadModel(patch), (e) => e.code === 'shape_mismatch');
    const tiny = variant('vit', 'bad-image-size', 'config.json', (c) => ({ ...c, image_size: 4 }));
    await assert.rejects(
      loadModel(tiny),
      (e) => e instanceof RangeError && /image_size/.test(e.message),
    );
    const labels = variant('vit', 'bad-labels', 'config.json', (c) => ({
      ...c,
      id2label: { 0: 'a', 7: 'b' },
    }));
    await assert.rejects(
      loadModel(labels),
      (e) => e instanceof RangeError && /id2label/.test(e.message),
    );
    const swiglu = variant('dinov2', 'swiglu', 'config.json', (c) => ({
      ...c,
      use_swiglu_ffn: true,
    }));
    await assert.rejects(loadModel(swiglu), (e) => /use_swiglu_ffn/.test(e.message));
  });

  it('describeModel lists a vision model with its preprocessor and no tokenizer', async () => {
    const described = await describeModel(join(out, 'dinov2-registers'));
    assert.deepEqual(described.missing, []);
    assert.equal(described.modelType, 'dinov2_with_registers');
    assert.equal(described.vision, true);
    assert.equal(described.encoderLayers, undefined);
    assert.ok(described.files.some((f) => f.name === 'preprocessor_config.json'));
    assert.equal(described.fits, true);
  });

  it('f16 weights give the same maps within half precision', async () => {
    const [f32, f16] = await Promise.all([
      loadModel(join(out, 'dinov2-wide')),
      loadModel(join(out, 'dinov2-wide'), { dtype: 'f16' }),
    ]);
    try {
      const a = await f32.run(PICTURES[1]);
      const b = await f16.run(PICTURES[1]);
      assert.ok(largestDifference(b.attention, a.attention).difference < 5e-3);
    } finally {
      f32.dispose();
      f16.dispose();
    }
  });
});
