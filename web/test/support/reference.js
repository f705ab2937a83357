// A plain double-precision reference of what the engine computes, written from the formulas in
// include/attnlens/attention.h, mask.h and multihead.h (not from the C++ code), for small shapes.

/** Key j visible to query i in head h: the formula of include/attnlens/mask.h. */
export function visible(mask, h, query, j, keyLength) {
  const { causal, window, sparse, globalTokens = [], keyLengths, keyValid } = mask;
  if (keyLengths && j >= keyLengths[h]) return false;
  if (keyValid && !keyValid[j]) return false;
  if (mask.mask && !mask.mask[query * keyLength + j]) return false;
  const i = query + (mask.queryOffset ?? 0); // the query's position among the keys
  if (causal && j > i) return false;
  if (globalTokens.includes(i) || globalTokens.includes(j)) return true;
  if (window) {
    const w = typeof window === 'number' ? { before: window, after: window } : window;
    const dilation = w.dilation ?? 1;
    const delta = j - i;
    if (delta % dilation !== 0) return false;
    const steps = delta / dilation;
    if (steps < -(w.before ?? 0) || steps > (w.after ?? 0)) return false;
  }
  if (sparse?.pattern === 'strided') {
    if (!(Math.abs(i - j) < sparse.stride) && (i - j) % sparse.stride !== 0) return false;
  }
  if (sparse?.pattern === 'fixed') {
    const summary = sparse.summary ?? 1;
    const sameBlock = Math.floor(i / sparse.stride) === Math.floor(j / sparse.stride);
    if (!sameBlock && j % sparse.stride < sparse.stride - summary) return false;
  }
  return true;
}

function dot(a, ai, b, bi, n) {
  let s = 0;
  for (let d = 0; d < n; d++) s += a[ai + d] * b[bi + d];
  return s;
}

function score(kind, q, qi, k, ki, d, additive, h) {
  switch (kind) {
    case 'scaled-dot':
    case 'dot':
      return dot(q, qi, k, ki, d);
    case 'cosine': {
      const nq = Math.sqrt(dot(q, qi, q, qi, d));
      const nk = Math.sqrt(dot(k, ki, k, ki, d));
      return nq === 0 || nk === 0 ? 0 : dot(q, qi, k, ki, d) / (nq * nk);
    }
    case 'additive': {
      const { hidden: a, wQuery, wKey, v } = additive;
      let s = 0;
      for (let t = 0; t < a; t++) {
        const row = (h * a + t) * d;
        s += v[h * a + t] * Math.tanh(dot(wQuery, row, q, qi, d) + dot(wKey, row, k, ki, d));
      }
      return s;
    }
    default:
      throw new Error(`unknown score ${kind}`);
  }
}

// The sizes, score and scaling of a call, with attention()'s defaults.
function problemOf(q, k, options) {
  const { heads: H, headDim: D } = options;
  const kind = options.score ?? 'scaled-dot';
  const Hkv = options.kvHeads ?? H;
  return {
    H,
    D,
    Dv: options.valueDim ?? D,
    Nq: q.length / (H * D),
    Nk: k.length / (Hkv * D),
    // ONNX's order: query head h reads K/V head floor(h / (H / Hkv)).
    kvOf: (h) => Math.floor(h / (H / Hkv)),
    kind,
    scale: options.scale ?? (kind === 'scaled-dot' ? 1 / Math.sqrt(D) : 1),
    temperature: options.temperature ?? 1,
  };
}

/** ALiBi's slopes (Press et al.): 2^(-8 h / n) for n a power of two, else interleaved. */
export function paperSlopes(heads) {
  const powerOfTwo = (n) => Array.from({ length: n }, (_, h) => 2 ** ((-8 * (h + 1)) / n));
  let n = 1;
  while (n * 2 <= heads) n *= 2;
  const finer = powerOfTwo(2 * n).filter((_, h) => h % 2 === 0);
  return [...powerOfTwo(n), ...finer].slice(0, heads);
}

// softcap, then bias and ALiBi, on the scaled score s of (head h, query i, key j).
function logit(options, s, h, i, j, Nq, Nk) {
  let x = s;
  if (options.softcap !== undefined) x = options.softcap * Math.tanh(x / options.softcap);
  if (options.bias !== undefined) {
    const matrix = Nq * Nk;
    x += options.bias[(options.bias.length === matrix ? 0 : h * matrix) + i * Nk + j];
  }
  const slopes = options.alibiSlopes ?? (options.alibi ? paperSlopes(options.heads) : undefined);
  if (slopes !== undefined) x -= slopes[h] * Math.abs(i + (options.queryOffset ?? 0) - j);
  return x;
}

