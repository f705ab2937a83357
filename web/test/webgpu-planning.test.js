// The WebGPU backend's decisions that need no GPU: which features to request, tile sizes from
// device limits, how oversized problems are cut, the mask and uniform layouts, f16 conversion.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseFeatures, shuffleLanes } from '../src/webgpu/features.js';
import { toHalf } from '../src/webgpu/f16.js';
import { alibiSlopes } from '../src/webgpu/logit-terms.js';
import { ABSENT, maskData } from '../src/webgpu/mask-data.js';
import { depthBucket, headGroups, planStreaming, scoreChunks } from '../src/webgpu/tiling.js';
import { defineUniforms } from '../src/webgpu/uniforms.js';
import { tensor } from './support/helpers.js';
import { paperSlopes } from './support/reference.js';

describe('chooseFeatures', () => {
  const adapter = (...names) => new Set(names);
  it("requests 'shader-f16' only for f16 storage on an adapter that has it", () => {
    const withF16 = chooseFeatures(adapter('shader-f16', 'subgroups'), { storage: 'f16' });
    assert.deepEqual(withF16.requiredFeatures, ['shader-f16', 'subgroups']);
    assert.equal(withF16.storage, 'f16');
    assert.deepEqual(withF16.notes, []);
    const f32 = chooseFeatures(adapter('shader-f16', 'subgroups'), {});
    assert.deepEqual(f32.requiredFeatures, ['subgroups']);
    assert.equal(f32.storage, 'f32');
  });

  it("falls back to f32 with a note when 'shader-f16' is missing (SwiftShader)", () => {
    const choice = chooseFeatures(adapter('subgroups'), { storage: 'f16' });
    assert.equal(choice.storage, 'f32');
    assert.match(choice.notes[0], /shader-f16/);
  });

  it('uses subgroups when present and wanted, never otherwise', () => {
    assert.equal(chooseFeatures(adapter('subgroups'), {}).subgroups, true);
    assert.equal(chooseFeatures(adapter('subgroups'), { subgroups: false }).subgroups, false);
    assert.deepEqual(
      chooseFeatures(adapter('subgroups'), { subgroups: false }).requiredFeatures,
      [],
    );
    const none = chooseFeatures(adapter(), {});
    assert.equal(none.subgroups, false);
    assert.match(none.notes[0], /subgroups/);
  });

  it('shuffles across at most the guaranteed subgroup size', () => {
    assert.equal(shuffleLanes({ subgroupMinSize: 4 }), 4);
    assert.equal(shuffleLanes({ subgroupMinSize: 32 }), 16);
    assert.equal(shuffleLanes({ subgroupMinSize: 8 }), 8);
    assert.equal(shuffleLanes({}), 4);
  });
});

describe('planStreaming', () => {
  const LIMITS = { maxComputeWorkgroupStorageSize: 16384, maxComputeInvocationsPerWorkgroup: 256 };
  const plain = { subgroups: false, shuffleLanes: 4 };

  it('pads depths to buckets', () => {
    assert.deepEqual(
      [1, 3, 4, 5, 9, 33, 64, 65, 100].map(depthBucket),
      [4, 4, 4, 8, 16, 64, 64, 96, 128],
    );
  });

  for (const [depth, valueDim] of [
    [3, 5],
    [64, 64],
    [128, 128],
    [256, 64],
    [1000, 1000],
  ]) {
    it(`fits D = ${depth}, Dv = ${valueDim} in 16 KiB of workgroup memory`, () => {
      const plan = planStreaming({ depth, valueDim, additive: false }, LIMITS, plain);
      if (!plan) {
        assert.ok(depth >= 1000, 'only absurd depths may not fit');
        return;
      }
      assert.ok(plan.workgroupBytes <= LIMITS.maxComputeWorkgroupStorageSize, JSON.stringify(plan));
      assert.equal(plan.keyTile % plan.lanes, 0);
      assert.equal(plan.workgroupSize, plan.queryBlock * plan.lanes);
      assert.ok(plan.accumulators * plan.lanes * 4 >= depthBucket(valueDim));
    });
  }

  it('keeps lane groups within the guaranteed subgroup size', () => {
    const plan = planStreaming({ depth: 64, valueDim: 128, additive: false }, LIMITS, {
      subgroups: true,
      shuffleLanes: 4,
    });
    assert.equal(plan.lanes, 4);
    assert.equal(
      planStreaming({ depth: 64, valueDim: 128, additive: false }, LIMITS, plain).lanes,
      16,
    );
  });

  it('gives up when not even one row fits', () => {
    assert.equal(
      planStreaming({ depth: 4096, valueDim: 4096, additive: false }, LIMITS, plain),
      null,
    );
  });
});

describe('cutting problems to the binding limit', () => {
  it('groups heads', () => {
    assert.deepEqual(headGroups(5, 100, 250), [
      { first: 0, count: 2 },
      { first: 2, count: 2 },
      { first: 4, count: 1 },
    ]);
    assert.deepEqual(headGroups(3, 100, 1e9), [{ first: 0, count: 3 }]);
    assert.equal(headGroups(3, 300, 250), null);
    assert.deepEqual(
      headGroups(3, 1, 1e9, 2),
      [
        { first: 0, count: 2 },
        { first: 2, count: 1 },
      ],
      'dispatch limit',
    );
  });

  it('cuts score matrices into whole heads, or bands of rows', () => {
    // 10 x 10 floats = 400 bytes a head
    assert.deepEqual(scoreChunks(3, 10, 10, 1000, 1e6), [
      { head: 0, heads: 2, row: 0, rows: 10 },
      { head: 2, heads: 1, row: 0, rows: 10 },
    ]);
    assert.deepEqual(scoreChunks(2, 10, 10, 150, 1e6), [
      { head: 0, heads: 1, row: 0, rows: 3 },
      { head: 0, heads: 1, row: 3, rows: 3 },
      { head: 0, heads: 1, row: 6, rows: 3 },
      { head: 0, heads: 1, row: 9, rows: 1 },
      { head: 1, heads: 1, row: 0, rows: 3 },
      { head: 1, heads: 1, row: 3, rows: 3 },
      { head: 1, heads: 1, row: 6, rows: 3 },
      { head: 1, heads: 1, row: 9, rows: 1 },
    ]);
    assert.deepEqual(
      scoreChunks(1, 10, 10, 1e6, 4).map((c) => c.rows),
      [4, 4, 2],
      'dispatch limit',
    );
    assert.equal(scoreChunks(1, 10, 100, 300, 1e6), null, 'one row is too large');
  });
});

