// loadModelFiles(source, options): the files of one model, wherever they are, read and
// validated: config.json, tokenizer.json (+ tokenizer_config.json), or for a vision model
// (VISION_MODEL_TYPES) preprocessor_config.json instead, and the weights as a TensorSet.
// Sources: a Hugging Face model id (+ revision), the URL of a folder with the same files,
// File objects picked or dropped in a page, and in Node a folder path or file: URL; and
// llama2.c checkpoints with their tokenizer, the bundled stories260K among them
// (llama2c-source.js).
//
// The sizes of every file are known before the first byte is read wherever the source can say
// (a folder listing, File sizes, the Hub's file listing, HEAD), so progress has a total.

import { attnlensError, describe } from '../../errors.js';
import { VISION_MODEL_TYPES } from '../architectures/index.js';
import { nodeBuiltin } from '../../loader.js';
import { throwIfAborted } from './abort.js';
import { optional, optionsObject } from './options.js';
import { fileListSource, folderSource, isFileList } from './local.js';
import { listLlama2cFiles, loadLlama2cFiles, openLlama2cSource } from './llama2c-source.js';
import { resolveRemoteSource } from './remote.js';
import { createTensorSet } from './tensor-set.js';
import {
  chooseWeightFile,
  isIndexFile,
  mergeShards,
  readShardIndex,
  readWeightFile,
  WEIGHT_FILES,
} from './weights.js';

export { writeSafetensors, readSafetensors } from './safetensors.js';
export { createTensorSet } from './tensor-set.js';
export { validateHubId, validateRevision, hubFileUrl } from './hub.js';
export { clearModelCache, MODEL_CACHE_NAME } from './cache.js';
export { BUNDLED_MODELS, LLAMA2C_TOKENIZER_URL } from './llama2c-source.js';

/** The options loadModelFiles takes (a caller with options of its own passes only these). */
export const MODEL_FILES_OPTIONS = Object.freeze([
  'revision',
  'signal',
  'onProgress',
  'cache',
  'hubUrl',
  'fetch',
  'tokenizer',
]);

const REQUIRED = ['config.json', 'tokenizer.json'];
const OPTIONAL = ['tokenizer_config.json', 'preprocessor_config.json'];
const VISION_REQUIRED = ['config.json', 'preprocessor_config.json'];
// Marian's tokenizer (Helsinki-NLP/opus-mt-*: no tokenizer.json): two SentencePiece models and
// the vocabulary they map into (target_vocab.json only with separate_vocabs).
const MARIAN_REQUIRED = ['config.json', 'source.spm', 'target.spm', 'vocab.json'];
const MARIAN_OPTIONAL = ['tokenizer_config.json', 'target_vocab.json'];

// A vision model reads pictures, not text: its preprocessor_config.json replaces the tokenizer.
const isVision = (config) => VISION_MODEL_TYPES.includes(config.model_type);
const isMarian = (config) => config.model_type === 'marian';
const requiredFiles = (config) => {
  if (isVision(config)) return VISION_REQUIRED;
  return isMarian(config) ? MARIAN_REQUIRED : REQUIRED;
};

export async function loadModelFiles(source, rawOptions) {
  const options = checkOptions(rawOptions);
  throwIfAborted(options.signal);
  // llama2.c's format (a .bin and its tok*.bin, or a bundled model): llama2c-source.js.
  const llama2c = await openLlama2cSource(source, options);
  if (llama2c) return loadLlama2cFiles(llama2c, createReader(llama2c, options));
  const from = await openSource(source, options);
  const reader = createReader(from, options);
  const { weightFile, weightFiles, index, listing } = await planFiles(from, reader, options.signal);

  const config = plainObject(parseJson(await reader.required('config.json'), 'config.json'));
  if (isVision(config)) {
    const preprocessor = plainObject(
      parseJson(await reader.required('preprocessor_config.json'), 'preprocessor_config.json'),
      'preprocessor_config.json',
    );
    return {
      ...(await readWeights(reader, from, weightFile, weightFiles, index)),
      config,
      preprocessor,
    };
  }
  const tokenizer = isMarian(config)
    ? await readMarianTokenizer(reader, listing)
    : await readTokenizer(reader);
  return {
    ...(await readWeights(reader, from, weightFile, weightFiles, index)),
    config,
    tokenizer,
  };
}

