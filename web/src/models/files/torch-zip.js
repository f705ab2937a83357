// PyTorch checkpoints (pytorch_model.bin, torch >= 1.6): a zip holding <archive>/data.pkl (the
// pickled state dict) and one entry per storage, <archive>/data/<key>. The restricted unpickler
// rebuilds the dict; each tensor becomes a TensorSet entry over its storage's bytes (no copy)
// with its own offset and strides, so views, shared storages and tied weights read correctly.

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
    const bytes = zipEntryBytes(data, record, file);
    if (bytes.byteLength !== numel * DTYPE_BYTES[dtype]) {
      throw attnlensError(
        'shape_mismatch',
        file,
        `storage ${key}: ${numel} elements of ${dtype} need ${numel * DTYPE_BYTES[dtype]} ` +
          `bytes, its entry has ${bytes.byteLength}`,
      );
    }
    const storage = { isStorage: true, key, dtype, numel, location, bytes };
    storages.set(key, storage);
    return storage;
  };
  const root = unpickle(zipEntryBytes(data, entries.get(pickles[0]), file), file, persistentLoad);
  if (!(root instanceof Map))
    throw attnlensError('invalid_argument', file, 'does not hold a state dict');
  const tensors = [];
  collect(root, '', tensors, file);
  return tensors;
}

// The tensors of a (possibly nested) state dict, named by their dotted path; other values
// (numbers, strings a training script saved alongside) are not weights and are left out.
function collect(dict, prefix, out, file) {
  for (const [key, value] of dict) {
    const name = `${prefix}${key}`;
    if (value instanceof Map) collect(value, `${name}.`, out, file);
    else if (value?.tensor) out.push(tensorEntry(name, value, file));
  }
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
