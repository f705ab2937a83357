// 32-bit hashing and a seeded PRNG in integer arithmetic (Math.imul, shifts, xor), which every
// JavaScript engine computes identically.

/** MurmurHash3's finaliser: spreads every input bit over the whole word. Returns a uint32. */
export function fmix32(h) {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export const FNV_PRIME = 0x01000193;

/** The FNV-1a state hashString() starts from for `seed`. */
export function hashBasis(seed) {
  return (0x811c9dc5 ^ fmix32(seed)) >>> 0;
}

/**
 * FNV-1a over the UTF-16 code units of `text`, started from a seed-dependent basis, then fmix32.
 * Returns a uint32.
 */
export function hashString(text, seed) {
  let h = hashBasis(seed);
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return fmix32(h);
}

/**
 * mulberry32: a small, fast generator with a 32-bit state, good enough for initial weights.
 * @param {number} seed uint32
 * @returns {() => number} each call returns the next uint32
 */
export function mulberry32(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** FNV-1a over the bytes of a typed array, as 8 hex digits: a fingerprint for tests and logs. */
export function fingerprint(typedArray) {
  const bytes = new Uint8Array(typedArray.buffer, typedArray.byteOffset, typedArray.byteLength);
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i];
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}