describe('mask data', () => {
  const shape = { heads: 2, kvHeads: 2, queryLength: 5, keyLength: 40, headDim: 3 };
  it('packs only the sections that are present', () => {
    const { fields, words } = maskData({ causal: true }, shape);
    assert.equal(words.length, 1);
    for (const at of ['keyLengthsAt', 'keyValidAt', 'customAt', 'globalsAt'])
      assert.equal(fields[at], ABSENT);
    assert.equal(fields.causal, 1);
    assert.equal(fields.restrictsNothing, 0);
  });

  it('lays out key lengths, key bits, custom bits and global prefix counts', () => {
    const keyValid = new Uint8Array(40).fill(1);
    keyValid[33] = 0;
    const custom = new Uint8Array(5 * 40);
    custom[2 * 40 + 7] = 1;
    const { fields, words } = maskData(
      { keyLengths: [40, 3], keyValid, mask: custom, globalTokens: [1, 38] },
      shape,
    );
    assert.deepEqual([...words.subarray(fields.keyLengthsAt, fields.keyLengthsAt + 2)], [40, 3]);
    assert.equal(
      words[fields.keyValidAt + 1],
      0xffffffff & ~(1 << 1) & 0xff,
      'keys 32..39, key 33 off',
    );
    const bit = 2 * 40 + 7;
    assert.equal((words[fields.customAt + (bit >> 5)] >>> (bit & 31)) & 1, 1);
    const prefix = [...words.subarray(fields.globalsAt, fields.globalsAt + 41)];
    assert.equal(prefix[0], 0);
    assert.equal(prefix[2], 1);
    assert.equal(prefix[38], 1);
    assert.equal(prefix[40], 2);
    assert.equal(fields.restrictsNothing, 0);
  });

  it('global tokens alone restrict nothing; spans saturate', () => {
    const { fields } = maskData(
      { globalTokens: [0], window: { before: 2 ** 30, after: 1, dilation: 8 } },
      shape,
    );
    assert.equal(fields.beforeSpan, 2 ** 31 - 1);
    assert.equal(fields.afterSpan, 8);
    assert.equal(maskData({ globalTokens: [0] }, shape).fields.restrictsNothing, 1);
  });

  it('places queries after past keys and holds the slopes of ALiBi and the buckets of lsh', () => {
    const { fields, words } = maskData({ queryOffset: 40, alibi: true }, shape);
    assert.equal(fields.queryOffset, 40);
    assert.equal(fields.longest, 45, 'positions reach Nq + queryOffset');
    const slopes = new Float32Array(words.buffer, fields.slopesAt * 4, 2);
    assert.deepEqual([...slopes], [...Float32Array.from(paperSlopes(2))]);
    assert.deepEqual([...alibiSlopes(6)], [...Float32Array.from(paperSlopes(6))]);

    const lsh = { buckets: 4, rounds: 3, seed: 7 };
    const tensors = { q: tensor(2 * 5 * 3, 1), k: tensor(2 * 40 * 3, 2) };
    const hashed = maskData({ lsh }, shape, tensors);
    assert.equal(hashed.fields.lshRounds, 3);
    assert.equal(hashed.fields.restrictsNothing, 0);
    assert.equal(hashed.fields.keyBucketsAt - hashed.fields.queryBucketsAt, 3 * 2 * 5);
    const buckets = hashed.words.subarray(hashed.fields.queryBucketsAt);
    assert.ok(
      buckets.every((b) => b < 4),
      'buckets 0..3',
    );
    assert.ok(new Set(buckets).size > 1, 'not all in one bucket');
  });
});

describe('uniforms and f16', () => {
  it('one field list gives the WGSL struct and the packing', () => {
    const u = defineUniforms('P', ['a', 'b:f32', 'c']);
    assert.equal(u.wgsl, 'struct P {\n  a: u32,\n  b: f32,\n  c: u32,\n}\n');
    assert.equal(u.byteLength, 16);
    const view = new DataView(u.pack({ a: 7, b: 0.5, c: 0xffffffff }));
    assert.deepEqual(
      [view.getUint32(0, true), view.getFloat32(4, true), view.getUint32(8, true)],
      [7, 0.5, 0xffffffff],
    );
    assert.throws(() => u.pack({ a: 1, b: 1 }), /P\.c/);
    assert.throws(() => u.pack({ a: -1, b: 1, c: 1 }), /u32/);
  });

  it('converts to half precision with round-to-nearest-even', () => {
    const halves = toHalf(
      Float32Array.of(
        0,
        -0,
        1,
        -2,
        65504,
        1e6,
        5.960464477539063e-8,
        1 + 2 ** -11,
        1 + 3 * 2 ** -11,
        1e-9,
      ),
    );
    assert.deepEqual(
      [...halves].map((h) => h.toString(16)),
      ['0', '8000', '3c00', 'c000', '7bff', '7c00', '1', '3c00', '3c02', '0'],
    );
  });
});
