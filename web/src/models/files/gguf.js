// GGUF (llama.cpp's model file, versions 2 and 3; llama.cpp's docs/gguf.md): the header, the
// typed metadata and the tensor table, read as hostile input.
//
//   uint32 magic "GGUF", uint32 version, uint64 tensor_count, uint64 metadata_kv_count,
//   metadata: { string key, uint32 value_type, value } (strings: uint64 length + UTF-8 bytes;
//             arrays: uint32 element type, uint64 count, elements),
//   tensor infos: { string name, uint32 n_dims, uint64 dims[n_dims] (innermost first),
//                   uint32 ggml type, uint64 offset (from the start of the data, aligned) },
//   zero padding to general.alignment (default 32), then the tensor data.
//
// A small reader of our own rather than @huggingface/gguf: that parser reads through range
// requests and trusts the counts it reads (a string or array length is allocated as declared),
// while here every count, length and offset is checked against the bytes that are left before
// anything is allocated, and it costs a few KB of the lazily loaded models entry instead of the
// package's quantisation tables and fetch layer.

import { attnlensError } from '../../errors.js';
import { GGML_TYPES, tensorBytes } from './gguf-types.js';

const MAGIC = 0x46554747; // "GGUF" read as a little-endian uint32
const DEFAULT_ALIGNMENT = 32;
// Caps no real model comes near (Llama 3 has ~25 metadata keys and 292 tensors); a file past
// them is refused before its lists are built.
export const GGUF_LIMITS = Object.freeze({
  metadataKeys: 4096,
  tensors: 65536,
  metadataBytes: 64 * 2 ** 20,
  // Elements of all metadata arrays together (Gemma's 256,000 tokens with scores and types take
  // under 800,000): each becomes a JS value, so the count bounds the memory the metadata takes.
  arrayElements: 2 ** 22,
  keyBytes: 65536,
  dims: 4,
  maxAlignment: 65536,
});

// Metadata value types: [name, bytes] for the fixed-size ones.
const VALUE_TYPES = {
  0: ['uint8', 1],
  1: ['int8', 1],
  2: ['uint16', 2],
  3: ['int16', 2],
  4: ['uint32', 4],
  5: ['int32', 4],
  6: ['float32', 4],
  7: ['bool', 1],
  8: ['string', 0],
  9: ['array', 0],
  10: ['uint64', 8],
  11: ['int64', 8],
  12: ['float64', 8],
};
const STRING = 8;
const ARRAY = 9;

/** Does `bytes` start with the GGUF magic? */
export const hasGgufMagic = (bytes) =>
  bytes.byteLength >= 4 &&
  new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true) === MAGIC;

// A cursor over the file that refuses to read past its end.
class Cursor {
  constructor(bytes, file) {
    this.bytes = bytes;
    this.data = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.file = file;
    this.at = 0;
    this.arrayElements = 0;
    this.decoder = new TextDecoder('utf-8', { fatal: true });
  }

  fail(code, detail) {
    return attnlensError(code, this.file, detail);
  }

  need(count, what) {
    if (count > this.bytes.byteLength - this.at) {
      throw this.fail(
        'out_of_range',
        `${what} (${count} bytes at byte ${this.at}) runs past the end of the file ` +
          `(${this.bytes.byteLength} bytes)`,
      );
    }
  }

  u8(what) {
    this.need(1, what);
    return this.data.getUint8(this.at++);
  }

  u32(what) {
    this.need(4, what);
    const value = this.data.getUint32(this.at, true);
    this.at += 4;
    return value;
  }

