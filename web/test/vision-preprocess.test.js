// Images into pixel_values (web/src/vision/), against Pillow and numpy on Debian's python3-pil:
// tests/vision/preprocess_reference.py computes each case as the transformers library's ViT,
// DeiT and Bit processors do. Tolerance: Pillow's resize output (8-bit, after its rounding) must
// be the same bytes, and pixel_values the same float32 values (0 ulp: the JS follows numpy's
// order of roundings). Then every filter against Pillow on awkward sizes, and hostile images
// and configs, each a TypeError / RangeError with its code and parameter.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { imageHeader } from '../src/vision/image-header.js';
import { MAX_IMAGE_PIXELS, readImage, readImagePixels } from '../src/vision/image-input.js';
import {
  imageProcessor,
  preprocessImage,
  preprocessLayout,
  resizedSize,
  writePixelValues,
} from '../src/vision/preprocessor.js';
import { PIL_FILTERS, resizeRgb, resizeWindow } from '../src/vision/resample.js';
import { mulberry32 } from '../scripts/random.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'attnlens-vision-'));
let cases;
before(() => {
  execFileSync('/usr/bin/python3', [join(repo, 'tests/vision/preprocess_reference.py'), out]);
  cases = JSON.parse(readFileSync(join(out, 'cases.json'), 'utf8'));
});
after(() => rmSync(out, { recursive: true, force: true }));

const bytes = (name) => new Uint8Array(readFileSync(join(out, name)));

function firstDifference(got, want) {
  assert.equal(got.length, want.length, 'length');
  for (let i = 0; i < want.length; i++)
    if (got[i] !== want[i]) return { i, got: got[i], want: want[i] };
  return null;
}

describe('preprocessing equals Pillow + numpy (the transformers processors)', () => {
  it('every case: resized bytes and float32 pixel_values, bit for bit', async () => {
    assert.equal(cases.length, 7);
    for (const c of cases) {
      const config = JSON.parse(readFileSync(join(out, `${c.name}.json`), 'utf8'));
      const image = await readImage({
        data: bytes(`${c.name}.rgba`),
        width: c.width,
        height: c.height,
      });
      const plan = imageProcessor(config);
      const result = preprocessImage(image, plan);
      assert.deepEqual([result.resized.height, result.resized.width], c.resized, c.name);
      assert.deepEqual([3, result.height, result.width], c.shape, c.name);
      if (plan.resize) {
        const size = resizedSize(plan.resize, c.height, c.width);
        const resized = resizeRgb(
          image.data,
          c.width,
          c.height,
          size.width,
          size.height,
          plan.filter,
        );
        assert.equal(
          firstDifference(resized, bytes(`${c.name}.resized`)),
          null,
          `${c.name} resized`,
        );
      }
      const want = new Float32Array(bytes(`${c.name}.f32`).buffer);
      assert.equal(firstDifference(result.pixelValues, want), null, `${c.name} pixel_values`);
    }
  });
});

describe("a camera frame's path: RGBA read in place, only the crop resized", () => {
  it('every case from RGBA into a view of a larger buffer: the same float32 values', async () => {
    for (const c of cases) {
      const config = JSON.parse(readFileSync(join(out, `${c.name}.json`), 'utf8'));
      const rgba = bytes(`${c.name}.rgba`);
      const image = await readImagePixels({ data: rgba, width: c.width, height: c.height });
      assert.equal(image.channels, 4);
      assert.equal(image.data.buffer, rgba.buffer, `${c.name}: read in place, not copied`);
      const plan = imageProcessor(config);
      const layout = preprocessLayout(plan, c.height, c.width);
      const memory = new Float32Array(3 * layout.height * layout.width + 10).fill(Number.NaN);
      const view = memory.subarray(5, 5 + 3 * layout.height * layout.width);
      writePixelValues(image, plan, layout, view);
      const want = new Float32Array(bytes(`${c.name}.f32`).buffer);
      assert.equal(firstDifference(view, want), null, `${c.name} pixel_values`);
      assert.ok(Number.isNaN(memory[4]) && Number.isNaN(memory.at(-1)), 'nothing written outside');
    }
  });

  it('any window of a resize: the bytes of the whole resize, RGB or RGBA, every filter', () => {
    const next = mulberry32(11);
    for (const [w, h, ow, oh] of [
      [37, 23, 16, 16],
      [13, 9, 40, 7],
      [64, 48, 33, 29],
      [5, 50, 5, 11],
    ]) {
      const rgb = Uint8Array.from({ length: w * h * 3 }, () => next() & 255);
      const rgba = new Uint8Array(w * h * 4);
      for (let i = 0; i < w * h; i++) rgba.set([...rgb.subarray(i * 3, i * 3 + 3), 7], i * 4);
      for (const code of [1, 2, 3, 4, 5]) {
        const filter = PIL_FILTERS[code];
        const whole = resizeRgb(rgb, w, h, ow, oh, filter);
        for (let k = 0; k < 6; k++) {
          const top = next() % oh;
          const left = next() % ow;
          const window = {
            top,
            left,
            height: 1 + (next() % (oh - top)),
            width: 1 + (next() % (ow - left)),
          };
          const want = new Uint8Array(window.height * window.width * 3);
          for (let y = 0; y < window.height; y++) {
            const from = ((top + y) * ow + left) * 3;
            want.set(whole.subarray(from, from + window.width * 3), y * window.width * 3);
          }
          for (const [data, channels] of [
            [rgb, 3],
            [rgba, 4],
          ]) {
            const got = resizeWindow(
              data,
              { width: w, height: h, channels },
              { width: ow, height: oh, filter, window },
            );
            const where = `${w}x${h} -> ${ow}x${oh} ${filter.name}, ${JSON.stringify(window)}`;
            assert.equal(firstDifference(got, want), null, `${where}, ${channels} channels`);
          }
        }
      }
    }
  });
});

