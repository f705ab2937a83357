// safetensors files and the TensorSet over them: the writer and reader agree, every float dtype
// converts to float32 and to half bits exactly as IEEE rounding says, and a Node folder loads
// as files with config, tokenizer and tensors (single and sharded weights).

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { halfBits } from '../src/webgpu/f16.js';
import { loadModelFiles, readSafetensors, writeSafetensors } from '../src/models/files/index.js';
import { createTensorSet } from '../src/models/files/tensor-set.js';
import { random } from './support/helpers.js';

const f32 = (...values) => Float32Array.from(values);
const halfValue = (h) => {
  const exponent = (h >>> 10) & 0x1f;
  const sign = h & 0x8000 ? -1 : 1;
  if (exponent === 0) return sign * (h & 0x3ff) * 2 ** -24;
  if (exponent === 31) return h & 0x3ff ? NaN : sign * Infinity;
  return sign * (1 + (h & 0x3ff) / 1024) * 2 ** (exponent - 15);
};
const tensorsOf = (file) =>
  createTensorSet(readSafetensors(writeSafetensors(file), 'x.safetensors').entries);

describe('safetensors writer and reader', () => {
  it('round-trips every dtype, shape and the metadata', () => {
    const bytes = writeSafetensors(
      {
        'wte.weight': { dtype: 'F32', shape: [2, 3], data: f32(1, 2, 3, 4, 5, 6) },
        'h.0.ln.bias': { dtype: 'F64', shape: [2], data: Float64Array.of(0.5, -1e300 / 1e300) },
        ids: { dtype: 'I64', shape: [3], data: BigInt64Array.of(1n, 2n, 3n) },
        empty: { dtype: 'F16', shape: [0, 4], data: new Uint16Array(0) },
        scalar: { dtype: 'BF16', shape: [], data: Uint16Array.of(0x3f80) },
      },
      { format: 'pt' },
    );
    const header = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    assert.equal(header % 8, 0, 'the header is padded to 8 bytes');
    const { entries, metadata } = readSafetensors(bytes, 'model.safetensors');
    assert.deepEqual(metadata, { format: 'pt' });
    const set = createTensorSet(entries);
    assert.deepEqual(set.names, ['wte.weight', 'h.0.ln.bias', 'ids', 'empty', 'scalar']);
    assert.deepEqual(set.info('wte.weight'), {
      name: 'wte.weight',
      dtype: 'F32',
      shape: [2, 3],
      byteLength: 24,
    });
    assert.deepEqual(set.readFloat32('wte.weight'), f32(1, 2, 3, 4, 5, 6));
    assert.deepEqual(set.readFloat32('h.0.ln.bias'), f32(0.5, -1));
    assert.deepEqual(set.readFloat32('scalar'), f32(1));
    assert.equal(set.readFloat32('empty').length, 0);
    assert.equal(set.has('ids'), true);
    assert.equal(set.has('nope'), false);
  });

  it('fills a caller target in place and checks its length', () => {
    const set = tensorsOf({
      w: { dtype: 'F16', shape: [3], data: Uint16Array.of(0x3c00, 0xc000, 0x0001) },
    });
    const target = new Float32Array(3);
    assert.equal(set.readFloat32('w', target), target);
    assert.deepEqual(target, f32(1, -2, 2 ** -24));
    assert.throws(() => set.readFloat32('w', new Float32Array(2)), {
      name: 'TypeError',
      code: 'invalid_argument',
      parameter: 'target',
    });
    assert.deepEqual(set.readFloat16('w'), Uint16Array.of(0x3c00, 0xc000, 0x0001));
  });

  it('names the tensor when it is missing, not a float, or released', () => {
    const set = tensorsOf({
      ids: { dtype: 'I32', shape: [1], data: Int32Array.of(7) },
      w: { dtype: 'F32', shape: [1], data: f32(1) },
    });
    assert.throws(
      () => set.readFloat32('h.0.attn.c_attn.weight'),
      /no tensor 'h.0.attn.c_attn.weight'/,
    );
    assert.throws(() => set.info(3), { code: 'invalid_argument', parameter: 'name' });
    assert.throws(() => set.readFloat32('ids'), {
      parameter: 'ids',
      message: /dtype I32 is not a float/,
    });
    set.release();
    assert.throws(() => set.readFloat32('w'), /released/);
    assert.deepEqual(set.info('w').shape, [1], 'names and shapes stay after release');
  });

  it('reads tensors at unaligned offsets', () => {
    const bytes = writeSafetensors({
      a: { dtype: 'U8', shape: [3], data: Uint8Array.of(1, 2, 3) },
      b: { dtype: 'F32', shape: [2], data: f32(1.5, -2.5) },
      c: { dtype: 'F64', shape: [1], data: Float64Array.of(3.25) },
    });
    const set = createTensorSet(readSafetensors(bytes).entries);
    assert.deepEqual(set.readFloat32('b'), f32(1.5, -2.5));
    assert.deepEqual(set.readFloat32('c'), f32(3.25));
  });
});

