// Seeded fuzzing of the model-file readers: mutations of valid safetensors files, PyTorch zips
// (stored and deflated) and pickles, a small GGUF model (metadata, tokenizer, tensors of the
// block types), random bytes, random safetensors headers, and random pickle
// programs built from the opcodes a state dict uses (memo sharing, self-reference, nesting).
// Every outcome is either a TensorSet whose tensors all read, or a clean attnlens error (an Error
// with a code naming the file or the tensor) - never a hang, a crash or an exception of another
// kind (a RangeError from a DataView, a stack overflow, a TypeError from reading undefined, ...).
// Each case is timed and the memory the process holds is watched, so a reader whose work or
// memory a small file can blow up fails here. The seeds are fixed: a failure reproduces.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { readSafetensors, writeSafetensors } from '../src/models/files/safetensors.js';
import { createTensorSet } from '../src/models/files/tensor-set.js';
import { readTorchZip } from '../src/models/files/torch-zip.js';
import { readGgufModel } from '../src/models/files/gguf-model.js';
import { random } from './support/helpers.js';
import { zipSync } from 'fflate';
import { op, stateDictPickle, tensorOps, torchZip } from './support/torch-pickle.mjs';
import { writeGguf } from './support/gguf-writer.mjs';

const ROUNDS = 3000;
// Generous bounds for one file of at most a few KiB (which reads in well under a millisecond; a
// garbage collection or a busy machine may still pause for a while): a reader that loops or
// allocates on a file's say-so blows through them by orders of magnitude.
const CASE_MS = 2000;
const MEMORY_GROWTH = 512 * 2 ** 20;
const CODES = new Set(['invalid_argument', 'out_of_range', 'shape_mismatch', 'not_found']);

// One mutation: flip bytes, overwrite a run with extreme values, cut, or duplicate a slice.
function mutate(bytes, next) {
  const pick = (n) => Math.floor(((next() + 1) / 2) * n);
  const out = bytes.slice();
  switch (pick(5)) {
    case 0:
      for (let i = 0, n = 1 + pick(8); i < n; i++) out[pick(out.length)] ^= 1 << pick(8);
      return out;
    case 1: {
      const at = pick(out.length);
      out.fill([0x00, 0xff, 0x7f, 0x80][pick(4)], at, at + 1 + pick(8));
      return out;
    }
    case 2:
      return out.subarray(0, pick(out.length));
    case 3: {
      const at = pick(out.length);
      const length = pick(32);
      const joined = new Uint8Array(out.length + length);
      joined.set(out.subarray(0, at));
      joined.set(out.subarray(at, at + length), at);
      joined.set(out.subarray(at), at + Math.min(length, out.length - at));
      return joined;
    }
    default:
      out[pick(out.length)] = pick(256);
      return out;
  }
}

// A clean error: an attnlens code, naming the file (opening) or the tensor (reading; or the file,
// when a zip entry read then is corrupt or refused).
function checkClean(error, parameters, what) {
  const allowed = [parameters].flat();
  if (!(error instanceof Error) || !CODES.has(error.code) || !allowed.includes(error.parameter)) {
    assert.fail(
      `${what}: ${error?.constructor?.name} ${error?.code}: ${error?.message}\n${error?.stack}`,
    );
  }
}

// Opens `bytes`, then reads every float tensor as float32 and as half bits. A read may only
// fail for a value that does not fit the target type.
function openAndRead(name, bytes, read) {
  let set;
  try {
    set = createTensorSet(read(bytes));
  } catch (error) {
    checkClean(error, name, name);
    return false;
  }
  for (const tensor of set.names) {
    if (!['F32', 'F16', 'BF16', 'F64'].includes(set.info(tensor).dtype)) continue;
    for (const method of ['readFloat32', 'readFloat16']) {
      try {
        set[method](tensor);
      } catch (error) {
        checkClean(error, [tensor, name], `${name} ${tensor}.${method}`);
        if (error.parameter === tensor) {
          assert.ok(
            error instanceof RangeError && /does not fit/.test(error.message),
            error.message,
          );
        } else {
          assert.match(
            error.message,
            /zip: entry .* (is corrupt|does not inflate|inflates to)|refusing to inflate/,
          );
        }
      }
    }
  }
  return true;
}