  // A uint64 as a Number, refused when past 2^53 (no count or offset in a real file is).
  u64(what) {
    this.need(8, what);
    const value = this.data.getBigUint64(this.at, true);
    this.at += 8;
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw this.fail('out_of_range', `${what} is ${value}, more than any file holds`);
    }
    return Number(value);
  }

  string(what, cap = Infinity) {
    const length = this.u64(`${what}'s length`);
    if (length > cap) {
      throw this.fail('out_of_range', `${what} is ${length} bytes long, more than ${cap}`);
    }
    this.need(length, what);
    const start = this.at;
    this.at += length;
    try {
      return this.decoder.decode(this.bytes.subarray(start, this.at));
    } catch {
      throw this.fail('invalid_argument', `${what} is not valid UTF-8`);
    }
  }

  scalar(type, what) {
    const [name, size] = VALUE_TYPES[type];
    this.need(size, what);
    const d = this.data;
    const at = this.at;
    this.at += size;
    switch (name) {
      case 'uint8':
        return d.getUint8(at);
      case 'int8':
        return d.getInt8(at);
      case 'uint16':
        return d.getUint16(at, true);
      case 'int16':
        return d.getInt16(at, true);
      case 'uint32':
        return d.getUint32(at, true);
      case 'int32':
        return d.getInt32(at, true);
      case 'float32':
        return d.getFloat32(at, true);
      case 'bool': {
        const value = d.getUint8(at);
        if (value > 1) throw this.fail('out_of_range', `${what} is a bool of value ${value}`);
        return value === 1;
      }
      case 'uint64':
        return Number(d.getBigUint64(at, true));
      case 'int64':
        return Number(d.getBigInt64(at, true));
      default:
        return d.getFloat64(at, true);
    }
  }
}

// One metadata value; arrays of numbers become typed-like plain arrays, arrays of strings
// string arrays. Arrays of arrays are not used by any model this reads and are refused.
function readValue(cursor, type, what) {
  if (!Object.hasOwn(VALUE_TYPES, type)) {
    throw cursor.fail('invalid_argument', `${what} has the unknown value type ${type}`);
  }
  if (type === STRING) return cursor.string(what);
  if (type !== ARRAY) return cursor.scalar(type, what);
  const elementType = cursor.u32(`${what}'s element type`);
  if (!Object.hasOwn(VALUE_TYPES, elementType) || elementType === ARRAY) {
    throw cursor.fail(
      'invalid_argument',
      `${what} is an array of ${elementType === ARRAY ? 'arrays' : `unknown type ${elementType}`}`,
    );
  }
  const count = cursor.u64(`${what}'s length`);
  // Each element takes at least its fixed size (a string at least its 8-byte length): a count
  // the rest of the file cannot hold is refused before the array is made.
  const least = elementType === STRING ? 8 : VALUE_TYPES[elementType][1];
  cursor.need(count * least, `${what}'s ${count} elements`);
  cursor.arrayElements += count;
  if (cursor.arrayElements > GGUF_LIMITS.arrayElements) {
    throw cursor.fail(
      'out_of_range',
      `${what}'s ${count} elements take the metadata's arrays past the cap of ` +
        `${GGUF_LIMITS.arrayElements} elements`,
    );
  }
  const values = new Array(count);
  for (let i = 0; i < count; i++) values[i] = readValue(cursor, elementType, `${what}[${i}]`);
  return values;
}

/**
 * The header of a GGUF file: { version, metadata (a Map key -> value), tensors: [{ name, dims
 * (innermost first), shape (outermost first, as the rest of attnlens writes shapes), type
 * (ggml type name), count, offset (absolute, in bytes), byteLength }], alignment, dataOffset }.
 * Every count, length, type, offset and extent is checked against the file's length; tensors
 * must be aligned, inside the data section, distinct and not overlapping. `fileBytes`: the
 * file's length when `bytes` is only its start (listModelFiles reads no more).
 */
export function readGgufHeader(bytes, file, fileBytes = bytes.byteLength) {
  const cursor = new Cursor(bytes, file);
  if (!hasGgufMagic(bytes)) {
    throw cursor.fail('invalid_argument', 'is not a GGUF file (no "GGUF" magic)');
  }
  cursor.at = 4;
  const version = cursor.u32('version');
  if (version !== 2 && version !== 3) {
    throw cursor.fail(
      'out_of_range',
      `is a GGUF file of version ${version}; versions 2 and 3 are supported`,
    );
  }
  const tensorCount = cursor.u64('tensor_count');
  const keyCount = cursor.u64('metadata_kv_count');
  if (tensorCount > GGUF_LIMITS.tensors) {
    throw cursor.fail(
      'out_of_range',
      `tensor_count ${tensorCount} is over the cap of ${GGUF_LIMITS.tensors}`,
    );
  }
  if (keyCount > GGUF_LIMITS.metadataKeys) {
    throw cursor.fail(
      'out_of_range',
      `metadata_kv_count ${keyCount} is over the cap of ${GGUF_LIMITS.metadataKeys}`,
    );
  }
  const metadata = new Map();
  for (let k = 0; k < keyCount; k++) {
    const key = cursor.string(`metadata key ${k}`, GGUF_LIMITS.keyBytes);
    if (metadata.has(key)) throw cursor.fail('invalid_argument', `metadata key ${key} repeats`);
    const type = cursor.u32(`metadata ${key}'s type`);
    metadata.set(key, readValue(cursor, type, `metadata ${key}`));
    if (cursor.at > GGUF_LIMITS.metadataBytes) {
      throw cursor.fail(
        'out_of_range',
        `metadata is over the cap of ${GGUF_LIMITS.metadataBytes} bytes`,
      );
    }
  }
  const alignment = alignmentOf(metadata, cursor);
  const tensors = [];
  const names = new Set();
  for (let t = 0; t < tensorCount; t++) {
    const tensor = readTensorInfo(cursor, t);
    if (names.has(tensor.name)) {
      throw cursor.fail('invalid_argument', `tensor ${tensor.name} appears twice`);
    }
    names.add(tensor.name);
    tensors.push(tensor);
  }
  const dataOffset = Math.ceil(cursor.at / alignment) * alignment;
  placeTensors(tensors, { dataOffset, alignment, fileBytes, cursor });
  return { version, metadata, tensors, alignment, dataOffset };
}