describe('half conversion', () => {
  it('round-trips every half value through float32', () => {
    const every = Uint16Array.from({ length: 65536 }, (_, h) => h);
    const set = tensorsOf({ h: { dtype: 'F16', shape: [65536], data: every } });
    const floats = set.readFloat32('h');
    for (let h = 0; h < 65536; h++) {
      const expected = halfValue(h);
      if (Number.isNaN(expected)) assert.ok(Number.isNaN(floats[h]), `half ${h} is NaN`);
      else assert.equal(floats[h], expected, `half 0x${h.toString(16)}`);
      if (!Number.isNaN(expected)) assert.equal(halfBits(floats[h]), h);
    }
  });

  it('rounds float32 to the nearest half, ties to even (random and edge values)', () => {
    const next = random(13);
    const values = [
      1 + 2 ** -11,
      1 + 3 * 2 ** -11,
      2 ** -25,
      3 * 2 ** -26,
      2 ** -24,
      65504,
      65519.99,
      -0,
    ];
    for (let i = 0; i < 20000; i++) values.push(next() * 2 ** Math.round(next() * 20 - 4));
    const halves = tensorsOf({
      x: { dtype: 'F32', shape: [values.length], data: Float32Array.from(values) },
    }).readFloat16('x');
    values.forEach((value, i) => {
      const x = Math.fround(value);
      const h = halves[i];
      const error = Math.abs(halfValue(h) - x);
      for (const neighbour of [h - 1, h + 1]) {
        if (
          (neighbour & 0x7fff) >= 0x7c00 ||
          neighbour < 0 ||
          (neighbour & 0x8000) !== (h & 0x8000)
        )
          continue;
        const other = Math.abs(halfValue(neighbour) - x);
        assert.ok(
          error < other || (error === other && (h & 1) === 0),
          `${x} -> 0x${h.toString(16)}`,
        );
      }
    });
  });

  it('refuses values beyond half range instead of making Infinity', () => {
    for (const [dtype, data] of [
      ['F32', f32(1, 65520)],
      ['F64', Float64Array.of(1, -1e6)],
      ['BF16', Uint16Array.of(0x3f80, 0x4780)], // 65536
    ]) {
      const set = tensorsOf({ 'lm_head.weight': { dtype, shape: [2], data } });
      assert.throws(() => set.readFloat16('lm_head.weight'), {
        name: 'RangeError',
        code: 'out_of_range',
        parameter: 'lm_head.weight',
        index: 1,
        message: /element 1 .* does not fit in float16/,
      });
    }
    const big = tensorsOf({ w: { dtype: 'F64', shape: [1], data: Float64Array.of(1e300) } });
    assert.throws(() => big.readFloat32('w'), {
      name: 'RangeError',
      message: /does not fit in float32/,
    });
    const inf = tensorsOf({ w: { dtype: 'F32', shape: [2], data: f32(Infinity, NaN) } });
    const h = inf.readFloat16('w');
    assert.equal(h[0], 0x7c00);
    assert.equal(h[1] & 0x7c00, 0x7c00);
    assert.notEqual(h[1] & 0x3ff, 0);
  });
});