// The weights (every shard) as a TensorSet, with the source as read.
async function readWeights(reader, from, weightFile, weightFiles, index) {
  const entriesByShard = new Map();
  let bytes = 0;
  for (const file of weightFiles) {
    const data = await reader.required(file);
    bytes += data.byteLength;
    entriesByShard.set(file, readWeightFile(file, data));
  }
  const entries = index
    ? mergeShards(index, entriesByShard, weightFile)
    : entriesByShard.get(weightFile);
  return {
    source: { ...from.describe, fromCache: reader.allFromCache() },
    tensors: createTensorSet(entries),
    bytes,
  };
}

async function readTokenizer(reader) {
  return {
    json: plainObject(
      parseJson(await reader.required('tokenizer.json'), 'tokenizer.json'),
      'tokenizer.json',
    ),
    config: await optionalJson(reader, 'tokenizer_config.json'),
  };
}

// { marian: { sourceSpm, targetSpm, vocab, targetVocab, config } } for marian-tokenizer.js.
async function readMarianTokenizer(reader, listing) {
  await reader.plan([...MARIAN_REQUIRED, ...MARIAN_OPTIONAL], listing);
  return {
    marian: {
      sourceSpm: await reader.required('source.spm'),
      targetSpm: await reader.required('target.spm'),
      vocab: plainObject(
        parseJson(await reader.required('vocab.json'), 'vocab.json'),
        'vocab.json',
      ),
      targetVocab: await optionalJson(reader, 'target_vocab.json'),
      config: await optionalJson(reader, 'tokenizer_config.json'),
    },
  };
}

async function optionalJson(reader, name) {
  const bytes = await reader.optional(name);
  return bytes ? plainObject(parseJson(bytes, name), name) : null;
}

/**
 * What loadModelFiles would download, without downloading it: every file with its size (null
 * where the source cannot say), the required files it lacks (`missing`: a load would fail on
 * them), the weight files and their total, whether every file is already
 * in the browser's model cache, and config.json (read, through the cache: the one small file a
 * model is described by). A sharded model's index is read too. Options: loadModelFiles' without
 * onProgress.
 */
export async function listModelFiles(source, rawOptions) {
  const options = checkOptions(rawOptions, LIST_OPTIONS);
  throwIfAborted(options.signal);
  const llama2c = await openLlama2cSource(source, options);
  if (llama2c) return listLlama2cFiles(llama2c, createReader(llama2c, options), options.signal);
  const from = await openSource(source, options);
  const reader = createReader(from, options);
  const { weightFiles, listing } = await planFiles(from, reader, options.signal);
  const config = plainObject(parseJson(await reader.required('config.json'), 'config.json'));
  if (isMarian(config)) await reader.plan([...MARIAN_REQUIRED, ...MARIAN_OPTIONAL], listing);
  const files = reader.planned();
  const sum = (list) =>
    list.every((file) => file.size !== null) ? list.reduce((a, f) => a + f.size, 0) : null;
  const cached = await Promise.all(files.map((file) => from.cached?.(file.name) ?? false));
  const listedNames = new Set(files.map((file) => file.name));
  return {
    source: from.describe,
    files,
    missing: requiredFiles(config).filter((name) => !listedNames.has(name)),
    weightFiles,
    weightBytes: sum(files.filter((file) => weightFiles.includes(file.name))),
    downloadBytes: sum(files),
    allCached: from.cached ? cached.every(Boolean) : null,
    config,
  };
}

const LIST_OPTIONS = MODEL_FILES_OPTIONS.filter((name) => name !== 'onProgress');

// Which files the source holds and their sizes: the listing where the source has one, else a
// size (HEAD) per candidate; the weights' index is read to find its shards.
async function planFiles(from, reader, signal) {
  const listing = await from.list({ signal });
  const weightFile = listing
    ? chooseWeightFile(new Set(listing.keys()))
    : await reader.firstPresent(WEIGHT_FILES);
  if (!weightFile) {
    throw attnlensError(
      'not_found',
      WEIGHT_FILES[0],
      `no weights in ${sourceName(from)}: expected one of ${WEIGHT_FILES.join(', ')}`,
    );
  }
  // The index (small) is read first: it names the shards whose sizes make up the total.
  let index = null;
  let weightFiles = [weightFile];
  if (isIndexFile(weightFile)) {
    await reader.plan([weightFile], listing);
    index = readShardIndex(parseJson(await reader.required(weightFile), weightFile), weightFile);
    weightFiles = index.shards;
  }
  // Marian's tokenizer files are planned once config.json says the model is one.
  await reader.plan([...REQUIRED, ...OPTIONAL, ...weightFiles], listing);
  return { weightFile, weightFiles, index, listing };
}

