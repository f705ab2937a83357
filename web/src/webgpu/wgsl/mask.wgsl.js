// The mask formula of include/attnlens/mask.h in WGSL, plus the per-block key ranges of
// src/attention/mask_eval.h (reachable, band, block_fully_visible) that let the streaming kernel
// skip key tiles. Reads the uniforms `p` (MASK_FIELDS of mask-data.js, plus keyLength) and the
// storage array `maskWords` laid out by mask-data.js. Query i sits at position i + p.queryOffset
// among the keys; positions are below 2^31, spans at most 2^31 - 1, so their sums fit in u32.

export const MASK_WGSL = /* wgsl */ `
const ABSENT: u32 = 0xffffffffu;

fn maskBit(at: u32, index: u32) -> bool {
  return ((maskWords[at + (index >> 5u)] >> (index & 31u)) & 1u) != 0u;
}

// Keys at or beyond this are padding for head h.
fn keyLimit(h: u32) -> u32 {
  if (p.keyLengthsAt == ABSENT) { return p.keyLength; }
  return min(maskWords[p.keyLengthsAt + h], p.keyLength);
}

// How many global tokens lie in positions [b, e).
fn globalsIn(b: u32, e: u32) -> u32 {
  if (p.globalsAt == ABSENT) { return 0u; }
  let lo = min(b, p.longest);
  let hi = min(e, p.longest);
  if (hi <= lo) { return 0u; }
  return maskWords[p.globalsAt + hi] - maskWords[p.globalsAt + lo];
}

// Whether query i of head h shares a hashed-attention bucket with key j in some round.
fn sharesBucket(h: u32, i: u32, j: u32) -> bool {
  let query = p.queryBucketsAt + (h * p.queryLength + i) * p.lshRounds;
  let key = p.keyBucketsAt + ((h / p.kvGroup) * p.keyLength + j) * p.lshRounds;
  for (var r = 0u; r < p.lshRounds; r++) {
    if (maskWords[query + r] == maskWords[key + r]) { return true; }
  }
  return false;
}

// Whether key j is visible to query i in head h (hashed attention's buckets included).
fn visible(h: u32, i: u32, j: u32) -> bool {
  if (j >= keyLimit(h)) { return false; }
  if (p.keyValidAt != ABSENT && !maskBit(p.keyValidAt, j)) { return false; }
  if (p.customAt != ABSENT && !maskBit(p.customAt, i * p.keyLength + j)) { return false; }
  if (p.lshRounds != 0u && !sharesBucket(h, i, j)) { return false; }
  let position = i + p.queryOffset;
  if (p.causal != 0u && j > position) { return false; }
  if (globalsIn(position, position + 1u) != 0u || globalsIn(j, j + 1u) != 0u) { return true; }
  if (p.windowed != 0u) {
    let delta = i32(j) - i32(position);
    let dilation = i32(p.dilation);
    if (delta % dilation != 0) { return false; }
    let steps = delta / dilation;
    if (steps < -i32(p.windowBefore) || steps > i32(p.windowAfter)) { return false; }
  }
  if (p.sparse == 1u) {
    let d = i32(position) - i32(j);
    let stride = i32(p.stride);
    if (!(d < stride && -d < stride) && d % stride != 0) { return false; }
  } else if (p.sparse == 2u) {
    let sameBlock = position / p.stride == j / p.stride;
    if (!sameBlock && j % p.stride < p.stride - p.summary) { return false; }
  }
  return true;
}

struct KeyRange {
  begin: u32,
  end: u32,
}

// The keys any query before q1 may see at all: key padding and causality.
fn reachable(h: u32, q1: u32) -> KeyRange {
  var r = KeyRange(0u, keyLimit(h));
  if (p.causal != 0u) { r.end = min(r.end, q1 + p.queryOffset); }
  return r;
}

// A superset of the keys visible to queries [q0, q1): reachable() narrowed by the window,
// unless a global query among the rows sees all of it (global keys are found per tile).
fn band(h: u32, q0: u32, q1: u32) -> KeyRange {
  var r = reachable(h, q1);
  let first = q0 + p.queryOffset;
  let end = q1 + p.queryOffset;
  if (p.windowed != 0u && globalsIn(first, end) == 0u) {
    if (first > p.beforeSpan) { r.begin = max(r.begin, first - p.beforeSpan); }
    r.end = min(r.end, end + p.afterSpan);
  }
  return r;
}

// True when every (query, key) in [q0, q1) x [k0, k1) is visible: the block needs no masking.
fn blockFullyVisible(h: u32, q0: u32, q1: u32, k0: u32, k1: u32) -> bool {
  if (p.restrictsNothing != 0u) { return true; }
  if (p.keyValidAt != ABSENT || p.customAt != ABSENT || p.sparse != 0u || p.lshRounds != 0u) {
    return false;
  }
  if (k1 > keyLimit(h)) { return false; }
  let first = q0 + p.queryOffset;
  if (p.causal != 0u && k1 - 1u > first) { return false; }
  if (p.windowed != 0u) {
    if (p.dilation != 1u) { return false; }
    let last = q1 - 1u + p.queryOffset;
    if (k0 + p.windowBefore < last || k1 - 1u > first + p.windowAfter) { return false; }
  }
  return true;
}
`;