describe('loadModelFiles from a Node folder', () => {
  const root = mkdtempSync(join(tmpdir(), 'attnlens-files-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const config = { model_type: 'gpt2', n_layer: 1 };
  const tokenizer = { model: { type: 'BPE', vocab: {}, merges: [] } };
  const folder = (name, files) => {
    const dir = join(root, name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    for (const [file, content] of Object.entries(files)) writeFileSync(join(dir, file), content);
    return dir;
  };
  const base = (extra) => ({
    'config.json': JSON.stringify(config),
    'tokenizer.json': JSON.stringify(tokenizer),
    ...extra,
  });

  it('reads config, tokenizer and weights, by path and by file: URL, with progress', async () => {
    const weights = writeSafetensors({ w: { dtype: 'F32', shape: [2], data: f32(1, 2) } });
    const dir = folder(
      'single',
      base({
        'tokenizer_config.json': '{"model_max_length": 8}',
        'model.safetensors': weights,
      }),
    );
    const events = [];
    const files = await loadModelFiles(dir, { onProgress: (e) => events.push(e) });
    assert.deepEqual(files.config, config);
    assert.deepEqual(files.tokenizer, { json: tokenizer, config: { model_max_length: 8 } });
    assert.deepEqual(files.tensors.readFloat32('w'), f32(1, 2));
    assert.equal(files.source.kind, 'folder');
    assert.equal(files.source.fromCache, false);
    assert.equal(files.bytes, weights.byteLength);
    const last = events.at(-1);
    assert.equal(last.file, 'model.safetensors');
    assert.equal(last.totalLoaded, last.totalBytes, 'the total is known up front and reached');
    assert.ok(events.every((e) => e.totalBytes === last.totalBytes));
    assert.deepEqual(
      [...new Set(events.map((e) => e.file))],
      ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'model.safetensors'],
    );
    const byUrl = await loadModelFiles(pathToFileURL(dir));
    assert.deepEqual(byUrl.tensors.names, ['w']);
    assert.equal(byUrl.tokenizer.config.model_max_length, 8);
  });

  it('reads sharded safetensors through the index and checks the weight map', async () => {
    const shard1 = writeSafetensors({ a: { dtype: 'F32', shape: [1], data: f32(1) } });
    const shard2 = writeSafetensors({
      b: { dtype: 'F16', shape: [1], data: Uint16Array.of(0x4000) },
    });
    const index = {
      metadata: { total_size: 6 },
      weight_map: { a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00002.safetensors' },
    };
    const dir = folder(
      'sharded',
      base({
        'model.safetensors.index.json': JSON.stringify(index),
        'model-00001-of-00002.safetensors': shard1,
        'model-00002-of-00002.safetensors': shard2,
      }),
    );
    const files = await loadModelFiles(dir);
    assert.deepEqual(files.tensors.names.sort(), ['a', 'b']);
    assert.deepEqual(files.tensors.readFloat32('b'), f32(2));
    assert.equal(files.bytes, shard1.byteLength + shard2.byteLength);
    assert.equal(files.tokenizer.config, null);

    writeFileSync(
      join(dir, 'model.safetensors.index.json'),
      JSON.stringify({
        weight_map: {
          a: 'model-00002-of-00002.safetensors',
          b: 'model-00002-of-00002.safetensors',
        },
      }),
    );
    await assert.rejects(loadModelFiles(dir), {
      code: 'not_found',
      message: /names tensor 'a' in model-00002-of-00002.safetensors, which lacks it/,
    });
    writeFileSync(
      join(dir, 'model.safetensors.index.json'),
      JSON.stringify({ weight_map: { a: '../secret.safetensors' } }),
    );
    await assert.rejects(loadModelFiles(dir), {
      name: 'TypeError',
      message: /is not a file name in the model folder/,
    });
  });
});
