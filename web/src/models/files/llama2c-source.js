// Where a llama2.c checkpoint and its tokenizer come from, as a source loadModelFiles reads like
// any other (list / size / read / describe):
//   'stories260K'                  the model attnlens carries (bundled/stories260K/): no network
//   File objects                   a checkpoint .bin and a tokenizer .bin, picked or dropped
//   'https://.../stories15M.bin'   a checkpoint's URL
//   'owner/name/path/file.bin'     a checkpoint in a Hub repo (karpathy/tinyllamas/stories15M.bin)
//   a Node path or file: URL       a checkpoint file, or a folder with one and no config.json
// A GGUF file (.gguf) arrives the same ways (but for the bundled name) and is read by
// gguf-source.js: it carries its tokenizer, so it has no tokenizer file.
// The tokenizer is options.tokenizer (a URL or path, resolved against the checkpoint's, a File or
// the bytes) where given; else the files beside the checkpoint: tok{vocab_size}.bin, then
// tokenizer.bin (for a 32,000-token model, tokenizer.bin first: llama2.c's name for Llama 2's).
// karpathy/tinyllamas holds stories15M/42M/110M without their tokenizer, so those need the
// option: llama2.c's tokenizer.bin (LLAMA2C_TOKENIZER_URL).

import { attnlensError, describe } from '../../errors.js';
import { nodeBuiltin } from '../../loader.js';
import { abortable, throwIfAborted } from './abort.js';
import { BUNDLED, isBundledModel } from './bundled.js';
import { cachedBytes, cachedSize, openModelCache, storeBytes } from './cache.js';
import { download, headSize, httpError, request } from './download.js';
import { checkHubUrl, validateRevision } from './hub.js';
import { llamaConfig, readLlama2cCheckpoint, readLlama2cHeader } from './llama2c.js';
import { loadGgufFiles, listGgufFiles } from './gguf-source.js';
import { hubCheckpointPath, isGgufName, isModelFileName, TOKENIZER_NAME } from './llama2c-names.js';
import { llama2cTokenizerFiles } from './llama2c-tokenizer.js';
import { createTensorSet } from './tensor-set.js';

/** Where llama2.c's own tokenizer.bin (Llama 2's 32,000 tokens) is published. */
export const LLAMA2C_TOKENIZER_URL =
  'https://raw.githubusercontent.com/karpathy/llama2.c/master/tokenizer.bin';

export { BUNDLED_MODELS } from './bundled.js';

const LOOKS_LIKE_PATH = /^(\.{1,2}[\\/]|[\\/]|[A-Za-z]:[\\/]|~)/;
const inNode = () => typeof globalThis.process?.versions?.node === 'string';

/**
 * The llama2.c source `source` names, or null when it names something else (a Hugging Face
 * model: config.json and its weights). `options`: loadModelFiles' (tokenizer, fetch, cache,
 * revision, hubUrl).
 */
export async function openLlama2cSource(source, options) {
  const found = await findLlama2c(source, options);
  if (!found && options.tokenizer !== undefined) {
    throw attnlensError(
      'invalid_argument',
      'tokenizer',
      'applies only to llama2.c checkpoints (a .bin file with a tok*.bin tokenizer); a Hugging ' +
        'Face model has its tokenizer.json',
    );
  }
  if (found && isGgufName(found.modelName) && options.tokenizer !== undefined) {
    throw attnlensError(
      'invalid_argument',
      'tokenizer',
      `${found.modelName} is a GGUF file, which carries its own tokenizer`,
    );
  }
  if (found?.kind === 'bundled' && options.tokenizer !== undefined) {
    throw attnlensError(
      'invalid_argument',
      'tokenizer',
      `${found.describe.id} carries its own tokenizer; the option is for other checkpoints`,
    );
  }
  return found;
}

async function findLlama2c(source, options) {
  if (isBundledModel(source)) {
    return bundledSource(source, options);
  }
  if (Array.isArray(source) || (typeof FileList !== 'undefined' && source instanceof FileList)) {
    return fileListLlama2c(Array.from(source), options);
  }
  if (!(source instanceof URL) && typeof source !== 'string') return null;
  const text = String(source);
  if (/^https?:/i.test(text)) {
    const url = new URL(text);
    if (!isModelFileName(lastSegment(url.pathname))) return null;
    if (options.revision !== undefined) {
      throw attnlensError(
        'invalid_argument',
        'revision',
        'applies only to Hub model ids, not URLs',
      );
    }
    return httpLlama2c({ kind: 'url', url: url.href }, url, options);
  }
  if (inNode() && (text.startsWith('file:') || (await existsLocally(text)))) {
    return localLlama2c(text, options);
  }
  if (inNode() && LOOKS_LIKE_PATH.test(text) && isModelFileName(text.split(/[\\/]/).pop())) {
    throw attnlensError('not_found', 'source', `no model file at ${text}`);
  }
  // owner/name/path/to/file.bin: a checkpoint inside a Hub repo.
  const hub = hubCheckpointPath(text);
  if (hub) {
    const { id, file } = hub;
    const revision = validateRevision(options.revision ?? 'main');
    const base = `${checkHubUrl(options.hubUrl)}/${id}/resolve/${encodeURIComponent(revision)}/`;
    const url = new URL(file.split('/').map(encodeURIComponent).join('/'), base);
    return httpLlama2c({ kind: 'hub', id, revision, file }, url, options);
  }
  return null;
}

