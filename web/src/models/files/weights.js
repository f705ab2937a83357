// Which weight files a model folder holds, and the tensors in them. Preference, as the
// transformers library has it: model.safetensors, its sharded index, pytorch_model.bin, its
// sharded index. An index maps every tensor to a shard file; the shards are read, and every
// tensor is checked to be in the shard the index names (and in no other).

import { attnlensError } from '../../errors.js';
import { readSafetensors } from './safetensors.js';
import { readTorchZip } from './torch-zip.js';

export const WEIGHT_FILES = Object.freeze([
  'model.safetensors',
  'model.safetensors.index.json',
  'pytorch_model.bin',
  'pytorch_model.bin.index.json',
]);

/** The weight file to use among `names` (a Set of file names), or null. */
export function chooseWeightFile(names) {
  return WEIGHT_FILES.find((name) => names.has(name)) ?? null;
}

export const isIndexFile = (name) => name.endsWith('.index.json');

// A shard name comes from a file: it must be a plain file name in the same folder.
const SHARD_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

/**
 * The shard files an index names, in order of first use, and its weight map.
 * @param {unknown} index the parsed index JSON
 * @param {string} file the index's name, for errors
 */
export function readShardIndex(index, file) {
  const weightMap = index?.weight_map;
  if (weightMap === null || typeof weightMap !== 'object' || Array.isArray(weightMap)) {
    throw attnlensError('invalid_argument', file, 'has no weight_map object');
  }
  const extension = file.replace(/\.index\.json$/, '').replace(/^.*\./, '.');
  const shards = new Set();
  for (const [tensor, shard] of Object.entries(weightMap)) {
    if (typeof shard !== 'string' || !SHARD_NAME.test(shard) || shard.includes('..')) {
      throw attnlensError(
        'invalid_argument',
        file,
        `weight_map['${tensor}'] = ${JSON.stringify(shard)} is not a file name in the model folder`,
      );
    }
    if (!shard.endsWith(extension)) {
      throw attnlensError('invalid_argument', file, `shard ${shard} is not a ${extension} file`);
    }
    shards.add(shard);
  }
  if (shards.size === 0) throw attnlensError('invalid_argument', file, 'weight_map is empty');
  return { shards: [...shards], weightMap };
}

/** The validated tensor entries of one weight file (safetensors or a PyTorch zip). */
export function readWeightFile(name, bytes) {
  return name.endsWith('.safetensors')
    ? readSafetensors(bytes, name).entries
    : readTorchZip(bytes, name);
}

/**
 * Every tensor of a sharded checkpoint: the entries of each shard, checked against the index.
 * @param {{ weightMap: object }} index from readShardIndex
 * @param {Map<string, object[]>} entriesByShard shard name -> its entries
 * @param {string} file the index's name
 */
export function mergeShards({ weightMap }, entriesByShard, file) {
  const merged = new Map();
  for (const [shard, entries] of entriesByShard) {
    for (const entry of entries) {
      if (merged.has(entry.name)) {
        throw attnlensError(
          'invalid_argument',
          shard,
          `tensor '${entry.name}' is also in ${merged.get(entry.name).file}`,
          { tensor: entry.name },
        );
      }
      merged.set(entry.name, entry);
    }
  }
  for (const [tensor, shard] of Object.entries(weightMap)) {
    const entry = merged.get(tensor);
    if (!entry || entry.file !== shard) {
      throw attnlensError(
        'not_found',
        file,
        `names tensor '${tensor}' in ${shard}, which ` +
          (entry ? `lacks it (it is in ${entry.file})` : 'lacks it'),
        { tensor },
      );
    }
  }
  return merged;
}