// All but the k largest finite logits become -Infinity (equal logits: the lower index wins).
function keepTopK(logits, k) {
  if (k === undefined) return;
  const order = [...logits.keys()].filter((j) => logits[j] !== -Infinity);
  order.sort((a, b) => logits[b] - logits[a] || a - b);
  for (const j of order.slice(k)) logits[j] = -Infinity;
}

// The sign of R_r[d][c] as include/attnlens/attention.h's LshSpec defines it (32-bit mixing).
function lshSign(seed, n) {
  let h = (Math.imul(seed, 0x9e3779b9) + Math.imul(n, 0x85ebca6b) + 0x68e31da4) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  return h >>> 31 ? -1 : 1;
}

function lshBucket(x, at, D, round, half, seed) {
  let best = -Infinity;
  let bestIndex = 0;
  const projections = [];
  for (let c = 0; c < half; c++) {
    let p = 0;
    for (let d = 0; d < D; d++) p += lshSign(seed, (round * D + d) * half + c) * x[at + d];
    projections.push(p);
  }
  [...projections, ...projections.map((p) => -p)].forEach((p, index) => {
    if (p > best) [best, bestIndex] = [p, index];
  });
  return bestIndex;
}

function lshBuckets(q, k, { buckets, rounds = 1, seed = 0 }, H, Nq, Nk, D) {
  const Hkv = k.length / (Nk * D);
  const out = [];
  for (let r = 0; r < rounds; r++) {
    const queries = Array.from({ length: H * Nq }, (_, row) =>
      lshBucket(q, row * D, D, r, buckets / 2, seed),
    );
    const keys = Array.from({ length: Hkv * Nk }, (_, row) =>
      lshBucket(k, row * D, D, r, buckets / 2, seed),
    );
    out.push({ queries, keys, Nq, Nk });
  }
  return out;
}

function sharesBucket(buckets, h, i, kv, j) {
  if (buckets === undefined) return true;
  return buckets.some((b) => b.queries[h * b.Nq + i] === b.keys[kv * b.Nk + j]);
}

/**
 * Attention over head-major q [H, Nq, D], k [Hkv, Nk, D], v [Hkv, Nk, Dv].
 * @returns {{ output: Float64Array, weights: Float64Array, scores: Float64Array }}
 */
export function referenceAttention(q, k, v, options) {
  const { H, D, Dv, Nq, Nk, kind, scale, temperature, kvOf } = problemOf(q, k, options);
  const buckets = options.lsh ? lshBuckets(q, k, options.lsh, H, Nq, Nk, D) : undefined;
  const output = new Float64Array(H * Nq * Dv);
  const weights = new Float64Array(H * Nq * Nk);
  const scores = new Float64Array(H * Nq * Nk);
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < Nq; i++) {
      const row = (h * Nq + i) * Nk;
      const logits = new Float64Array(Nk).fill(-Infinity);
      for (let j = 0; j < Nk; j++) {
        const s = score(
          kind,
          q,
          (h * Nq + i) * D,
          k,
          (kvOf(h) * Nk + j) * D,
          D,
          options.additive,
          h,
        );
        scores[row + j] = s;
        if (visible(options, h, i, j, Nk) && sharesBucket(buckets, h, i, kvOf(h), j)) {
          logits[j] = logit(options, scale * s, h, i, j, Nq, Nk) / temperature;
        }
      }
      keepTopK(logits, options.topK);
      const max = Math.max(...logits);
      if (max === -Infinity) continue; // no visible key: zero weights and output
      let sum = 0;
      for (let j = 0; j < Nk; j++) sum += Math.exp(logits[j] - max);
      for (let j = 0; j < Nk; j++) {
        const w = Math.exp(logits[j] - max) / sum;
        weights[row + j] = w;
        for (let c = 0; c < Dv; c++)
          output[(h * Nq + i) * Dv + c] += w * v[(kvOf(h) * Nk + j) * Dv + c];
      }
    }
  }
  return { output, weights, scores };
}

// d score(x, y) / dx times g, added into grad[gi ...]: y for the dot products; for the cosine
// s = x.y / (|x| |y|), y / (|x| |y|) - s x / |x|^2 (nothing where x or y is zero, whose score
// is 0).
function addScoreGradient(kind, x, xi, y, yi, d, s, g, grad, gi) {
  if (kind !== 'cosine') {
    for (let t = 0; t < d; t++) grad[gi + t] += g * y[yi + t];
    return;
  }
  const nx = Math.sqrt(dot(x, xi, x, xi, d));
  const ny = Math.sqrt(dot(y, yi, y, yi, d));
  if (nx === 0 || ny === 0) return;
  for (let t = 0; t < d; t++)
    grad[gi + t] += g * (y[yi + t] / (nx * ny) - (s * x[xi + t]) / (nx * nx));
}

