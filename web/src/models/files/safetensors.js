// safetensors: an 8-byte little-endian header length, a JSON header
//   { name: { dtype, shape, data_offsets: [begin, end] }, ..., __metadata__?: { string: string } }
// then the raw little-endian, row-major data; offsets count from the end of the header.
// Reading validates every field against the file before any tensor is touched; writing makes the
// same layout (header padded with spaces to 8 bytes, as the reference implementation does).

import { attnlensError } from '../../errors.js';
import { DTYPE_BYTES } from './dtypes.js';
import { elementCount } from './tensor-set.js';

/** The largest JSON header accepted: the reference implementation's limit (100 MB). */
export const MAX_HEADER_BYTES = 100_000_000;

const bad = (file, detail, extra) => attnlensError('invalid_argument', file, detail, extra);
const outside = (file, detail, extra) => attnlensError('out_of_range', file, detail, extra);

/**
 * The validated tensors of one safetensors file: `{ entries, metadata }`, each entry
 * `{ name, dtype, shape, file, bytes }` with `bytes` a view of `data` (no copy).
 * @param {Uint8Array} data the whole file
 * @param {string} file its name, for errors
 */
export function readSafetensors(data, file = 'model.safetensors') {
  if (!(data instanceof Uint8Array)) throw bad(file, 'expected the file as a Uint8Array');
  if (data.byteLength < 8) {
    throw outside(file, `the file is ${data.byteLength} bytes, too short for the header length`);
  }
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const headerLength = view.getBigUint64(0, true);
  if (headerLength > BigInt(MAX_HEADER_BYTES)) {
    throw outside(file, `header length ${headerLength} exceeds the ${MAX_HEADER_BYTES}-byte limit`);
  }
  const dataStart = 8 + Number(headerLength);
  if (dataStart > data.byteLength) {
    throw outside(
      file,
      `header length ${headerLength} runs past the end of the file (${data.byteLength} bytes): ` +
        'the file is truncated or not safetensors',
    );
  }
  const header = parseHeader(data.subarray(8, dataStart), file);
  const dataLength = data.byteLength - dataStart;
  const entries = [];
  let metadata = null;
  for (const [name, value] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = checkMetadata(value, file);
      continue;
    }
    const entry = checkTensor(name, value, file, dataLength);
    entry.bytes = data.subarray(dataStart + entry.begin, dataStart + entry.end);
    entries.push(entry);
  }
  checkLayout(entries, file, dataLength);
  return {
    entries: entries.map(({ name, dtype, shape, bytes }) => ({ name, dtype, shape, file, bytes })),
    metadata,
  };
}

function parseHeader(bytes, file) {
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw bad(file, 'the header is not valid UTF-8');
  }
  let header;
  try {
    header = JSON.parse(text);
  } catch (error) {
    throw bad(file, `the header is not valid JSON (${error.message})`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw bad(file, 'the header is not a JSON object');
  }
  const duplicate = firstDuplicateKey(text);
  if (duplicate !== null) throw bad(file, `tensor '${duplicate}' appears twice in the header`);
  return header;
}

// JSON.parse keeps the last of two equal keys silently; the top-level keys are scanned here so a
// header naming one tensor twice is refused. `text` is already known to be valid JSON.
function firstDuplicateKey(text) {
  const seen = new Set();
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      let k = j + 1;
      while (k < text.length && /\s/.test(text[k])) k++;
      if (depth === 1 && text[k] === ':') {
        const key = JSON.parse(text.slice(i, j + 1));
        if (seen.has(key)) return key;
        seen.add(key);
      }
      i = j;
    }
  }
  return null;
}

function checkMetadata(value, file) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw bad(file, '__metadata__ is not an object of strings');
  }
  for (const [key, text] of Object.entries(value)) {
    if (typeof text !== 'string') throw bad(file, `__metadata__.${key} is not a string`);
  }
  return { ...value };
}

