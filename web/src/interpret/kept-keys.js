// Which keys top-k and LSH kept for each query (topk:K and lsh:B:R:S in mask-notation.js). The
// engine hides the others from the softmax (their logits become -inf after the mask, in
// include/attnlens/attention.h's order: mask, then LSH, then top-k) and returns the weights and
// raw scores, not the choice, so the page reads the choice back:
//   LSH    a visible key stays when it shares the query's bucket in some round; the buckets are
//          hashed here exactly as the engine hashes them (src/lsh.h gives the hash to the bit;
//          src/webgpu/lsh-buckets.js is the same hash for the WebGPU backend).
//   top-k  of the keys still in, the K with the largest logits (ties: the lower key). A kept
//          key's weight is > 0 unless exp() underflowed, a dropped key's is exactly 0: every key
//          with weight > 0 was kept, and any the count still lacks are the next ones by raw score
//          (the logit is the score times a positive factor).
// Global tokens are part of the mask: under top-k or LSH a global query still chooses among the
// keys it may see, and a global key is still chosen or not by each query (mask.h).
import { lshBuckets } from '../webgpu/lsh-buckets.js';

/**
 * The keys head `head` of a result saw in its softmax: its own where top-k or LSH chose keys per
 * query (compute-core.js), else the mask every head shares.
 */
export function headMask(source, head) {
  return source.heads[head].mask ?? source.mask;
}

/** Whether a parsed mask (mask-notation.js) chooses keys per query. */
export const selectsKeys = (mask) => mask.topK > 0 || mask.buckets > 0;

/**
 * The keys each head's softmax saw. mask: the pattern's [rows, cols] visibility; heads:
 * [{ weights, scores }]; q [H, rows, D] and k [H, cols, D]: the projections the engine hashed;
 * selection: the parsed mask. Returns null when the mask chooses nothing, else
 * { heads: [{ kept, leftOut }] ([rows, cols] 0/1 each: in the softmax; visible but left out),
 *   buckets: { rounds, queries [H][rows][rounds], keys [H][cols][rounds] } or null }.
 */
export function keptKeys({ mask, heads, q, k, rows, cols, headDim, selection }) {
  if (!selectsKeys(selection)) return null;
  const topK = Math.min(selection.topK, cols);
  let buckets = null;
  if (selection.buckets > 0) {
    const spec = { buckets: selection.buckets, rounds: selection.rounds, seed: selection.hashSeed };
    const shape = {
      heads: heads.length,
      kvHeads: heads.length,
      queryLength: rows,
      keyLength: cols,
      headDim,
    };
    buckets = { rounds: spec.rounds, ...lshBuckets(q, k, shape, spec) };
  }
  const out = heads.map((head, h) => {
    const kept = new Uint8Array(rows * cols);
    const leftOut = new Uint8Array(rows * cols);
    for (let r = 0; r < rows; r++) {
      const at = r * cols;
      const candidates = [];
      for (let c = 0; c < cols; c++) {
        if (mask[at + c] && (!buckets || sharesBucket(buckets, h, r, c, rows, cols))) {
          candidates.push(c);
        }
      }
      let chosen = candidates;
      if (topK > 0 && candidates.length > topK) {
        const weighted = candidates.filter((c) => head.weights[at + c] > 0);
        const rest = candidates
          .filter((c) => !(head.weights[at + c] > 0))
          .sort((a, b) => head.scores[at + b] - head.scores[at + a] || a - b);
        chosen = weighted.slice(0, topK).concat(rest.slice(0, Math.max(0, topK - weighted.length)));
      }
      for (const c of chosen) kept[at + c] = 1;
      for (let c = 0; c < cols; c++) leftOut[at + c] = mask[at + c] && !kept[at + c] ? 1 : 0;
    }
    return { kept, leftOut };
  });
  return { heads: out, buckets };
}

function sharesBucket(buckets, head, row, col, rows, cols) {
  const { rounds, queries, keys } = buckets;
  const qa = (head * rows + row) * rounds;
  const ka = (head * cols + col) * rounds;
  for (let round = 0; round < rounds; round++) {
    if (queries[qa + round] === keys[ka + round]) return true;
  }
  return false;
}

/** The buckets of query `row` and key `col` of `head` in every round. */
export function bucketsOf(buckets, head, { row, col, rows, cols }) {
  const { rounds, queries, keys } = buckets;
  const pick = (array, at) => Array.from(array.subarray(at * rounds, (at + 1) * rounds));
  return {
    query: row === undefined ? null : pick(queries, head * rows + row),
    key: col === undefined ? null : pick(keys, head * cols + col),
  };
}