/**
 * Gradients of L = sum(dOutput * output) for attention(q, k, v, options), scores 'scaled-dot',
 * 'dot' and 'cosine', from the calculus of softmax attention: with logits c * s (c = scale /
 * temperature), dV = P^T dO, dP = dO V^T, dlogits = P * (dP - rowsum(P * dP)), then through s.
 * @returns {{ dq: Float64Array, dk: Float64Array, dv: Float64Array }}
 */
export function referenceAttentionBackward(q, k, v, dOutput, options) {
  const { H, D, Dv, Nq, Nk, kind, scale, temperature, kvOf } = problemOf(q, k, options);
  const c = scale / temperature;
  const { weights, scores } = referenceAttention(q, k, v, options);
  const dq = new Float64Array(q.length);
  const dk = new Float64Array(k.length);
  const dv = new Float64Array(v.length);
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < Nq; i++) {
      const row = (h * Nq + i) * Nk;
      const oi = (h * Nq + i) * Dv;
      const dp = new Float64Array(Nk);
      let expected = 0; // sum_j P_ij dP_ij
      const kv = kvOf(h); // its gradients add up over the query heads reading it
      for (let j = 0; j < Nk; j++) {
        dp[j] = dot(dOutput, oi, v, (kv * Nk + j) * Dv, Dv);
        expected += weights[row + j] * dp[j];
        for (let t = 0; t < Dv; t++)
          dv[(kv * Nk + j) * Dv + t] += weights[row + j] * dOutput[oi + t];
      }
      for (let j = 0; j < Nk; j++) {
        const g = c * weights[row + j] * (dp[j] - expected);
        if (g === 0) continue;
        const qi = (h * Nq + i) * D;
        const kj = (kv * Nk + j) * D;
        addScoreGradient(kind, q, qi, k, kj, D, scores[row + j], g, dq, qi);
        addScoreGradient(kind, k, kj, q, qi, D, scores[row + j], g, dk, kj);
      }
    }
  }
  return { dq, dk, dv };
}

// out[rows, cols] = x[rows, inner] w[inner, cols] + bias
function project(x, rows, inner, w, cols, bias) {
  const out = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      let s = bias ? bias[c] : 0;
      for (let t = 0; t < inner; t++) s += x[r * inner + t] * w[t * cols + c];
      out[r * cols + c] = s;
    }
  }
  return out;
}

// token-major [n, H*d] -> head-major [H, n, d]
function splitHeads(tokens, n, H, d) {
  const out = new Float64Array(H * n * d);
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < n; i++) {
      for (let c = 0; c < d; c++) out[(h * n + i) * d + c] = tokens[i * H * d + h * d + c];
    }
  }
  return out;
}

/** Multi-head attention with projections, as in multihead.h; `options.source` for cross. */
export function referenceMultiHead(x, w, options) {
  const { heads: H, headDim: D } = options;
  const Hkv = options.kvHeads ?? H;
  const Dv = options.valueDim ?? D;
  const modelDim = w.wQuery.length / (H * D);
  const source = options.source ?? x;
  const keyModelDim = w.wKey.length / (Hkv * D);
  const outDim = w.wOut.length / (H * Dv);
  const Nq = x.length / modelDim;
  const Nk = source.length / keyModelDim;
  const q = splitHeads(project(x, Nq, modelDim, w.wQuery, H * D, w.bQuery), Nq, H, D);
  const k = splitHeads(project(source, Nk, keyModelDim, w.wKey, Hkv * D, w.bKey), Nk, Hkv, D);
  const v = splitHeads(project(source, Nk, keyModelDim, w.wValue, Hkv * Dv, w.bValue), Nk, Hkv, Dv);
  const heads = referenceAttention(q, k, v, { ...options, valueDim: Dv });
  const concat = new Float64Array(Nq * H * Dv);
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < Nq; i++) {
      for (let c = 0; c < Dv; c++)
        concat[i * H * Dv + h * Dv + c] = heads.output[(h * Nq + i) * Dv + c];
    }
  }
  return { ...heads, output: project(concat, Nq, H * Dv, w.wOut, outDim, w.bOut), q, k, v };
}