const heldBytes = () => {
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

/**
 * Opens `rounds` files made by `make(next, round)` (next: the seeded stream), each within
 * CASE_MS and with the memory held staying within MEMORY_GROWTH; returns how many opened.
 */
function fuzzCases(name, seed, read, make, rounds = ROUNDS) {
  const next = random(seed);
  const baseline = heldBytes();
  let opened = 0;
  for (let round = 0; round < rounds; round++) {
    const bytes = make(next, round);
    const started = performance.now();
    try {
      if (openAndRead(name, bytes, read)) opened++;
    } catch (error) {
      error.message = `round ${round} (seed ${seed}): ${error.message}`;
      throw error;
    }
    const took = performance.now() - started;
    assert.ok(took < CASE_MS, `round ${round} (seed ${seed}) took ${took.toFixed(0)} ms`);
    if (round % 250 === 0) {
      const grown = heldBytes() - baseline;
      assert.ok(grown < MEMORY_GROWTH, `round ${round} (seed ${seed}): ${grown} bytes held`);
    }
  }
  return opened;
}

/**
 * Mutates `file` ROUNDS times (`wrap` turns a mutant into the file to open); returns how many
 * opened.
 */
function fuzz(name, file, seed, read, wrap = (bytes) => bytes) {
  return fuzzCases(name, seed, read, (next) => wrap(mutate(file, next)));
}

// A uniform integer in [0, n) from the seeded stream (uniform in [-1, 1)).
const pickFrom = (next) => (n) => Math.floor(((next() + 1) / 2) * n);

// Random bytes of a random length up to `max`, sometimes starting with a format's magic.
function randomBytes(next, max, magic) {
  const pick = pickFrom(next);
  const out = new Uint8Array(pick(max));
  for (let i = 0; i < out.length; i++) out[i] = pick(256);
  if (magic && pick(2)) out.set(magic.subarray(0, out.length));
  return out;
}

it('mutated safetensors files give a TensorSet or a clean error', () => {
  const file = writeSafetensors(
    {
      'wte.weight': {
        dtype: 'F32',
        shape: [3, 4],
        data: Float32Array.from({ length: 12 }, (_, i) => i),
      },
      'ln.bias': { dtype: 'F16', shape: [4], data: Uint16Array.of(0x3c00, 0, 0x8000, 0x7bff) },
      'h.bf': { dtype: 'BF16', shape: [2], data: Uint16Array.of(0x3f80, 0x4000) },
      'h.f64': { dtype: 'F64', shape: [1], data: Float64Array.of(0.25) },
    },
    { format: 'pt' },
  );
  const read = (bytes) => readSafetensors(bytes, 'model.safetensors').entries;
  assert.ok(
    fuzz('model.safetensors', file, 1, read) > 0,
    'some mutants open: the fuzz reaches the readers',
  );
});

it('mutated PyTorch zips and pickles give a TensorSet or a clean error', () => {
  const pickle = stateDictPickle({ numel: 6, offset: 1, shape: [2, 2], strides: [1, 2] });
  const values = Float32Array.of(0, 1, 2, 3, 4, 5);
  const read = (bytes) => readTorchZip(bytes, 'pytorch_model.bin');
  assert.ok(fuzz('pytorch_model.bin', torchZip(pickle, values), 2, read) > 0);
  // Mutating only the pickle reaches deeper into the unpickler than mutating the whole zip.
  assert.ok(fuzz('pytorch_model.bin', pickle, 3, read, (mutant) => torchZip(mutant, values)) > 0);
});

const SAFETENSORS = 'model.safetensors';
const readSafe = (bytes) => readSafetensors(bytes, SAFETENSORS).entries;
const TORCH = 'pytorch_model.bin';
const readTorch = (bytes) => readTorchZip(bytes, TORCH);

it('random bytes give a clean error from each reader', () => {
  const safetensorsMagic = writeSafetensors({
    a: { dtype: 'F32', shape: [1], data: Float32Array.of(1) },
  });
  fuzzCases(SAFETENSORS, 4, readSafe, (next) => randomBytes(next, 256, safetensorsMagic), 1500);
  const zipMagic = Uint8Array.of(0x50, 0x4b, 0x03, 0x04);
  fuzzCases(TORCH, 5, readTorch, (next) => randomBytes(next, 512, zipMagic), 1500);
  // A zip around random pickle bytes reaches the unpickler itself.
  fuzzCases(
    TORCH,
    6,
    readTorch,
    (next) => torchZip(randomBytes(next, 128, Uint8Array.of(0x80, 2))),
    1500,
  );
});

it('random safetensors headers give a TensorSet or a clean error', () => {
  const DTYPES = ['F32', 'F16', 'BF16', 'F64', 'I64', 'U8', 'BOOL', 'F4', '', 7, null];
  const NUMBERS = [0, 1, 2, 3, 4, 8, 16, -1, 1.5, 2 ** 31, 2 ** 53, 1e308, '4', null];
  const make = (next) => {
    const pick = pickFrom(next);
    const value = (list) => list[pick(list.length)];
    const header = {};
    for (let t = 0, n = pick(4); t < n; t++) {
      const shape = Array.from({ length: pick(4) }, () => value(NUMBERS));
      const begin = pick(3) ? pick(24) : value(NUMBERS);
      const offsets = pick(6)
        ? [begin, pick(3) ? begin + pick(32) : value(NUMBERS)]
        : value(NUMBERS);
      header[pick(5) ? `t${t}` : value(['__metadata__', '', '__proto__', 'constructor'])] = pick(8)
        ? { dtype: value(DTYPES), shape, data_offsets: offsets }
        : value(NUMBERS);
    }
    const json = new TextEncoder().encode(JSON.stringify(header));
    const out = new Uint8Array(8 + json.length + pick(40));
    new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
    out.set(json, 8);
    return out;
  };
  assert.ok(fuzzCases(SAFETENSORS, 7, readSafe, make) > 0, 'some headers open');
});

// A random pickle program over the opcodes of a state dict: containers, strings and ints, the
// memo (so objects are shared and may hold themselves), tensors over storage '0', SETITEMS and
// APPENDS, then STOP. Most are malformed somewhere; many are deeply shared or nested.
function randomPickle(next) {
  const pick = pickFrom(next);
  const u32 = (n) => [...new Uint8Array(Uint32Array.of(n).buffer)];
  const pieces = [
    () => [0x7d], // EMPTY_DICT
    () => [0x5d], // EMPTY_LIST
    () => op.mark,
    () => op.unicode(['w', 'a', 'b', 'h.0', ''][pick(5)]),
    () => op.int(pick(8)),
    () => [0x72, ...u32(pick(6))], // LONG_BINPUT
    () => [0x6a, ...u32(pick(6))], // LONG_BINGET
    () => [0x94], // MEMOIZE
    () => op.setitems,
    () => [0x73], // SETITEM
    () => [0x65], // APPENDS
    () => [0x32], // DUP
    () => [0x30], // POP
    () => op.tuple,
    () => tensorOps({ numel: 4, shape: [pick(5)], strides: [1], offset: pick(2) }),
  ];
  const body = [];
  for (let i = 0, n = 1 + pick(60); i < n; i++) body.push(...pieces[pick(pieces.length)]());
  return Uint8Array.from([...op.proto, 0x7d, ...op.mark, ...body, ...op.setitems, ...op.stop]);
}

it('random pickle programs give a TensorSet or a clean error, in bounded time', () => {
  const values = Float32Array.of(1, 2, 3, 4);
  const opened = fuzzCases(TORCH, 8, readTorch, (next) => torchZip(randomPickle(next), values));
  assert.ok(opened > 0, 'some programs open');
});

it('mutated deflated zips give a TensorSet or a clean error', () => {
  const values = Float32Array.from({ length: 64 }, (_, i) => i % 7);
  const zip = zipSync(
    {
      'archive/data.pkl': [
        stateDictPickle({ numel: 64, shape: [8, 8], strides: [8, 1] }),
        { level: 6 },
      ],
      'archive/data/0': [new Uint8Array(values.buffer), { level: 6 }],
      'archive/version': new TextEncoder().encode('3\n'),
    },
    { level: 0 },
  );
  assert.equal(createTensorSet(readTorch(zip)).readFloat32('w')[9], 2, 'the original reads');
  fuzz(TORCH, zip, 9, readTorch);
});

// A tiny llama GGUF (hidden 32, one layer, five tokens) with tensors of every 32-block type and
// the float types, so mutations reach the metadata, the tokenizer, the tensor table and the
// dequantisers.
function tinyGguf() {
  const next = random(9);
  const tensor = (name, dims, typeId, bytes) => ({
    name,
    dims,
    typeId,
    data: Uint8Array.from({ length: bytes }, () => Math.floor(((next() + 1) / 2) * 256) & 0x3b),
  });
  const tokens = ['<unk>', '<s>', '</s>', '\u2581a', 'b'];
  return writeGguf({
    metadata: [
      ['general.architecture', 'llama'],
      ['llama.block_count', 1],
      ['llama.embedding_length', 32],
      ['llama.feed_forward_length', 32],
      ['llama.attention.head_count', 2],
      ['llama.context_length', 16],
      ['llama.attention.layer_norm_rms_epsilon', 1e-5],
      ['tokenizer.ggml.model', 'llama'],
      ['tokenizer.ggml.tokens', tokens],
      ['tokenizer.ggml.scores', [0, 0, 0, -1.5, -2.5]],
      ['tokenizer.ggml.token_type', [2, 3, 3, 1, 1]],
      ['tokenizer.ggml.bos_token_id', 1],
    ],
    tensors: [
      tensor('token_embd.weight', [32, 5], 8, 5 * 34),
      tensor('output_norm.weight', [32], 0, 128),
      tensor('blk.0.attn_norm.weight', [32], 1, 64),
      tensor('blk.0.attn_q.weight', [32, 32], 2, 32 * 18),
      tensor('blk.0.attn_k.weight', [32, 32], 8, 32 * 34),
      tensor('blk.0.attn_v.weight', [32, 32], 30, 32 * 64),
      tensor('blk.0.attn_output.weight', [32, 32], 1, 32 * 64),
    ],
  });
}

it('mutated GGUF files give a TensorSet or a clean error', () => {
  const GGUF = 'model.gguf';
  const read = (bytes) => readGgufModel(bytes, GGUF).entries;
  const file = tinyGguf();
  assert.ok(fuzzCases(GGUF, 10, read, (next) => mutate(file, next), 1500) > 0, 'some open');
  const magic = new TextEncoder().encode('GGUF\x03\0\0\0');
  fuzzCases(GGUF, 11, read, (next) => randomBytes(next, 256, magic), 1500);
});