// The file name at the end of a URL path (as written, where its %-escapes are malformed).
function lastSegment(path) {
  const segment = path.split('/').pop() ?? '';
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

async function existsLocally(text) {
  const fs = (await nodeBuiltin('fs')).promises;
  return fs.stat(text).then(
    () => true,
    () => false,
  );
}

/**
 * Reads a llama2.c source through loadModelFiles' reader: the checkpoint, then (its header
 * names the vocabulary) the tokenizer. Returns loadModelFiles' result.
 */
export async function loadLlama2cFiles(from, reader) {
  if (isGgufName(from.modelName)) return loadGgufFiles(from, reader);
  await reader.plan([from.modelName], null);
  const modelBytes = await reader.required(from.modelName);
  const { header, config, entries } = readLlama2cCheckpoint(modelBytes, from.modelName);
  const candidates = tokenizerCandidates(from, header);
  const tokenizerName = await reader.firstPresent(candidates);
  if (!tokenizerName) {
    throw attnlensError(
      'not_found',
      'tokenizer',
      `no tokenizer beside ${from.modelName} (looked for ${candidates.join(', ')}): pass ` +
        `options.tokenizer` +
        (header.vocab === 32000 ? `, e.g. llama2.c's ${LLAMA2C_TOKENIZER_URL}` : ''),
    );
  }
  const tokenizerBytes = await reader.required(tokenizerName);
  const tokenizer = llama2cTokenizerFiles(
    tokenizerBytes,
    tokenizerName,
    header.vocab,
    header.seqLen,
  );
  return {
    source: {
      ...from.describe,
      format: 'llama2.c',
      version: header.version,
      fromCache: reader.allFromCache(),
    },
    config,
    tokenizer,
    tensors: createTensorSet(entries),
    bytes: modelBytes.byteLength,
  };
}

// The tokenizer's file: the one given or picked, else the names llama2.c uses beside a model.
const tokenizerCandidates = (from, header) =>
  from.tokenizerName
    ? [from.tokenizerName]
    : header.vocab === 32000
      ? ['tokenizer.bin', 'tok32000.bin']
      : [`tok${header.vocab}.bin`, 'tokenizer.bin'];

/**
 * What listModelFiles says of a llama2.c source: its files and sizes, and the config.json its
 * header stands for, read from the first 256 bytes only (a range request over HTTP).
 */
export async function listLlama2cFiles(from, reader, signal) {
  if (isGgufName(from.modelName)) return listGgufFiles(from, reader, signal);
  await reader.plan([from.modelName], null);
  const model = reader.planned().find((file) => file.name === from.modelName);
  if (!model) {
    throw attnlensError('not_found', from.modelName, `is missing from ${sourceName(from)}`);
  }
  const start = await from.head(from.modelName, HEADER_PROBE_BYTES, signal);
  const header = readLlama2cHeader(start, from.modelName, model.size ?? undefined);
  const tokenizerName = await reader.firstPresent(tokenizerCandidates(from, header));
  const files = reader.planned();
  const sum = files.every((file) => file.size !== null)
    ? files.reduce((a, file) => a + file.size, 0)
    : null;
  const cached = await Promise.all(files.map((file) => from.cached?.(file.name) ?? false));
  return {
    source: { ...from.describe, format: 'llama2.c', version: header.version },
    files,
    missing: tokenizerName ? [] : ['tokenizer'],
    weightFiles: [from.modelName],
    weightBytes: model.size,
    downloadBytes: sum,
    allCached: from.cached ? cached.every(Boolean) : null,
    config: llamaConfig(header),
  };
}

const HEADER_PROBE_BYTES = 256;
const sourceName = (from) => from.describe.id ?? from.describe.url ?? 'the picked files';

// A source over named files, each a function that reads it: { name: { size, read } }.
function namedSource(describeAs, modelName, tokenizerName, files) {
  return {
    describe: describeAs,
    kind: describeAs.kind,
    modelName,
    tokenizerName,
    async list() {
      return null;
    },
    async size(name, { signal } = {}) {
      return files(name)?.size(signal);
    },
    async read(name, options = {}) {
      const file = files(name);
      return file ? file.read(options) : null;
    },
    /** The first `count` bytes of a file (fewer when it is shorter). */
    async head(name, count, signal) {
      const file = files(name);
      if (file?.head) return file.head(count, signal);
      const bytes = await this.read(name, { signal });
      const all = bytes?.bytes ?? bytes;
      if (!all) throw attnlensError('not_found', name, `is missing from ${sourceName(this)}`);
      return all.subarray(0, count);
    },
  };
}

function bundledSource(id) {
  const { model, tokenizer } = BUNDLED[id];
  const byName = new Map([model, tokenizer].map((file) => [file.name, file]));
  return namedSource({ kind: 'bundled', id }, model.name, tokenizer.name, (name) => {
    const file = byName.get(name);
    if (!file) return undefined;
    return {
      size: async () => file.bytes,
      read: ({ signal, onProgress }) => readUrl(file.url(), { signal, onProgress }),
    };
  });
}

// A bundled file: from disk in Node, fetched beside the module elsewhere (the site's service
// worker keeps it offline).
async function readUrl(url, { signal, onProgress }) {
  if (url.protocol === 'file:') {
    const fs = (await nodeBuiltin('fs')).promises;
    return abortable(signal, async () => {
      const bytes = await fs.readFile(url, { signal });
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    });
  }
  const bytes = await download(globalThis.fetch.bind(globalThis), url.href, { signal, onProgress });
  if (bytes === null) throw attnlensError('not_found', 'source', `${url.href} is missing`);
  return bytes;
}

function fileListLlama2c(list, options) {
  if (list.length === 0 || !list.every((file) => file instanceof Blob)) return null;
  const byName = new Map(list.map((file) => [String(file.name).split(/[\\/]/).pop(), file]));
  if (byName.has('config.json')) return null;
  const checkpoints = [...byName.keys()].filter(isModelFileName);
  if (checkpoints.length === 0) return null;
  if (checkpoints.length > 1) {
    throw attnlensError(
      'invalid_argument',
      'source',
      `more than one model file (llama2.c or GGUF) among the files (${checkpoints.join(', ')}): ` +
        'pick one',
    );
  }
  if (typeof options.tokenizer === 'string' || options.tokenizer instanceof URL) {
    throw attnlensError(
      'invalid_argument',
      'tokenizer',
      'with picked files, pick the tokenizer .bin too, or pass it as a File',
    );
  }
  const tokenizer = ownTokenizer(options.tokenizer);
  if (tokenizer) byName.set(tokenizer.name, tokenizer.file);
  const listed = [...byName.keys()].filter((name) => TOKENIZER_NAME.test(name));
  return namedSource(
    { kind: 'files' },
    checkpoints[0],
    tokenizer?.name ?? (listed.length === 1 ? listed[0] : null),
    (name) => {
      const file = byName.get(name);
      return file && blobFile(file);
    },
  );
}

const blobFile = (file) => ({
  size: async () => (file instanceof Uint8Array ? file.byteLength : file.size),
  head: async (count) =>
    file instanceof Uint8Array
      ? file.subarray(0, count)
      : new Uint8Array(await file.slice(0, count).arrayBuffer()),
  read: ({ signal }) =>
    abortable(signal, async () =>
      file instanceof Uint8Array ? file : new Uint8Array(await file.arrayBuffer()),
    ),
});

// options.tokenizer as a file of its own ({ name, file }: a Blob or bytes), or null when it is a
// location (string or URL) or absent.
function ownTokenizer(value) {
  if (value === undefined || typeof value === 'string' || value instanceof URL) return null;
  if (typeof Blob !== 'undefined' && value instanceof Blob) {
    return {
      name: typeof value.name === 'string' && value.name ? value.name : 'tokenizer',
      file: value,
    };
  }
  if (value instanceof Uint8Array) return { name: 'tokenizer', file: value };
  if (value instanceof ArrayBuffer) return { name: 'tokenizer', file: new Uint8Array(value) };
  throw attnlensError(
    'invalid_argument',
    'tokenizer',
    `expected a URL, a path, a File or the bytes of a tokenizer .bin, got ${describe(value)}`,
  );
}

async function httpLlama2c(describeAs, modelUrl, options) {
  const fetch = options.fetch === undefined ? globalThis.fetch?.bind(globalThis) : options.fetch;
  if (typeof fetch !== 'function') {
    throw attnlensError('invalid_argument', 'fetch', 'no fetch() here: pass options.fetch');
  }
  const cache = await openModelCache(options.cache === undefined ? true : options.cache);
  const modelName = lastSegment(modelUrl.pathname);
  const own = ownTokenizer(options.tokenizer);
  const location =
    own || options.tokenizer === undefined ? null : new URL(options.tokenizer, modelUrl);
  const tokenizerName =
    own?.name ?? (location ? lastSegment(location.pathname) || 'tokenizer' : null);
  const urlOf = (name) =>
    name === modelName ? modelUrl : name === tokenizerName ? location : new URL(name, modelUrl);
  const source = namedSource(describeAs, modelName, tokenizerName, (name) => {
    if (own && name === own.name) return blobFile(own.file);
    const url = urlOf(name)?.href;
    if (!url) return undefined;
    return {
      async size(signal) {
        const stored = await cachedSize(cache, url);
        return stored !== undefined ? stored : headSize(fetch, url, signal);
      },
      async head(count, signal) {
        const stored = await cachedBytes(cache, url);
        if (stored) return stored.subarray(0, count);
        return rangeStart(fetch, url, count, signal);
      },
      async read({ signal, expectedSize, onProgress }) {
        const stored = await cachedBytes(cache, url);
        if (stored) return { bytes: stored, fromCache: true };
        const bytes = await download(fetch, url, { signal, expectedSize, onProgress });
        if (bytes) await storeBytes(cache, url, bytes);
        return bytes && { bytes, fromCache: false };
      },
    };
  });
  source.cached = async (name) => {
    const url = urlOf(name)?.href;
    return url ? (await cachedSize(cache, url)) !== undefined : false;
  };
  return source;
}

// The first `count` bytes of `url`: a range request, and where a server ignores the range, the
// start of the whole body (the rest is not downloaded).
async function rangeStart(fetch, url, count, signal) {
  const response = await request(
    fetch,
    url,
    { headers: { range: `bytes=0-${count - 1}` } },
    signal,
  );
  if (!response.ok) throw httpError(url, response);
  if (!response.body) return new Uint8Array(await response.arrayBuffer()).subarray(0, count);
  const reader = response.body.getReader();
  const out = new Uint8Array(count);
  let loaded = 0;
  try {
    while (loaded < count) {
      const { done, value } = await reader.read();
      if (done) break;
      const take = Math.min(value.byteLength, count - loaded);
      out.set(value.subarray(0, take), loaded);
      loaded += take;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return out.subarray(0, loaded);
}

// A Node path or file: URL: a checkpoint file, or a folder holding one and no config.json.
async function localLlama2c(text, options) {
  const { fileURLToPath, pathToFileURL } = await nodeBuiltin('url');
  const path = await nodeBuiltin('path');
  const fs = (await nodeBuiltin('fs')).promises;
  const target = path.resolve(text.startsWith('file:') ? fileURLToPath(text) : text);
  const stat = await fs.stat(target).catch(() => null);
  if (!stat) return null; // folderSource says what is missing
  let folder = target;
  let modelName;
  if (stat.isDirectory()) {
    const names = await fs.readdir(target);
    const checkpoints = names.filter(isModelFileName);
    if (names.includes('config.json') || checkpoints.length !== 1) return null;
    modelName = checkpoints[0];
  } else {
    if (!isModelFileName(path.basename(target))) return null;
    folder = path.dirname(target);
    modelName = path.basename(target);
  }
  const own = ownTokenizer(options.tokenizer);
  let tokenizerPath = null;
  if (options.tokenizer !== undefined && !own) {
    const value = String(options.tokenizer);
    tokenizerPath = value.startsWith('file:') ? fileURLToPath(value) : path.resolve(folder, value);
  }
  const tokenizerName = own?.name ?? (tokenizerPath ? path.basename(tokenizerPath) : null);
  const pathOf = (name) => (name === tokenizerName && tokenizerPath) || path.join(folder, name);
  return namedSource(
    { kind: 'file', url: pathToFileURL(path.join(folder, modelName)).href },
    modelName,
    tokenizerName,
    (name) => {
      if (own && name === own.name) return blobFile(own.file);
      const file = pathOf(name);
      return {
        size: async () =>
          fs.stat(file).then(
            (s) => (s.isFile() ? s.size : undefined),
            () => undefined,
          ),
        head: async (count) => {
          const handle = await fs.open(file, 'r');
          try {
            const out = new Uint8Array(count);
            const { bytesRead } = await handle.read(out, 0, count, 0);
            return out.subarray(0, bytesRead);
          } finally {
            await handle.close();
          }
        },
        read: ({ signal }) =>
          abortable(signal, async () => {
            throwIfAborted(signal);
            const bytes = await fs.readFile(file, { signal });
            return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
          }),
      };
    },
  );
}
