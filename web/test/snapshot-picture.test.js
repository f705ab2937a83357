// A picture's snapshot: a tiny vision transformer's real run (tests/models/make_tiny_vit.py)
// written and read back bit for bit, and every kind of bad file refused with an error naming the
// field: wrong shapes, huge sizes, weights that are no weights, and data URLs that are not the
// small PNG or JPEG they claim to be.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { attentionRollout } from '../src/interpret/rollout.js';
import { loadModel } from '../src/models/index.js';
import { readSnapshot } from '../src/snapshot/read.js';
import { PICTURE_LIMITS, pictureRun } from '../src/snapshot/picture.js';
import { writeSnapshot } from '../src/snapshot/write.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'attnlens-picture-snapshot-'));
const all = (count) => Array.from({ length: count }, (_, i) => i);
let images, runs;

// Pixels with structure, so the maps are not flat.
function pixels(width, height) {
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    data.set([(i * 7) % 256, (i * 13) % 256, ((i % width) * 9) % 256, 255], i * 4);
  }
  return { data, width, height };
}

before(async () => {
  execFileSync('/usr/bin/python3', [join(repo, 'tests/models/make_tiny_vit.py'), out]);
  execFileSync('/usr/bin/python3', [
    '-c',
    'import sys; from PIL import Image; im = Image.new("RGB", (24, 20), (200, 80, 20)); ' +
      'im.save(sys.argv[1] + "/p.png"); im.save(sys.argv[1] + "/p.jpg", quality=90); ' +
      'Image.new("RGB", (600, 8)).save(sys.argv[1] + "/wide.png")',
    out,
  ]);
  const url = (file, type) =>
    `data:${type};base64,${readFileSync(join(out, file)).toString('base64')}`;
  images = {
    png: url('p.png', 'image/png'),
    jpeg: url('p.jpg', 'image/jpeg'),
    wide: url('wide.png', 'image/png'),
  };
  runs = {};
  for (const name of ['vit', 'dinov2-registers']) {
    const model = await loadModel(join(out, name));
    const { info } = model;
    const run = await model.run(pixels(40, 30), info.predicts ? { topK: 3 } : {});
    const shape = { layers: info.layers, heads: info.heads, n: run.tokens };
    const rollout = attentionRollout(run.attention, shape, { rows: [0] });
    runs[name] = { info, run: { ...run, rollout } };
    model.dispose();
  }
});
after(() => rmSync(out, { recursive: true, force: true }));

function written(name = 'vit', { image = images.jpeg, layers, heads } = {}) {
  const { info, run } = runs[name];
  const snapshot = writeSnapshot(
    pictureRun({
      model: { id: `test/${name}`, revision: 'main', ...info },
      run,
      image,
      selected: { layer: 1, head: 1 },
    }),
    { layers: layers ?? all(info.layers), heads: heads ?? all(info.heads) },
  );
  return JSON.parse(JSON.stringify(snapshot));
}

