// Hashed attention's buckets (LshSpec, include/attnlens/attention.h) for the GPU's mask: every
// query's and key's bucket in every round, hashed once per call on the CPU as src/attention/lsh.h
// specifies them to the bit (32-bit sign hash, projections summed in double for d = 0, 1, ...:
// JavaScript numbers are doubles), so the GPU keeps exactly the keys the wasm core keeps. The
// kernels then only compare bucket ids (wgsl/mask.wgsl.js).

function mix(h) {
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

// The signs of every round, [rounds][D][half], +1 / -1 (src/attention/lsh.cpp's lsh_signs).
function lshSigns({ buckets, rounds, seed }, depth) {
  const half = buckets / 2;
  const signs = new Int8Array(rounds * depth * half);
  const base = Math.imul(seed, 0x9e3779b9);
  for (let n = 0; n < signs.length; n++) {
    const h = mix((base + Math.imul(n, 0x85ebca6b) + 0x68e31da4) | 0);
    signs[n] = h & 0x80000000 ? -1 : 1;
  }
  return signs;
}

// The first index of the largest of p_0 .. p_{half-1}, -p_0 .. -p_{half-1}.
function bucketOf(x, at, depth, signs, signsAt, half, projections) {
  projections.fill(0);
  for (let d = 0; d < depth; d++) {
    const value = x[at + d];
    const row = signsAt + d * half;
    for (let c = 0; c < half; c++) projections[c] += signs[row + c] > 0 ? value : -value;
  }
  let best = projections[0];
  let bestIndex = 0;
  for (let c = 1; c < half; c++) {
    if (projections[c] > best) best = projections[(bestIndex = c)];
  }
  for (let c = 0; c < half; c++) {
    if (-projections[c] > best) {
      best = -projections[c];
      bestIndex = half + c;
    }
  }
  return bestIndex;
}

/**
 * Buckets of every round, queries [heads][Nq][rounds] then keys [kvHeads][Nk][rounds], written
 * into `words` from `at` (one bucket per word).
 * @param {Uint32Array} words
 * @param {number} at
 * @param {Float32Array} q [heads, Nq, D]
 * @param {Float32Array} k [kvHeads, Nk, D]
 * @param {{ heads: number, kvHeads: number, queryLength: number, keyLength: number,
 *   headDim: number }} shape
 * @param {{ buckets: number, rounds: number, seed: number }} spec
 */
export function writeLshBuckets(words, at, q, k, shape, spec) {
  const { heads, kvHeads, queryLength, keyLength, headDim: depth } = shape;
  const { rounds } = spec;
  const half = spec.buckets / 2;
  const signs = lshSigns(spec, depth);
  const projections = new Float64Array(half);
  let out = at;
  for (const [x, rows] of [
    [q, heads * queryLength],
    [k, kvHeads * keyLength],
  ]) {
    for (let row = 0; row < rows; row++) {
      for (let r = 0; r < rounds; r++) {
        words[out++] = bucketOf(x, row * depth, depth, signs, r * depth * half, half, projections);
      }
    }
  }
}

/**
 * The buckets of every round as arrays: queries [heads][Nq][rounds], keys [kvHeads][Nk][rounds]
 * (the demo's explain panel shows which bucket a query and its keys fell in).
 */
export function lshBuckets(q, k, shape, spec) {
  const sizes = lshWords(spec, shape);
  const words = new Uint32Array(sizes.queries + sizes.keys);
  writeLshBuckets(words, 0, q, k, shape, spec);
  return { queries: words.subarray(0, sizes.queries), keys: words.subarray(sizes.queries) };
}

/** Words of the query buckets and of the key buckets that writeLshBuckets() writes. */
export function lshWords({ rounds }, { heads, kvHeads, queryLength, keyLength }) {
  return { queries: rounds * heads * queryLength, keys: rounds * kvHeads * keyLength };
}
