// Dynamic sparse attention's selection in the materialized softmax (attention.h's top_k): of a
// row's visible logits only the p.topK largest stay, ties going to the lower key index; the rest
// become NO_SCORE. The row's `lanes` invocations find, by counting, the order key t of the k-th
// largest logit (bit by bit from the top: the largest t with at least k keys at or above it),
// then among the keys equal to t the index m of the one that completes k (the largest m with
// fewer than the needed ties before it). Counts are exact in f32 up to 2^24 keys (the backend
// declines longer rows). Every invocation of the workgroup calls keepTopK (uniform control flow:
// laneSum may use barriers); rows that are not live count nothing.

/**
 * @param {{ lanes: number }} plan
 * @returns {string} WGSL defining keepTopK(base, lane, live, li) over `weights` (after
 *   laneReductions and SCORE_SENTINELS)
 */
export function topKWgsl({ lanes }) {
  return /* wgsl */ `
// Unsigned keys in the order of the floats (-0 counted as +0, equal to it as a logit).
fn orderKey(x: f32) -> u32 {
  let bits = bitcast<u32>(select(x, 0.0, x == 0.0));
  return select(bits | 0x80000000u, ~bits, (bits & 0x80000000u) != 0u);
}

// Visible keys of the row (j < end) whose order key compares with t as asked: 0 below,
// 1 equal, 2 at or above, 3 above.
fn countKeys(base: u32, lane: u32, live: bool, li: u32, t: u32, relation: u32, end: u32) -> f32 {
  var n = 0.0;
  if (live) {
    for (var j = lane; j < end; j += ${lanes}u) {
      let x = weights[base + j];
      if (x > VISIBLE_FLOOR) {
        let key = orderKey(x);
        var counts = false;
        switch (relation) {
          case 1u: { counts = key == t; }
          case 2u: { counts = key >= t; }
          case 3u: { counts = key > t; }
          default: { counts = true; }
        }
        if (counts) { n += 1.0; }
      }
    }
  }
  return laneSum(n, li);
}

fn keepTopK(base: u32, lane: u32, live: bool, li: u32) {
  let k = f32(p.topK);
  let n = p.keyLength;
  let selecting = countKeys(base, lane, live, li, 0u, 0u, n) > k;
  var t = 0u;
  for (var bit = 0u; bit < 32u; bit++) {
    let candidate = t | (0x80000000u >> bit);
    if (countKeys(base, lane, live, li, candidate, 2u, n) >= k) { t = candidate; }
  }
  let needed = k - countKeys(base, lane, live, li, t, 3u, n);
  var m = 0u;
  for (var bit = 32u - countLeadingZeros(n); bit > 0u; bit--) {
    let candidate = m | (1u << (bit - 1u));
    if (countKeys(base, lane, live, li, t, 1u, min(candidate, n)) < needed && candidate <= n) {
      m = candidate;
    }
  }
  if (live && selecting) {
    for (var j = lane; j < n; j += ${lanes}u) {
      let key = orderKey(weights[base + j]);
      if (key < t || (key == t && j > m)) { weights[base + j] = NO_SCORE; }
    }
  }
}
`;
}