describe('every Pillow filter, down and up, awkward sizes', () => {
  const SIZES = [
    [1, 1, 3, 2],
    [7, 5, 1, 1],
    [37, 23, 16, 16],
    [13, 9, 40, 7],
    [300, 200, 31, 45],
    [64, 64, 64, 30],
  ];
  let dir;
  before(() => {
    dir = join(out, 'filters');
    const script = `
import sys, json, numpy as np
from PIL import Image
out, sizes = sys.argv[1], json.loads(sys.argv[2])
import os; os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)
for n, (w, h, ow, oh) in enumerate(sizes):
    img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    img.tofile(f"{out}/in-{n}")
    for f in (1, 2, 3, 4, 5):
        resized = Image.fromarray(img, "RGB").resize((ow, oh), resample=f)
        np.array(resized).tofile(f"{out}/out-{n}-{f}")
`;
    execFileSync('/usr/bin/python3', ['-c', script, dir, JSON.stringify(SIZES)]);
  });
  it('lanczos, bilinear, bicubic, box, hamming: the same bytes as Pillow', () => {
    for (const [n, [w, h, ow, oh]] of SIZES.entries()) {
      const input = bytes(`filters/in-${n}`);
      for (const code of [1, 2, 3, 4, 5]) {
        const got = resizeRgb(input, w, h, ow, oh, PIL_FILTERS[code]);
        const where = `${w}x${h} -> ${ow}x${oh}, ${PIL_FILTERS[code].name}`;
        assert.equal(firstDifference(got, bytes(`filters/out-${n}-${code}`)), null, where);
      }
    }
  });
});

const rejects = async (promise, Class, code, parameter) =>
  assert.rejects(promise, (error) => {
    assert.ok(error instanceof Class, `${error.constructor.name}: ${error.message}`);
    assert.equal(error.code, code, error.message);
    assert.equal(error.parameter, parameter, error.message);
    return true;
  });