function checkTensor(name, value, file, dataLength) {
  const where = `tensor '${name}'`;
  const extra = { tensor: name };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw bad(file, `${where} is not an object with dtype, shape and data_offsets`, extra);
  }
  const { dtype, shape, data_offsets: offsets } = value;
  if (typeof dtype !== 'string' || !Object.hasOwn(DTYPE_BYTES, dtype)) {
    throw bad(
      file,
      `${where} has unknown dtype ${JSON.stringify(dtype)} ` +
        `(known: ${Object.keys(DTYPE_BYTES).join(', ')})`,
      extra,
    );
  }
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw bad(file, `${where} has shape ${JSON.stringify(shape)}: not a list of sizes >= 0`, extra);
  }
  if (
    !Array.isArray(offsets) ||
    offsets.length !== 2 ||
    !offsets.every((o) => Number.isSafeInteger(o) && o >= 0) ||
    offsets[0] > offsets[1]
  ) {
    throw bad(
      file,
      `${where} has data_offsets ${JSON.stringify(offsets)}: ` +
        'not [begin, end] with 0 <= begin <= end',
      extra,
    );
  }
  const [begin, end] = offsets;
  const expected = elementCount(shape) * DTYPE_BYTES[dtype];
  if (!Number.isSafeInteger(expected) || expected !== end - begin) {
    throw attnlensError(
      'shape_mismatch',
      file,
      `${where}: shape [${shape}] of ${dtype} needs ${expected} bytes, ` +
        `data_offsets [${begin}, ${end}] hold ${end - begin}`,
      extra,
    );
  }
  if (end > dataLength) {
    throw outside(
      file,
      `${where}: data_offsets [${begin}, ${end}] lie outside the data ` +
        `(${dataLength} bytes after the header)`,
      extra,
    );
  }
  return { name, dtype, shape: [...shape], begin, end };
}

// As the reference implementation requires: the tensors, in order of their offsets, tile the
// data exactly, from byte 0 to its end. No overlap (two tensors sharing bytes), no gap and no
// trailing bytes (bytes no tensor accounts for: where a tampered file would hide data).
function checkLayout(entries, file, dataLength) {
  const sorted = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let end = 0;
  let previous = null;
  for (const next of sorted) {
    if (next.begin < end) {
      throw outside(
        file,
        `tensors '${previous.name}' [${previous.begin}, ${previous.end}] and '${next.name}' ` +
          `[${next.begin}, ${next.end}] overlap`,
        { tensor: next.name },
      );
    }
    if (next.begin > end) {
      throw outside(
        file,
        `bytes [${end}, ${next.begin}) of the data belong to no tensor (a gap before ` +
          `'${next.name}'); the reference implementation refuses such files`,
        { tensor: next.name },
      );
    }
    end = next.end;
    previous = next;
  }
  if (end !== dataLength) {
    throw outside(
      file,
      `${dataLength - end} bytes after the last tensor belong to no tensor (the data is ` +
        `${dataLength} bytes, the tensors end at ${end}); the reference implementation refuses ` +
        'such files',
    );
  }
}

/**
 * A safetensors file of `tensors`: a Map or object of name -> { dtype, shape, data }, `data` a
 * typed array (or Uint8Array of raw little-endian bytes) of exactly the shape's byte length.
 * `metadata`: an optional object of strings (safetensors' __metadata__).
 * @returns {Uint8Array}
 */
export function writeSafetensors(tensors, metadata) {
  const list = tensors instanceof Map ? [...tensors] : Object.entries(tensors ?? {});
  const header = {};
  if (metadata !== undefined && metadata !== null) {
    header.__metadata__ = checkMetadata(metadata, 'metadata');
  }
  let offset = 0;
  const chunks = [];
  for (const [name, { dtype, shape, data }] of list) {
    if (name === '__metadata__') throw bad('tensors', `'__metadata__' is not a tensor name`);
    if (!Object.hasOwn(DTYPE_BYTES, dtype)) throw bad(name, `unknown dtype ${String(dtype)}`);
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw bad(name, `shape ${JSON.stringify(shape)} is not a list of sizes >= 0`);
    }
    if (!ArrayBuffer.isView(data)) throw bad(name, 'data is not a typed array');
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    const expected = elementCount(shape) * DTYPE_BYTES[dtype];
    if (bytes.byteLength !== expected) {
      throw attnlensError(
        'shape_mismatch',
        name,
        `shape [${shape}] of ${dtype} needs ${expected} bytes, data has ${bytes.byteLength}`,
      );
    }
    header[name] = { dtype, shape: [...shape], data_offsets: [offset, offset + expected] };
    chunks.push(bytes);
    offset += expected;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.byteLength / 8) * 8;
  const out = new Uint8Array(8 + padded + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(padded), true);
  out.fill(0x20, 8, 8 + padded);
  out.set(json, 8);
  let at = 8 + padded;
  for (const bytes of chunks) {
    out.set(bytes, at);
    at += bytes.byteLength;
  }
  return out;
}
