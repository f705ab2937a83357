// Hostile llama2.c files: each is refused with an error naming the file and the problem, before
// anything the size of what the header claims is allocated (the process's ArrayBuffer memory is
// watched while a header claims gigabytes); then seeded mutations of the header and the
// tokenizer, each a model or a clean error.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { readLlama2cCheckpoint } from '../src/models/files/llama2c.js';
import { llama2cTokenizerFiles } from '../src/models/files/llama2c-tokenizer.js';
import { loadModelFiles } from '../src/models/index.js';
import { random } from './support/helpers.js';
import { rejectsWith } from './support/tiny-models.mjs';

const BUNDLED = new URL('../src/models/bundled/stories260K/', import.meta.url);
const MODEL = new Uint8Array(readFileSync(fileURLToPath(new URL('stories260K.bin', BUNDLED))));
const TOKENIZER = new Uint8Array(readFileSync(fileURLToPath(new URL('tok512.bin', BUNDLED))));
const MAGIC = 0x616b3432;

const load = (model, tokenizer = TOKENIZER) =>
  loadModelFiles([new File([model], 'model.bin'), new File([tokenizer], 'tok512.bin')]);

/** A copy of `bytes` with int32 `values` written from byte `at`. */
function withInts(bytes, at, values) {
  const copy = bytes.slice();
  const view = new DataView(copy.buffer);
  values.forEach((value, i) => view.setInt32(at + 4 * i, value, true));
  return copy;
}

/** A version 1 or 2 header (256 bytes) and `body` zero bytes after it. */
function versioned(version, fields, { shared = 1, groupSize = 0, body = 0 } = {}) {
  const bytes = new Uint8Array(256 + body);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, MAGIC, true);
  view.setInt32(4, version, true);
  fields.forEach((value, i) => view.setInt32(8 + 4 * i, value, true));
  view.setUint8(36, shared);
  if (version === 2) view.setInt32(37, groupSize, true);
  return bytes;
}

const refused = (promise, code, parameter, message) =>
  rejectsWith(promise, {
    name: code === 'invalid_argument' ? 'TypeError' : 'RangeError',
    code,
    parameter,
    message,
  });

test('a truncated checkpoint, and one with bytes past its end', async () => {
  await refused(load(MODEL.subarray(0, 20)), 'shape_mismatch', 'model.bin', /shorter than/);
  await refused(
    load(MODEL.subarray(0, MODEL.byteLength - 4)),
    'shape_mismatch',
    'model.bin',
    /is 1056536 bytes, but its header .* implies 1056540 bytes/,
  );
  const longer = new Uint8Array(MODEL.byteLength + 4);
  longer.set(MODEL);
  await refused(load(longer), 'shape_mismatch', 'model.bin', /implies 1056540 bytes/);
});

test('a header claiming huge dimensions is refused by its size, before allocating', async () => {
  const before = process.memoryUsage().arrayBuffers;
  const cases = [
    withInts(MODEL, 0, [1 << 24, 1 << 24, 1 << 24, 1 << 12, 1 << 12, 1 << 24, 1 << 24]),
    withInts(MODEL, 0, [4096, 11008, 32, 32, 32, 32000, 4096]), // Llama 2 7B's shape, 1 MB of data
    versioned(1, [1 << 24, 1 << 24, 1 << 20, 1 << 10, 1 << 10, 1 << 24, 1 << 20]),
  ];
  for (const bytes of cases) {
    await refused(load(bytes), 'shape_mismatch', 'model.bin', /implies (about )?[\d.e+]+ bytes/);
  }
  await refused(
    load(withInts(MODEL, 0, [1 << 30, 64, 5, 8, 4, 512, 512])),
    'out_of_range',
    'model.bin',
    /dim is 1073741824/,
  );
  assert.ok(process.memoryUsage().arrayBuffers - before < 64 * 2 ** 20, 'no large allocation');
});

test('negative and zero sizes, inconsistent heads, unknown versions', async () => {
  const cases = [
    [withInts(MODEL, 8, [-5]), /n_layers is -5/],
    [withInts(MODEL, 0, [0]), /dim is 0/],
    [withInts(MODEL, 24, [-2147483648]), /seq_len is -2147483648/],
    [withInts(MODEL, 20, [-2147483648]), /vocab_size is 2147483648/],
    [withInts(MODEL, 12, [7]), /dim \(64\) is not a multiple of n_heads \(7\)/],
    [withInts(MODEL, 16, [3]), /n_heads \(8\) is not a multiple of n_kv_heads \(3\)/],
    [withInts(MODEL, 12, [64]), /head size .* = 1 must be even/],
    [versioned(3, [64, 172, 5, 8, 4, 512, 512]), /version 3; versions 0 \(legacy\), 1 and 2/],
    [versioned(1, [64, 172, 5, 8, 4, 512, 512], { shared: 7 }), /shared-classifier flag is 7/],
  ];
  for (const [bytes, message] of cases) {
    await refused(load(bytes), 'out_of_range', 'model.bin', message);
  }
});