function alignmentOf(metadata, cursor) {
  if (!metadata.has('general.alignment')) return DEFAULT_ALIGNMENT;
  const value = metadata.get('general.alignment');
  const power = Number.isInteger(value) && value >= 1 && (value & (value - 1)) === 0;
  if (!power || value > GGUF_LIMITS.maxAlignment) {
    throw cursor.fail(
      'out_of_range',
      `general.alignment is ${value}, not a power of two up to ${GGUF_LIMITS.maxAlignment}`,
    );
  }
  return value;
}

function readTensorInfo(cursor, t) {
  const name = cursor.string(`tensor ${t}'s name`, GGUF_LIMITS.keyBytes);
  const fail = (code, detail) => cursor.fail(code, `tensor ${name}: ${detail}`);
  const dimCount = cursor.u32(`tensor ${name}'s dimension count`);
  if (dimCount < 1 || dimCount > GGUF_LIMITS.dims) {
    throw fail('out_of_range', `has ${dimCount} dimensions, not 1 to ${GGUF_LIMITS.dims}`);
  }
  const dims = [];
  let count = 1;
  for (let d = 0; d < dimCount; d++) {
    const size = cursor.u64(`tensor ${name}'s dimension ${d}`);
    if (size < 1) throw fail('out_of_range', `dimension ${d} is ${size}`);
    dims.push(size);
    count *= size;
    if (count > Number.MAX_SAFE_INTEGER) throw fail('out_of_range', 'has too many elements');
  }
  const typeId = cursor.u32(`tensor ${name}'s type`);
  const type = GGML_TYPES[typeId];
  if (!type) throw fail('invalid_argument', `has the unknown ggml type ${typeId}`);
  const offset = cursor.u64(`tensor ${name}'s offset`);
  if (type.block && dims[0] % type.block !== 0) {
    throw fail(
      'shape_mismatch',
      `its rows of ${dims[0]} elements are not whole ${type.name} blocks of ${type.block}`,
    );
  }
  return {
    name,
    dims,
    shape: [...dims].reverse(),
    type: type.name,
    count,
    relativeOffset: offset,
    byteLength: tensorBytes(type, count),
  };
}

// Each tensor's absolute offset; every one aligned, inside the file, none overlapping.
function placeTensors(tensors, { dataOffset, alignment, fileBytes, cursor }) {
  for (const tensor of tensors) {
    const fail = (detail) => cursor.fail('out_of_range', `tensor ${tensor.name}: ${detail}`);
    if (tensor.relativeOffset % alignment !== 0) {
      throw fail(`offset ${tensor.relativeOffset} is not a multiple of the alignment ${alignment}`);
    }
    tensor.offset = dataOffset + tensor.relativeOffset;
    if (tensor.offset + tensor.byteLength > fileBytes) {
      throw fail(
        `its ${tensor.byteLength} bytes at byte ${tensor.offset} run past the end of the file ` +
          `(${fileBytes} bytes)`,
      );
    }
  }
  const byStart = [...tensors].sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < byStart.length; i++) {
    const before = byStart[i - 1];
    if (byStart[i].offset < before.offset + before.byteLength) {
      throw cursor.fail(
        'out_of_range',
        `tensors ${before.name} and ${byStart[i].name} overlap in the file`,
      );
    }
  }
}