const changed = (change, name) => {
  const copy = written(name);
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

describe('a picture snapshot', () => {
  it('round-trips every class-token row, the rollout, the grid and the labels', () => {
    for (const name of ['vit', 'dinov2-registers']) {
      const { info, run } = runs[name];
      const read = readSnapshot(JSON.stringify(written(name)));
      const { picture } = read;
      const patches = run.grid.rows * run.grid.columns;
      assert.equal(read.model.id, `test/${name}`);
      assert.deepEqual(read.layers, all(info.layers));
      assert.deepEqual(read.selected, { layer: 1, head: 1 });
      assert.deepEqual(picture.grid, run.grid);
      assert.deepEqual(picture.input, { width: run.input.width, height: run.input.height });
      assert.equal(picture.registers, run.registers);
      assert.equal(picture.patchSize, info.patchSize);
      assert.equal(picture.image, images.jpeg);
      assert.deepEqual([picture.imageWidth, picture.imageHeight], [24, 20]);
      const n = run.tokens;
      for (let l = 0; l < info.layers; l++) {
        for (let h = 0; h < info.heads; h++) {
          const from = (l * info.heads + h) * n * n + 1 + run.registers;
          const at = (l * info.heads + h) * patches;
          assert.deepEqual(
            picture.classAttention.subarray(at, at + patches),
            run.attention.subarray(from, from + patches),
          );
        }
      }
      assert.deepEqual(picture.rollout, run.rollout.subarray(1 + run.registers));
      if (run.labels) {
        assert.deepEqual(
          picture.labels,
          run.labels.map(({ label, p }) => ({ label, p })),
        );
      } else assert.equal(picture.labels, null);
    }
  });

  it('keeps only the layers and heads asked for, and takes a PNG', () => {
    const { info, run } = runs.vit;
    const read = readSnapshot(written('vit', { image: images.png, layers: [1], heads: [0] }));
    const patches = run.grid.rows * run.grid.columns;
    assert.equal(read.picture.classAttention.length, patches);
    const from = (1 * info.heads + 0) * run.tokens * run.tokens + 1;
    assert.deepEqual(read.picture.classAttention, run.attention.subarray(from, from + patches));
    // The exported head was left out: the first one kept opens.
    assert.deepEqual(read.selected, { layer: 1, head: 0 });
  });

  it('refuses wrong shapes and huge sizes', () => {
    refuses(
      changed((s) => (s.picture.grid.rows += 1)),
      'snapshot.picture.grid',
    );
    refuses(
      changed((s) => (s.picture.input = { width: 30000, height: 30000 })),
      'snapshot.picture.input.width',
    );
    refuses(
      changed((s) => Object.assign(s.picture.grid, { rows: 300, columns: 300 })),
      'snapshot.picture.grid.rows',
    );
    refuses(
      changed((s) => (s.picture.patchSize = 0)),
      'snapshot.picture.patchSize',
    );
    refuses(
      changed((s) => (s.layers = [0, 1, 2, 3])),
      'snapshot.layers',
    );
    // A layer fewer named than the rows hold: the data is the wrong length.
    refuses(
      changed((s) => (s.layers = [0])),
      'snapshot.picture.classAttention.data',
    );
    refuses(
      changed((s) => (s.picture.classAttention.data = s.picture.classAttention.data.slice(8))),
      'snapshot.picture.classAttention.data',
    );
    refuses(
      changed((s) => (s.picture.registers = -1)),
      'snapshot.picture.registers',
    );
    refuses(
      changed((s) => (s.picture.grid = [4, 4])),
      'snapshot.picture.grid',
      'TypeError',
    );
    refuses(
      changed((s) => delete s.picture.input),
      'snapshot.picture.input',
      'TypeError',
    );
  });

  it('refuses weights that are no weights', () => {
    const rows = (values) => ({
      dtype: 'float32',
      encoding: 'base64',
      data: Buffer.from(new Float32Array(values).buffer).toString('base64'),
    });
    const patches = runs.vit.run.grid.rows * runs.vit.run.grid.columns;
    const one = (fill) =>
      changed((s) => {
        s.layers = [0];
        s.heads = [0];
        s.picture.classAttention = rows(fill);
      });
    assert.equal(readSnapshot(one(new Array(patches).fill(0.5 / patches))).heads.length, 1);
    refuses(one(new Array(patches).fill(NaN)), 'snapshot.picture.classAttention[0][0]');
    refuses(one(new Array(patches).fill(1)), 'snapshot.picture.classAttention[0]');
    refuses(
      changed((s) => (s.picture.rollout = rows(new Array(patches).fill(-0.1)))),
      'snapshot.picture.rollout[0][0]',
    );
    // The rollout the widget draws: one weight per patch, summing to at most 1 (the class token
    // and registers keep the rest), and nothing else.
    refuses(
      changed((s) => (s.picture.rollout = rows(new Array(patches).fill(2 / patches)))),
      'snapshot.picture.rollout[0]',
    );
    refuses(
      changed((s) => (s.picture.rollout = rows(new Array(patches + 1).fill(0)))),
      'snapshot.picture.rollout.data',
    );
    refuses(
      changed((s) => (s.picture.rollout = { ...rows([0]), dtype: 'float64' })),
      'snapshot.picture.rollout',
      'TypeError',
    );
    assert.equal(readSnapshot(changed((s) => delete s.picture.rollout)).picture.rollout, null);
    refuses(
      changed((s) => (s.picture.labels = [{ label: 'cat', p: 2 }])),
      'snapshot.picture.labels[0].p',
      'TypeError',
    );
  });

  it('refuses a data URL that is not a small PNG or JPEG', () => {
    const withImage = (image) => changed((s) => (s.picture.image = image));
    const field = 'snapshot.picture.image';
    refuses(withImage('data:image/svg+xml;base64,PHN2Zy8+'), field, 'TypeError');
    refuses(withImage('https://example.com/cat.jpg'), field, 'TypeError');
    refuses(withImage('data:text/html;base64,PGI+'), field, 'TypeError');
    refuses(withImage('data:image/png;base64,***='), field, 'TypeError');
    // A JPEG labelled PNG, and bytes that are no image at all.
    refuses(withImage(images.jpeg.replace('image/jpeg', 'image/png')), field, 'TypeError');
    refuses(withImage(`data:image/png;base64,${btoa('not a png at all')}`), field, 'TypeError');
    // 600 pixels wide: over the side cap.
    refuses(withImage(images.wide), `${field}.width`);
    // A PNG header claiming 30,000 x 30,000 pixels.
    const header = Buffer.alloc(33);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(header);
    header.writeUInt32BE(13, 8);
    header.write('IHDR', 12, 'latin1');
    header.writeUInt32BE(30000, 16);
    header.writeUInt32BE(30000, 20);
    refuses(withImage(`data:image/png;base64,${header.toString('base64')}`), `${field}.width`);
    // Past the byte cap (refused by its length before it is decoded).
    const huge = `data:image/png;base64,${'A'.repeat(4 * PICTURE_LIMITS.imageBytes)}`;
    refuses(withImage(huge), field);
    refuses(withImage(null), field, 'TypeError');
  });

  it('the writer refuses a picture it could not read back', () => {
    assert.throws(() => written('vit', { image: images.wide }), {
      name: 'RangeError',
      parameter: 'snapshot.picture.image.width',
    });
  });
});