test('a version 2 header with a bad group size', async () => {
  const fields = [64, 172, 5, 8, 4, 512, 512];
  for (const groupSize of [0, -32, 7, 128, 2 ** 31 - 1]) {
    await refused(
      load(versioned(2, fields, { groupSize, body: 1 << 20 })),
      'out_of_range',
      'model.bin',
      new RegExp(`group_size is ${groupSize}, not a divisor of dim \\(64\\)`),
    );
  }
});

test('bad tokenizers: past the end, too short, another vocabulary, broken pieces', async () => {
  // Where token `id`'s score and length are: walk the file to it.
  const view = new DataView(TOKENIZER.buffer, TOKENIZER.byteOffset);
  const offsetOf = (id) => {
    let offset = 4;
    for (let i = 0; i < id; i++) offset += 8 + view.getInt32(offset + 4, true);
    return offset;
  };
  const at = offsetOf(300);
  const pastEnd = withInts(TOKENIZER, offsetOf(500) + 4, [1000]);
  const tooShort = TOKENIZER.subarray(0, 1000);
  const longer = new Uint8Array(TOKENIZER.byteLength + 3);
  longer.set(TOKENIZER);
  const cases = [
    [withInts(TOKENIZER, at + 4, [1 << 30]), 'out_of_range', /token 300 has length 1073741824/],
    [withInts(TOKENIZER, at + 4, [-1]), 'out_of_range', /token 300 has length -1/],
    [withInts(TOKENIZER, 0, [1 << 30]), 'out_of_range', /max_token_length is 1073741824/],
    [tooShort, 'shape_mismatch', /too short for the model's 512 tokens/],
    [longer, 'shape_mismatch', /3 bytes after the model's 512 tokens/],
  ];
  // With max_token_length raised, a length of 1000 runs past the end of the file.
  cases.push([
    withInts(pastEnd, 0, [1000]),
    'shape_mismatch',
    /token 500's 1000 bytes run past the end of the file \(6227 bytes\)/,
  ]);
  const badScore = TOKENIZER.slice();
  new DataView(badScore.buffer).setFloat32(at, NaN, true);
  cases.push([badScore, 'non_finite', /token 300 has the score NaN/]);
  const badUtf8 = TOKENIZER.slice();
  badUtf8[at + 8] = 0xff;
  cases.push([badUtf8, 'invalid_argument', /token 300 is not valid UTF-8/]);
  for (const [bytes, code, message] of cases) {
    await rejectsWith(load(MODEL, bytes), {
      name: { invalid_argument: 'TypeError' }[code] ?? 'RangeError',
      code,
      parameter: 'tok512.bin',
      message,
    });
  }
});

test('seeded mutations of the header and the tokenizer: a model, or a clean error', () => {
  const codes = new Set(['invalid_argument', 'out_of_range', 'shape_mismatch', 'non_finite']);
  const next = random(260);
  const pick = (n) => Math.floor(((next() + 1) / 2) * n);
  const outcome = (work, file) => {
    try {
      work();
      return 'read';
    } catch (error) {
      assert.ok(codes.has(error.code), `${file}: ${error.stack}`);
      assert.equal(error.parameter, file, error.message);
      return error.code;
    }
  };
  const seen = new Set();
  for (let round = 0; round < 400; round++) {
    // The header (the first 28 bytes, or a versioned one), with bytes flipped or set to extremes.
    const model =
      round % 2
        ? MODEL.slice()
        : versioned(round % 4 === 0 ? 2 : 1, [64, 172, 5, 8, 4, 512, 512], { groupSize: 64 });
    for (let i = 0, n = 1 + pick(4); i < n; i++) {
      model[pick(round % 2 ? 28 : 64)] = [0x00, 0xff, 0x7f, 0x80, pick(256)][pick(5)];
    }
    seen.add(outcome(() => readLlama2cCheckpoint(model, 'model.bin'), 'model.bin'));
    const tokenizer = TOKENIZER.slice();
    for (let i = 0, n = 1 + pick(4); i < n; i++) tokenizer[pick(tokenizer.length)] ^= 1 << pick(8);
    seen.add(outcome(() => llama2cTokenizerFiles(tokenizer, 'tok512.bin', 512, 512), 'tok512.bin'));
  }
  assert.ok(
    seen.has('read') && seen.has('shape_mismatch') && seen.has('out_of_range'),
    [...seen].join(),
  );
});
