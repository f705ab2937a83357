// A GGUF writer for the hostile-file tests: a real file's metadata and tensors (as the reader
// gives them) written back, with any field replaceable by a value no honest writer would put
// there. Kinds of metadata are chosen by value (strings, bools, whole numbers as uint32, other
// numbers as float32; token_type as int32).

import { readGgufHeader } from '../../src/models/files/gguf.js';

const STRING = 8;
const ARRAY = 9;
const TYPE_IDS = { F32: 0, F16: 1, Q4_0: 2, Q8_0: 8, Q4_K: 12, Q5_K: 13, Q6_K: 14, BF16: 30 };

const kindOf = (key, value) =>
  typeof value === 'string'
    ? STRING
    : typeof value === 'boolean'
      ? 7
      : Array.isArray(value)
        ? ARRAY
        : Number.isInteger(value)
          ? 4
          : 6;

/** A real GGUF file as { metadata: [[key, value]], tensors: [{ name, dims, typeId, data }] }. */
export function parseForRewrite(bytes) {
  const header = readGgufHeader(bytes, 'gguf');
  return {
    metadata: [...header.metadata],
    tensors: header.tensors.map((t) => ({
      name: t.name,
      dims: [...t.dims],
      typeId: TYPE_IDS[t.type],
      data: bytes.slice(t.offset, t.offset + t.byteLength),
    })),
  };
}

class Out {
  parts = [];
  u32(v) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, v, true);
    this.parts.push(b);
  }
  u64(v) {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, BigInt(v), true);
    this.parts.push(b);
  }
  bytes(b) {
    this.parts.push(b);
  }
  string(text, length) {
    const b = new TextEncoder().encode(text);
    this.u64(length ?? b.length);
    this.parts.push(b);
  }
  value(key, value, kind = kindOf(key, value)) {
    if (kind === STRING) return this.string(value);
    if (kind === ARRAY) {
      const element =
        typeof value[0] === 'string'
          ? STRING
          : key.endsWith('token_type')
            ? 5
            : value.every(Number.isInteger) && !key.endsWith('scores')
              ? 4
              : 6;
      this.u32(element);
      this.u64(value.length);
      for (const v of value) this.value(key, v, element);
      return undefined;
    }
    const b = new Uint8Array(kind === 7 ? 1 : 4);
    const view = new DataView(b.buffer);
    if (kind === 7) view.setUint8(0, value ? 1 : 0);
    else if (kind === 4) view.setUint32(0, value, true);
    else if (kind === 5) view.setInt32(0, value, true);
    else view.setFloat32(0, value, true);
    this.parts.push(b);
    return undefined;
  }
  size() {
    return this.parts.reduce((a, b) => a + b.length, 0);
  }
  join() {
    const out = new Uint8Array(this.size());
    let at = 0;
    for (const b of this.parts) {
      out.set(b, at);
      at += b.length;
    }
    return out;
  }
}

/**
 * GGUF bytes of `model` ({ metadata, tensors }); `raw` overrides: { version, tensorCount,
 * keyCount, offsets: { name: offset }, alignment (of the data, default 32) }.
 */
export function writeGguf({ metadata, tensors }, raw = {}) {
  const alignment = raw.alignment ?? 32;
  const out = new Out();
  out.bytes(new TextEncoder().encode('GGUF'));
  out.u32(raw.version ?? 3);
  out.u64(raw.tensorCount ?? tensors.length);
  out.u64(raw.keyCount ?? metadata.length);
  for (const [key, value] of metadata) {
    out.string(key);
    out.u32(kindOf(key, value));
    out.value(key, value);
  }
  let offset = 0;
  const offsets = [];
  for (const t of tensors) {
    out.string(t.name);
    out.u32(t.dims.length);
    for (const d of t.dims) out.u64(d);
    out.u32(t.typeId);
    offsets.push(offset);
    out.u64(raw.offsets?.[t.name] ?? offset);
    offset += Math.ceil(t.data.length / alignment) * alignment;
  }
  out.bytes(new Uint8Array((alignment - (out.size() % alignment)) % alignment));
  for (const t of tensors) {
    out.bytes(t.data);
    out.bytes(new Uint8Array((alignment - (t.data.length % alignment)) % alignment));
  }
  return out.join();
}

/** A GGUF header by hand: magic, version and two counts, then `rest` (bytes). */
export function rawHeader({ version = 3, tensorCount = 0, keyCount = 0 }, rest = []) {
  const out = new Out();
  out.bytes(new TextEncoder().encode('GGUF'));
  out.u32(version);
  out.u64(tensorCount);
  out.u64(keyCount);
  for (const part of rest) out.bytes(part);
  return out.join();
}

/** Bytes of a GGUF string with a declared length (which may lie). */
export function ggufString(text, length) {
  const out = new Out();
  out.string(text, length);
  return out.join();
}

/** Little-endian uint32 / uint64 bytes. */
export function u32(v) {
  const out = new Out();
  out.u32(v);
  return out.join();
}
export function u64(v) {
  const out = new Out();
  out.u64(v);
  return out.join();
}
