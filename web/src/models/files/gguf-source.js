// A GGUF file through loadModelFiles' reader: the sources are llama2c-source.js' (a path, URL,
// Hub file path or picked File, with its progress, cancel and cache), the file is one, and it
// carries its tokenizer.

import { attnlensError } from '../../errors.js';
import { readGgufHeader } from './gguf.js';
import { ggufConfig, readGgufModel } from './gguf-model.js';
import { createTensorSet } from './tensor-set.js';

// listModelFiles reads this much of the start of a GGUF file (a range request over HTTP) for its
// config: the header, the tokenizer in the metadata (Qwen2's 151,000 tokens and merges take about
// 8 MB) and the tensor table.
const HEADER_PROBE_BYTES = 32 * 2 ** 20;

/** loadModelFiles' result for a GGUF source. */
export async function loadGgufFiles(from, reader) {
  await reader.plan([from.modelName], null);
  const bytes = await reader.required(from.modelName);
  const { header, config, entries, tokenizer } = readGgufModel(bytes, from.modelName);
  return {
    source: {
      ...from.describe,
      format: 'gguf',
      version: header.version,
      fromCache: reader.allFromCache(),
    },
    config,
    tokenizer,
    tensors: createTensorSet(entries),
    bytes: bytes.byteLength,
  };
}

/** listModelFiles' result for a GGUF source: its config from the start of the file only. */
export async function listGgufFiles(from, reader, signal) {
  await reader.plan([from.modelName], null);
  const model = reader.planned().find((file) => file.name === from.modelName);
  if (!model) {
    throw attnlensError('not_found', from.modelName, 'is missing');
  }
  const start = await from.head(from.modelName, HEADER_PROBE_BYTES, signal);
  const header = readGgufHeader(start, from.modelName, model.size ?? undefined);
  const { config } = ggufConfig(header, from.modelName, start);
  return {
    source: { ...from.describe, format: 'gguf', version: header.version },
    files: reader.planned(),
    missing: [],
    weightFiles: [from.modelName],
    weightBytes: model.size,
    downloadBytes: model.size,
    allCached: from.cached ? await from.cached(from.modelName) : null,
    config,
  };
}