describe('hostile images', () => {
  const rgba = (w, h) => ({ data: new Uint8ClampedArray(w * h * 4), width: w, height: h });

  it('zero size, fractional and huge claims, wrong channel counts, wrong kinds', async () => {
    await rejects(readImage(rgba(0, 5)), RangeError, 'out_of_range', 'image.width');
    await rejects(
      readImage({ data: new Uint8Array(4), width: 1.5, height: 1 }),
      TypeError,
      'invalid_argument',
      'image.width',
    );
    // A 30,000 x 30,000 claim is refused before anything is allocated for it.
    await rejects(
      readImage({ data: new Uint8Array(4), width: 30000, height: 30000 }),
      RangeError,
      'out_of_range',
      'image.width',
    );
    await rejects(
      readImage({ data: new Uint8Array(4), width: 8192, height: 8192 }),
      RangeError,
      'out_of_range',
      'image',
    );
    const rgb = { data: new Uint8Array(2 * 3 * 3), width: 2, height: 3 };
    await assert.rejects(
      readImage(rgb),
      (e) => e.code === 'shape_mismatch' && /3 a pixel \(RGB\)/.test(e.message),
    );
    await rejects(
      readImage({ data: new Float32Array(4), width: 1, height: 1 }),
      TypeError,
      'invalid_argument',
      'image.data',
    );
    await rejects(readImage('cat.jpg'), TypeError, 'invalid_argument', 'image');
    await rejects(readImage(null), TypeError, 'invalid_argument', 'image');
  });

  it('image files: header claims checked before decoding, corrupt files refused', async () => {
    const png = (w, h) => {
      const b = new Uint8Array(33);
      b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
      new DataView(b.buffer).setUint32(16, w);
      new DataView(b.buffer).setUint32(20, h);
      return b;
    };
    assert.deepEqual(imageHeader(png(640, 480)), { format: 'png', width: 640, height: 480 });
    await rejects(
      readImage(new Blob([png(30000, 30000)])),
      RangeError,
      'out_of_range',
      'image.width',
    );
    await rejects(readImage(new Blob([png(0, 10)])), RangeError, 'out_of_range', 'image.width');
    await rejects(
      readImage(new Blob([new Uint8Array([1, 2, 3, 4])])),
      TypeError,
      'invalid_argument',
      'image',
    );
    await rejects(
      readImage(new Blob([png(1, 1).subarray(0, 20)])),
      TypeError,
      'invalid_argument',
      'image',
    );
    // A JPEG whose segment lengths run off the end, and one whose frame says 20000 x 20000.
    const jpegOf = (...segments) => new Blob([new Uint8Array([0xff, 0xd8, ...segments.flat()])]);
    await rejects(
      readImage(jpegOf([0xff, 0xe0, 0xff, 0xff, 1, 2])),
      TypeError,
      'invalid_argument',
      'image',
    );
    const frame = [0xff, 0xc0, 0, 17, 8, 0x4e, 0x20, 0x4e, 0x20, 3];
    assert.deepEqual(imageHeader(new Uint8Array([0xff, 0xd8, 0xff, 0xe1, 0, 4, 9, 9, ...frame])), {
      format: 'jpeg',
      width: 20000,
      height: 20000,
    });
    await rejects(readImage(jpegOf(frame)), RangeError, 'out_of_range', 'image.width');
    // A well-formed small file in Node: no decoder here, and the error says what to pass instead.
    await assert.rejects(
      readImage(new Blob([png(4, 4)])),
      (e) => e instanceof TypeError && /createImageBitmap/.test(e.message),
    );
  });

  it('the budget: a 32 Mpx image is the limit, one more row is refused', async () => {
    assert.equal(MAX_IMAGE_PIXELS, 4096 * 8192);
    await rejects(
      readImage({ data: new Uint8Array(4), width: 4096, height: 8193 }),
      RangeError,
      'out_of_range',
      'image',
    );
    // A sliver whose shortest edge would be resized up past the side limit.
    const plan = imageProcessor({
      image_processor_type: 'BitImageProcessor',
      size: { shortest_edge: 256 },
    });
    assert.throws(
      () => preprocessImage(rgba(16000, 1), plan),
      (e) => e instanceof RangeError && e.parameter === 'image',
    );
  });
});

describe('preprocessor_config.json checks', () => {
  const bad = (config, Class, parameter) =>
    assert.throws(
      () => imageProcessor(config),
      (e) => e instanceof Class && e.parameter === `preprocessor_config.json: ${parameter}`,
    );
  it('names what is wrong', () => {
    bad({ image_processor_type: 'CLIPImageProcessor' }, TypeError, 'image_processor_type');
    bad({ image_processor_type: 'ViTImageProcessor', resample: 0 }, RangeError, 'resample');
    bad({ image_processor_type: 'ViTImageProcessor', size: 0 }, RangeError, 'size');
    bad(
      { image_processor_type: 'ViTImageProcessor', size: { longest_edge: 9 } },
      TypeError,
      'size',
    );
    bad(
      { image_processor_type: 'ViTImageProcessor', size: { height: 1e9, width: 2 } },
      RangeError,
      'size.height',
    );
    bad(
      { image_processor_type: 'BitImageProcessor', crop_size: { shortest_edge: 3 } },
      TypeError,
      'crop_size',
    );
    bad(
      { image_processor_type: 'ViTImageProcessor', image_std: [0.5, 0, 0.5] },
      RangeError,
      'image_std[1]',
    );
    bad(
      { image_processor_type: 'ViTImageProcessor', image_mean: [0.5, 0.5] },
      TypeError,
      'image_mean',
    );
    bad({ image_processor_type: 'ViTImageProcessor', do_resize: 'yes' }, TypeError, 'do_resize');
    bad(
      { image_processor_type: 'ViTImageProcessor', rescale_factor: '1/255' },
      TypeError,
      'rescale_factor',
    );
  });
  it("a file with no processor type takes the model family's", () => {
    const plan = imageProcessor({ size: { shortest_edge: 32 } }, 'BitImageProcessor');
    assert.equal(plan.processor, 'BitImageProcessor');
    assert.deepEqual(plan.crop, { height: 224, width: 224 });
  });
});
