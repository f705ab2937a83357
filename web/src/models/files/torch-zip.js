// PyTorch checkpoints (pytorch_model.bin, torch >= 1.6): a zip holding <archive>/data.pkl (the
// pickled state dict) and one entry per storage, <archive>/data/<key>. The restricted unpickler
// rebuilds the dict; each tensor becomes a TensorSet entry over its storage's bytes (no copy)
// with its own offset and strides, so views, shared storages and tied weights read correctly.
//
// A storage's bytes are only looked at when a tensor over it is read (the TensorSet calls
// `bytes()`), so storages no weight uses are never inflated nor checksummed; a deflated storage
// larger than its tensors need is refused before inflating (a zip bomb of unused storages).

import { attnlensError } from '../../errors.js';
import { DTYPE_BYTES } from './dtypes.js';
import { storageDtype, unpickle } from './pickle.js';
import { elementCount } from './tensor-set.js';
import { readZipDirectory, zipEntryBytes } from './zip.js';

/** The validated tensor entries of a PyTorch zip checkpoint. */
export function readTorchZip(data, file = 'pytorch_model.bin') {
  if (!(data instanceof Uint8Array))
    throw attnlensError('invalid_argument', file, 'expected the file as a Uint8Array');
  if (data.byteLength >= 2 && data[0] === 0x80 && data[1] <= 5) {
    throw attnlensError(
      'invalid_argument',
      file,
      'is a legacy (torch < 1.6) pickle checkpoint; ' +
        're-save it with a newer torch or as safetensors',
    );
  }
  const entries = readZipDirectory(data, file);
  const pickles = [...entries.keys()].filter((name) => /^[^/]+\/data\.pkl$/.test(name));
  if (pickles.length !== 1) {
    throw attnlensError(
      'invalid_argument',
      file,
      `expected one <archive>/data.pkl in the zip, found ${pickles.length}`,
    );
  }
  const prefix = pickles[0].slice(0, -'data.pkl'.length);
  const byteorder = entries.get(`${prefix}byteorder`);
  if (byteorder) {
    const order = new TextDecoder().decode(zipEntryBytes(data, byteorder, file));
    if (order !== 'little')
      throw attnlensError('invalid_argument', file, `stores ${order}-endian data`);
  }

  const storages = new Map();
  const persistentLoad = (pid) => {
    const [kind, type, key, location, numel] = Array.isArray(pid) ? pid : [];
    const dtype = storageDtype(type);
    if (
      kind !== 'storage' ||
      !dtype ||
      typeof key !== 'string' ||
      typeof location !== 'string' ||
      !Number.isSafeInteger(numel) ||
      numel < 0
    ) {
      throw attnlensError(
        'invalid_argument',
        file,
        "pickle: a persistent id is not ('storage', type, key, location, numel)",
      );
    }
    if (storages.has(key)) return storages.get(key);
    const record = entries.get(`${prefix}data/${key}`);
    if (!record)
      throw attnlensError('not_found', file, `storage ${key} has no entry ${prefix}data/${key}`);
    // The size the entry declares, checked before anything is inflated.
    if (record.size !== numel * DTYPE_BYTES[dtype]) {
      throw attnlensError(
        'shape_mismatch',
        file,
        `storage ${key}: ${numel} elements of ${dtype} need ${numel * DTYPE_BYTES[dtype]} ` +
          `bytes, its entry has ${record.size}`,
      );
    }
    const storage = { isStorage: true, key, dtype, numel, location, record, used: 0 };
    storage.bytes = storageBytes(data, storage, file);
    storages.set(key, storage);
    return storage;
  };
  const root = unpickle(zipEntryBytes(data, entries.get(pickles[0]), file), file, persistentLoad);
  if (!(root instanceof Map))
    throw attnlensError('invalid_argument', file, 'does not hold a state dict');
  const tensors = collect(root, file).map(([name, tensor]) => tensorEntry(name, tensor, file));
  return tensors;
}

// Dicts nested deeper than this are not a state dict (torch nests a few levels at most).
const MAX_DEPTH = 64;

// The tensors of a (possibly nested) state dict as [dotted name, tensor], walked without
// recursion; a dict reached twice (the memo lets a pickle share one, or hold itself) is walked
// once, so the work is linear in the pickle. Other values (numbers, strings a training script
// saved alongside) are not weights and are left out.
function collect(root, file) {
  const out = [];
  const seen = new Set([root]);
  const pending = [[root, '', 0]];
  while (pending.length) {
    const [dict, prefix, depth] = pending.pop();
    for (const [key, value] of dict) {
      const name = `${prefix}${key}`;
      if (value instanceof Map) {
        if (seen.has(value)) continue;
        if (depth + 1 >= MAX_DEPTH) {
          throw attnlensError(
            'invalid_argument',
            file,
            `pickle: dicts nested more than ${MAX_DEPTH} deep (at '${name.slice(0, 200)}'): ` +
              'not a state dict',
          );
        }
        seen.add(value);
        pending.push([value, `${name}.`, depth + 1]);
      } else if (value?.tensor) {
        out.push([name, value]);
      }
    }
  }
  return out;
}

// A deflated storage may hold at most this much more than the tensors over it reach (plus
// SLACK_BYTES): inflating is the one place a small file turns into much memory.
const INFLATE_SLACK = 2;
const SLACK_BYTES = 1 << 16;

// The storage's bytes, as a function the TensorSet calls when a tensor over it is read (by then
// every tensor is known, and `used` is the furthest element they reach): stored entries are
// views of the file, deflated ones are inflated once; either is checked against its CRC-32.
function storageBytes(data, storage, file) {
  let bytes = null;
  return () => {
    if (bytes) return bytes;
    const { record, key, used, dtype } = storage;
    if (
      record.method !== 0 &&
      record.size > INFLATE_SLACK * used * DTYPE_BYTES[dtype] + SLACK_BYTES
    ) {
      throw attnlensError(
        'out_of_range',
        file,
        `storage ${key} would inflate to ${record.size} bytes, but its tensors use only ` +
          `${used * DTYPE_BYTES[dtype]}: refusing to inflate it`,
      );
    }
    bytes = zipEntryBytes(data, record, file);
    return bytes;
  };
}

function tensorEntry(name, { storage, offset, shape, strides }, file) {
  const count = elementCount(shape);
  if (!Number.isSafeInteger(count))
    throw attnlensError('shape_mismatch', file, `tensor '${name}' has shape [${shape}]`, {
      tensor: name,
    });
  if (count > 0) {
    const last = shape.reduce((sum, size, d) => sum + (size - 1) * strides[d], offset);
    if (!Number.isSafeInteger(last) || last >= storage.numel) {
      throw attnlensError(
        'out_of_range',
        file,
        `tensor '${name}' (shape [${shape}], strides [${strides}], offset ${offset}) ` +
          `reaches past its storage of ${storage.numel} elements`,
        { tensor: name },
      );
    }
    storage.used = Math.max(storage.used, last + 1);
  }
  return {
    name,
    dtype: storage.dtype,
    shape: [...shape],
    strides: [...strides],
    offset,
    file,
    bytes: storage.bytes,
  };
}
