// Seeded mutations of valid safetensors, PyTorch zip and pickle files: every outcome is either a
// TensorSet whose tensors all read, or a clean attnlens error (an Error with a code and the file
// as its parameter) - never a hang, a crash or an exception of another kind (a RangeError from a
// DataView, a TypeError from reading undefined, ...). The seeds are fixed: a failure reproduces.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { readSafetensors, writeSafetensors } from '../src/models/files/safetensors.js';
import { createTensorSet } from '../src/models/files/tensor-set.js';
import { readTorchZip } from '../src/models/files/torch-zip.js';
import { random } from './support/helpers.js';
import { stateDictPickle, torchZip } from './support/torch-pickle.mjs';

const ROUNDS = 3000;
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

// A clean error: an attnlens code, naming the file (opening) or the tensor (reading).
function checkClean(error, parameter, what) {
  if (!(error instanceof Error) || !CODES.has(error.code) || error.parameter !== parameter) {
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
        checkClean(error, tensor, `${name} ${tensor}.${method}`);
        assert.ok(error instanceof RangeError && /does not fit/.test(error.message), error.message);
      }
    }
  }
  return true;
}

/**
 * Mutates `file` ROUNDS times (`wrap` turns a mutant into the file to open); returns how many
 * opened.
 */
function fuzz(name, file, seed, read, wrap = (bytes) => bytes) {
  const next = random(seed);
  let opened = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const bytes = wrap(mutate(file, next));
    try {
      if (openAndRead(name, bytes, read)) opened++;
    } catch (error) {
      error.message = `round ${round} (seed ${seed}): ${error.message}`;
      throw error;
    }
  }
  return opened;
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
