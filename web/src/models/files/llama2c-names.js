// How single-file models (llama2.c checkpoints and GGUF files) are told apart by name, and the Hub
// source that names one: a file inside a Hub repo ('karpathy/tinyllamas/stories15M.bin',
// 'ggml-org/models/tinyllamas/stories260K.gguf'). Kept apart from llama2c-source.js so
// the demo page can check what a reader types with loadModel()'s own rules, without loading the
// model code.

import { attnlensError, describe } from '../../errors.js';
import { validateHubId } from './hub.js';

/** tokenizer.bin, tok512.bin, ...: llama2.c's tokenizer files. */
export const TOKENIZER_NAME = /^(tokenizer|tok\d*)\.bin$/i;

/** A .bin that is not PyTorch's (pytorch_model.bin and its shards) nor a tokenizer. */
export const isCheckpointName = (name) =>
  /\.bin$/i.test(name) && !/^pytorch_model/i.test(name) && !TOKENIZER_NAME.test(name);

/** A GGUF file (llama.cpp's format): it carries its own tokenizer. */
export const isGgufName = (name) => /\.gguf$/i.test(name);

/** A model that is one file: a llama2.c checkpoint or a GGUF file. */
export const isModelFileName = (name) => isCheckpointName(name) || isGgufName(name);

// One segment of a file's path inside a repo.
const PATH_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

/**
 * 'owner/name/path/to/file.bin' (or .gguf), a single-file model inside a Hub repo, as
 * { id, file }; null when `text` names no such file. Throws a TypeError for a bad id or file path.
 */
export function hubCheckpointPath(text) {
  const parts = text.split('/');
  if (parts.length < 3 || !isModelFileName(parts[parts.length - 1])) return null;
  const id = validateHubId(parts.slice(0, 2).join('/'));
  const path = parts.slice(2);
  if (path.some((part) => !PATH_SEGMENT.test(part) || part.includes('..'))) {
    throw attnlensError('invalid_argument', 'source', `${describe(text)}: a bad file path`);
  }
  return { id, file: path.join('/') };
}

/**
 * Returns `text` when loadModel() would fetch it from the Hub: a model id ('owner/name') or a
 * single-file model inside a repo ('owner/name/file.bin', 'owner/name/file.gguf'); else throws
 * a TypeError saying why.
 */
export function validateHubSource(text) {
  if (typeof text === 'string' && hubCheckpointPath(text)) return text;
  return validateHubId(text);
}
