// An image file's format and pixel size, read from its header before anything decodes it: a
// file is hostile, and a 40-byte PNG can claim 30,000 x 30,000 pixels (3.6 GB once decoded).
// Reading the claim first lets image-input.js refuse it within its pixel budget.
//
// Formats: the ones browsers decode everywhere (PNG, JPEG, GIF, WebP, BMP). Anything else, or a
// header cut short, is not an image this reads.

/** { format, width, height } of the image file in `bytes` (a Uint8Array), or null. */
export function imageHeader(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const has = (offset, ...signature) =>
    bytes.length >= offset + signature.length && signature.every((b, i) => bytes[offset + i] === b);
  if (has(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) {
    // The first chunk must be IHDR: width and height as big-endian 32-bit integers.
    if (!has(12, 0x49, 0x48, 0x44, 0x52) || bytes.length < 24) return null;
    return size('png', view.getUint32(16), view.getUint32(20));
  }
  if (has(0, 0x47, 0x49, 0x46, 0x38) && bytes.length >= 10) {
    return size('gif', view.getUint16(6, true), view.getUint16(8, true));
  }
  if (has(0, 0x42, 0x4d) && bytes.length >= 26) {
    // BITMAPINFOHEADER and later: signed 32-bit sizes (a negative height is a top-down bitmap).
    const headerSize = view.getUint32(14, true);
    if (headerSize === 12) return size('bmp', view.getUint16(18, true), view.getUint16(20, true));
    return size('bmp', Math.abs(view.getInt32(18, true)), Math.abs(view.getInt32(22, true)));
  }
  if (has(0, 0x52, 0x49, 0x46, 0x46) && has(8, 0x57, 0x45, 0x42, 0x50))
    return webpHeader(bytes, view);
  if (has(0, 0xff, 0xd8, 0xff)) return jpegHeader(bytes, view);
  return null;
}

function size(format, width, height) {
  return { format, width, height };
}

function webpHeader(bytes, view) {
  if (bytes.length < 30) return null;
  const chunk = String.fromCharCode(...bytes.subarray(12, 16));
  if (chunk === 'VP8 ') {
    // Lossy: after a 3-byte frame tag and the start code, 14-bit width and height.
    return size('webp', view.getUint16(26, true) & 0x3fff, view.getUint16(28, true) & 0x3fff);
  }
  if (chunk === 'VP8L') {
    // Lossless: 14-bit width - 1 and height - 1 packed after the signature byte.
    const bits = view.getUint32(21, true);
    return size('webp', (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (chunk === 'VP8X') {
    // Extended: 24-bit canvas width - 1 and height - 1.
    const u24 = (at) => bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16);
    return size('webp', u24(24) + 1, u24(27) + 1);
  }
  return null;
}

// JPEG: walk the marker segments to the first start-of-frame (SOF0-SOF15 but DHT, JPG, DAC),
// whose height and width follow the precision byte. Each step moves forward by a length read
// from the file and checked against it, so the walk ends within the file's length.
function jpegHeader(bytes, view) {
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return null;
    const marker = bytes[at + 1];
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    const length = view.getUint16(at + 2);
    if (length < 2) return null;
    const isFrame = marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker);
    if (isFrame) {
      if (at + 9 > bytes.length) return null;
      return size('jpeg', view.getUint16(at + 7), view.getUint16(at + 5));
    }
    if (marker === 0xda || marker === 0xd9) return null; // scan or end before any frame
    at += 2 + length;
  }
  return null;
}