function checkOptions(raw, known = MODEL_FILES_OPTIONS) {
  const options = optionsObject(raw, known);
  optional(options.signal, 'signal', 'signal');
  optional(options.onProgress, 'onProgress', 'function');
  optional(options.fetch, 'fetch', 'function');
  optional(options.cache, 'cache', 'boolean');
  return options;
}

async function openSource(source, options) {
  if (isFileList(source)) return fileListSource(source);
  const inNode = typeof globalThis.process?.versions?.node === 'string';
  if (source instanceof URL || typeof source === 'string') {
    const text = String(source);
    if (text.startsWith('file:')) return folderSource(text);
    if (inNode && !/^https?:/i.test(text) && (await isLocalPath(text))) return folderSource(text);
    return resolveRemoteSource(text, options);
  }
  throw attnlensError(
    'invalid_argument',
    'source',
    `expected a model id, a URL, a folder path or File objects, got ${describe(source)}`,
  );
}

// In Node a string names a folder when it looks like a path or exists as one; anything else is
// a Hub id ('gpt2', 'roneneldan/TinyStories-1M').
async function isLocalPath(text) {
  if (/^(\.{1,2}[\\/]|[\\/]|[A-Za-z]:[\\/]|~)/.test(text) || text === '.' || text === '..') {
    return true;
  }
  const fs = (await nodeBuiltin('fs')).promises;
  return fs.stat(text).then(
    (stat) => stat.isDirectory(),
    () => false,
  );
}

const sourceName = (from) => from.describe.id ?? from.describe.url ?? 'the picked files';

// Reads files one after another, reporting progress against the planned total.
function createReader(from, { signal, onProgress }) {
  const expected = new Map(); // name -> size, or null where the source cannot say
  const absent = new Set();
  let totalLoaded = 0;
  let allCached = true;
  const totalBytes = () =>
    [...expected.values()].every((size) => size !== null)
      ? [...expected.values()].reduce((a, b) => a + b, 0)
      : null;

  async function read(name) {
    throwIfAborted(signal);
    const total = expected.get(name) ?? null;
    const base = totalLoaded;
    const report = (loaded) => {
      totalLoaded = base + loaded;
      onProgress?.({ file: name, loaded, total, totalLoaded, totalBytes: totalBytes() });
    };
    const result = await from.read(name, { signal, expectedSize: total, onProgress: report });
    throwIfAborted(signal);
    if (result === null) return null;
    const bytes = result.bytes ?? result;
    if (!result.fromCache) allCached = false;
    if (total !== null && bytes.byteLength !== total) {
      throw attnlensError(
        'shape_mismatch',
        name,
        `is ${bytes.byteLength} bytes, but ${sourceName(from)} lists it as ${total} bytes`,
      );
    }
    report(bytes.byteLength);
    return bytes;
  }

  return {
    /**
     * Records which of `names` exist and their sizes (from the listing, else asked of the
     * source).
     */
    async plan(names, listing) {
      for (const name of names) {
        if (expected.has(name) || absent.has(name)) continue;
        const size = listing ? listing.get(name) : await from.size(name, { signal });
        if (size === undefined) absent.add(name);
        else expected.set(name, size);
      }
    },
    async firstPresent(names) {
      await this.plan(names, null);
      return names.find((name) => expected.has(name)) ?? null;
    },
    async required(name) {
      const bytes = absent.has(name) ? null : await read(name);
      if (bytes === null) {
        throw attnlensError('not_found', name, `is missing from ${sourceName(from)}`);
      }
      return bytes;
    },
    async optional(name) {
      return absent.has(name) ? null : read(name);
    },
    /** Every file planned so far: [{ name, size }] (size null where the source cannot say). */
    planned: () => [...expected].map(([name, size]) => ({ name, size })),
    allFromCache: () => allCached,
  };
}

function parseJson(bytes, file) {
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw attnlensError('invalid_argument', file, 'is not valid UTF-8 text');
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw attnlensError('invalid_argument', file, `is not valid JSON (${error.message})`);
  }
}

function plainObject(value, file = 'config.json') {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw attnlensError(
      'invalid_argument',
      file,
      `must hold a JSON object, got ${describe(value)}`,
    );
  }
  return value;
}
