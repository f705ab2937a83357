// The zip container of PyTorch checkpoints (torch >= 1.6): the central directory (zip64 too),
// each entry's local header, and its data as a view of the file. PyTorch stores its entries
// uncompressed, so a 500 MB checkpoint is read without copying a byte; a deflated entry (a
// re-zipped file) is inflated with fflate. Every offset and size is checked against the file,
// and every entry's contents against its CRC-32 when they are read (a flipped byte in a storage
// would otherwise load as a slightly different model).
//
// Why not fflate's unzipSync: it copies every stored entry (new Uint8Array(subarray)), gives no
// entry offsets to read in place, and an entry that runs past the end of the file comes back
// silently shorter (subarray clamps) instead of as an error.

import { inflateSync } from 'fflate';
import { attnlensError } from '../../errors.js';

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const MAX_INFLATE_RATIO = 1032; // deflate's largest possible expansion

/**
 * The entries of a zip file by name: { name, method, compressedSize, size, dataOffset }.
 * @param {Uint8Array} data the whole file
 * @param {string} file its name, for errors
 */
export function readZipDirectory(data, file) {
  const bad = (detail) => attnlensError('invalid_argument', file, `zip: ${detail}`);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const u16 = (at) => view.getUint16(at, true);
  const u32 = (at) => view.getUint32(at, true);
  const u64 = (at) => {
    const value = view.getBigUint64(at, true);
    if (value > BigInt(data.byteLength))
      throw bad(`a zip64 field (${value}) exceeds the file size`);
    return Number(value);
  };
  const inside = (at, length, what) => {
    if (at < 0 || length < 0 || at + length > data.byteLength) {
      throw attnlensError(
        'out_of_range',
        file,
        `zip: ${what} lies outside the file (${data.byteLength} bytes)`,
      );
    }
  };

  let eocd = -1;
  for (let at = data.byteLength - 22; at >= Math.max(0, data.byteLength - 22 - 65535); at--) {
    if (u32(at) === EOCD) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw bad('no end-of-central-directory record: not a zip file, or truncated');
  let count = u16(eocd + 10);
  let directorySize = u32(eocd + 12);
  let directoryStart = u32(eocd + 16);
  if (u16(eocd + 4) !== 0 || u16(eocd + 6) !== 0)
    throw bad('multi-disk archives are not supported');
  if (count === 0xffff || directorySize === 0xffffffff || directoryStart === 0xffffffff) {
    const locator = eocd - 20;
    if (locator < 0 || u32(locator) !== ZIP64_LOCATOR)
      throw bad('zip64 fields without a zip64 locator');
    const record = u64(locator + 8);
    inside(record, 56, 'the zip64 end record');
    if (u32(record) !== ZIP64_EOCD) throw bad('the zip64 locator points at no zip64 end record');
    count = u64(record + 32);
    directorySize = u64(record + 40);
    directoryStart = u64(record + 48);
  }
  inside(directoryStart, directorySize, 'the central directory');

  const entries = new Map();
  let at = directoryStart;
  for (let i = 0; i < count; i++) {
    inside(at, 46, `central directory entry ${i}`);
    if (u32(at) !== CENTRAL) throw bad(`central directory entry ${i} has a bad signature`);
    const flags = u16(at + 8);
    const method = u16(at + 10);
    const crc = u32(at + 16);
    let compressedSize = u32(at + 20);
    let size = u32(at + 24);
    const nameLength = u16(at + 28);
    const extraLength = u16(at + 30);
    const commentLength = u16(at + 32);
    let localOffset = u32(at + 42);
    inside(at + 46, nameLength + extraLength + commentLength, `central directory entry ${i}`);
    const name = decodeName(data.subarray(at + 46, at + 46 + nameLength), flags, bad);
    // zip64 extra field: the 64-bit values of the fields that hold 0xffffffff, in this order.
    const extraEnd = at + 46 + nameLength + extraLength;
    for (let e = at + 46 + nameLength; e + 4 <= extraEnd;) {
      const id = u16(e);
      const length = u16(e + 2);
      if (id === 0x0001) {
        let field = e + 4;
        const next = () => {
          if (field + 8 > Math.min(e + 4 + length, extraEnd)) {
            throw bad(`entry '${name}' has a short zip64 field`);
          }
          const value = u64(field);
          field += 8;
          return value;
        };
        if (size === 0xffffffff) size = next();
        if (compressedSize === 0xffffffff) compressedSize = next();
        if (localOffset === 0xffffffff) localOffset = next();
      }
      e += 4 + length;
    }
    at += 46 + nameLength + extraLength + commentLength;
    if (flags & 0x1) throw bad(`entry '${name}' is encrypted`);
    if (method !== 0 && method !== 8)
      throw bad(`entry '${name}' uses compression method ${method}`);
    if (method === 0 && compressedSize !== size) throw bad(`stored entry '${name}' has two sizes`);
    if (entries.has(name)) throw bad(`entry '${name}' appears twice`);

    inside(localOffset, 30, `the local header of '${name}'`);
    if (u32(localOffset) !== LOCAL)
      throw bad(`entry '${name}' has no local header at ${localOffset}`);
    const localName = data.subarray(localOffset + 30, localOffset + 30 + u16(localOffset + 26));
    if (decodeName(localName, u16(localOffset + 6), bad) !== name) {
      throw bad(`entry '${name}' has another name in its local header`);
    }
    const dataOffset = localOffset + 30 + u16(localOffset + 26) + u16(localOffset + 28);
    inside(dataOffset, compressedSize, `the data of '${name}'`);
    entries.set(name, { name, method, crc, compressedSize, size, dataOffset });
  }
  return entries;
}

function decodeName(bytes, flags, bad) {
  try {
    // Bit 11 marks UTF-8; without it the name is CP437, which equals ASCII for the names here.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw bad(`an entry name is not valid ${flags & 0x800 ? 'UTF-8' : 'text'}`);
  }
}

/** The contents of one entry, checked against its CRC-32: a view of the file when stored. */
export function zipEntryBytes(data, entry, file) {
  const bytes = entryBytes(data, entry, file);
  const crc = crc32(bytes);
  if (crc !== entry.crc) {
    throw attnlensError(
      'invalid_argument',
      file,
      `zip: entry '${entry.name}' is corrupt (CRC-32 ${hex(crc)}, the directory says ` +
        `${hex(entry.crc)})`,
    );
  }
  return bytes;
}

const hex = (n) => `0x${n.toString(16).padStart(8, '0')}`;

function entryBytes(data, entry, file) {
  const raw = data.subarray(entry.dataOffset, entry.dataOffset + entry.compressedSize);
  if (entry.method === 0) return raw;
  if (entry.size > entry.compressedSize * MAX_INFLATE_RATIO + 1024) {
    throw attnlensError(
      'invalid_argument',
      file,
      `zip: entry '${entry.name}' claims an impossible size`,
    );
  }
  let out;
  try {
    out = inflateSync(raw, { out: new Uint8Array(entry.size) });
  } catch (error) {
    throw attnlensError(
      'invalid_argument',
      file,
      `zip: entry '${entry.name}' does not inflate (${error.message})`,
    );
  }
  if (out.byteLength !== entry.size) {
    throw attnlensError(
      'invalid_argument',
      file,
      `zip: entry '${entry.name}' inflates to ${out.byteLength} bytes, not ${entry.size}`,
    );
  }
  return out;
}

// CRC-32 (IEEE, as zip has it), eight bytes a step with eight tables ("slicing-by-8"): about
// 1 GB/s, so checking a checkpoint costs a fraction of reading it.
const CRC_TABLES = (() => {
  const tables = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    tables[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    for (let t = 1; t < 8; t++) {
      const previous = tables[(t - 1) * 256 + n];
      tables[t * 256 + n] = tables[previous & 0xff] ^ (previous >>> 8);
    }
  }
  return tables;
})();

/** The CRC-32 of `bytes` (a Uint8Array), as an unsigned number. */
export function crc32(bytes) {
  const t = CRC_TABLES;
  let c = 0xffffffff;
  let i = 0;
  const end8 = bytes.length - (bytes.length % 8);
  for (; i < end8; i += 8) {
    const lo = c ^ (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24));
    c =
      t[7 * 256 + (lo & 0xff)] ^
      t[6 * 256 + ((lo >>> 8) & 0xff)] ^
      t[5 * 256 + ((lo >>> 16) & 0xff)] ^
      t[4 * 256 + (lo >>> 24)] ^
      t[3 * 256 + bytes[i + 4]] ^
      t[2 * 256 + bytes[i + 5]] ^
      t[256 + bytes[i + 6]] ^
      t[bytes[i + 7]];
  }
  for (; i < bytes.length; i++) c = t[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
