import { test } from 'node:test';
import assert from 'node:assert/strict';

import { analyze, analyzePair, entropy, topAttended } from '../src/analyze.js';
import { createAttention } from '../src/attention.js';
import { embed, projectionWeights } from '../src/text/index.js';

const SENTENCE = "The animal didn't cross the street because it was too tired";

// ---- a plain double-precision reference of one multi-head layer --------------------------------

/** The visibility rule of include/attnlens/mask.h, written out directly. */
function visible(i, j, h, { causal, window, sparse, globalTokens = [], keyLengths }) {
  if (keyLengths && j >= keyLengths[h]) return false;
  if (causal && j > i) return false;
  if (globalTokens.includes(i) || globalTokens.includes(j)) return true;
  if (window !== undefined) {
    const { before, after, dilation } =
      typeof window === 'number'
        ? { before: window, after: window, dilation: 1 }
        : { dilation: 1, ...window };
    const delta = j - i;
    if (delta % dilation !== 0 || delta / dilation < -before || delta / dilation > after)
      return false;
  }
  if (sparse?.pattern === 'strided') {
    if (!(Math.abs(i - j) < sparse.stride || (i - j) % sparse.stride === 0)) return false;
  }
  if (sparse?.pattern === 'fixed') {
    const { stride, summary = 1 } = sparse;
    if (!(Math.floor(i / stride) === Math.floor(j / stride) || j % stride >= stride - summary))
      return false;
  }
  return true;
}

/** x [rows, inner] times the columns [c0, c0 + width) of w [inner, wWidth]: [rows, width]. */
function project(x, rows, inner, w, wWidth, c0, width) {
  const out = [];
  for (let r = 0; r < rows; r++) {
    const row = new Float64Array(width);
    for (let c = 0; c < width; c++) {
      let sum = 0;
      for (let m = 0; m < inner; m++) sum += x[r * inner + m] * w[m * wWidth + c0 + c];
      row[c] = sum;
    }
    out.push(row);
  }
  return out;
}

const dot = (a, b) => a.reduce((sum, x, i) => sum + x * b[i], 0);

function referenceLayer({ xq, xkv, nq, nk, weights, heads, headDim, valueDim, modelDim, options }) {
  const { score = 'scaled-dot', temperature = 1 } = options;
  const scale = options.scale ?? (score === 'scaled-dot' ? 1 / Math.sqrt(headDim) : 1);
  const outDim = modelDim;
  const perHead = [];
  const concat = Array.from({ length: nq }, () => new Float64Array(heads * valueDim));
  for (let h = 0; h < heads; h++) {
    const q = project(xq, nq, modelDim, weights.wQuery, heads * headDim, h * headDim, headDim);
    const k = project(xkv, nk, modelDim, weights.wKey, heads * headDim, h * headDim, headDim);
    const v = project(xkv, nk, modelDim, weights.wValue, heads * valueDim, h * valueDim, valueDim);
    const scores = new Float64Array(nq * nk);
    const probabilities = new Float64Array(nq * nk);
    const mask = new Uint8Array(nq * nk);
    for (let i = 0; i < nq; i++) {
      for (let j = 0; j < nk; j++) {
        let s;
        if (score === 'cosine') {
          const norms = Math.sqrt(dot(q[i], q[i]) * dot(k[j], k[j]));
          s = norms === 0 ? 0 : dot(q[i], k[j]) / norms;
        } else if (score === 'additive') {
          const { hidden, wQuery, wKey, v: va } = weights.additive;
          s = 0;
          for (let a = 0; a < hidden; a++) {
            let pre = 0;
            for (let d = 0; d < headDim; d++) {
              const at = (h * hidden + a) * headDim + d;
              pre += wQuery[at] * q[i][d] + wKey[at] * k[j][d];
            }
            s += va[h * hidden + a] * Math.tanh(pre);
          }
        } else {
          s = dot(q[i], k[j]);
        }
        scores[i * nk + j] = s;
        mask[i * nk + j] = visible(i, j, h, options) ? 1 : 0;
      }
      let max = -Infinity;
      for (let j = 0; j < nk; j++) {
        if (mask[i * nk + j]) max = Math.max(max, (scale * scores[i * nk + j]) / temperature);
      }
      let sum = 0;
      for (let j = 0; j < nk; j++) {
        const p = mask[i * nk + j] ? Math.exp((scale * scores[i * nk + j]) / temperature - max) : 0;
        probabilities[i * nk + j] = p;
        sum += p;
      }
      for (let j = 0; j < nk; j++) {
        probabilities[i * nk + j] = sum > 0 ? probabilities[i * nk + j] / sum : 0;
        for (let e = 0; e < valueDim; e++)
          concat[i][h * valueDim + e] += probabilities[i * nk + j] * v[j][e];
      }
    }
    perHead.push({ weights: probabilities, scores, mask, q, k, v });
  }
  const output = project(
    concat.flatMap((row) => Array.from(row)),
    nq,
    heads * valueDim,
    weights.wOut,
    outDim,
    0,
    outDim,
  );
  return { heads: perHead, output };
}

function assertClose(actual, expected, tolerance, what) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    const allowed = tolerance * (1 + Math.abs(expected[i]));
    if (!(Math.abs(actual[i] - expected[i]) <= allowed)) {
      assert.fail(
        `${what}[${i}]: got ${actual[i]}, expected ${expected[i]} (tolerance ${allowed})`,
      );
    }
  }
}

function checkAgainstReference(result, options, queryTokens, keyTokens) {
  const { heads, headDim, valueDim, modelDim } = result.shape;
  const queryLength = queryTokens.length;
  const keyLength = keyTokens.length;
  const embedOptions = { dim: modelDim, seed: options.seed, positionScale: options.positionScale };
  assert.deepEqual(result.embeddings.query, embed(queryTokens, embedOptions));
  assert.deepEqual(result.embeddings.key, embed(keyTokens, embedOptions));
  const weights = projectionWeights({
    heads,
    headDim,
    valueDim,
    modelDim,
    seed: options.seed,
    shareQueryKey: options.shareQueryKey,
  });
  const reference = referenceLayer({
    xq: result.embeddings.query,
    xkv: result.embeddings.key,
    nq: queryLength,
    nk: keyLength,
    weights,
    heads,
    headDim,
    valueDim,
    modelDim,
    options,
  });
  for (let h = 0; h < heads; h++) {
    assert.deepEqual(
      Array.from(result.heads[h].mask),
      Array.from(reference.heads[h].mask),
      `mask of head ${h}`,
    );
    assertClose(result.heads[h].weights, reference.heads[h].weights, 1e-5, `weights of head ${h}`);
    assertClose(result.heads[h].scores, reference.heads[h].scores, 1e-4, `scores of head ${h}`);
    const qHead = result.q.subarray(h * queryLength * headDim, (h + 1) * queryLength * headDim);
    assertClose(
      qHead,
      reference.heads[h].q.flatMap((r) => Array.from(r)),
      1e-4,
      `q of head ${h}`,
    );
    const kHead = result.k.subarray(h * keyLength * headDim, (h + 1) * keyLength * headDim);
    assertClose(
      kHead,
      reference.heads[h].k.flatMap((r) => Array.from(r)),
      1e-4,
      `k of head ${h}`,
    );
  }
  assertClose(
    result.output,
    reference.output.flatMap((r) => Array.from(r)),
    1e-4,
    'output',
  );
}

// ---- tests --------------------------------------------------------------------------------------

const CONFIGURATIONS = [
  {},
  { score: 'dot', causal: true, temperature: 0.5 },
  { score: 'cosine', window: 2, seed: 9 },
  { score: 'additive', causal: true },
  { window: { before: 2, after: 2, dilation: 2 }, globalTokens: [0, 7], temperature: 2 },
  { sparse: { pattern: 'strided', stride: 3 }, heads: 2, headDim: 8 },
  { sparse: { pattern: 'fixed', stride: 4, summary: 1 }, scale: 0.3, heads: 3, headDim: 5 },
  { shareQueryKey: true, seed: 3 },
  { keyLengths: [11, 5, 3, 8], causal: true, score: 'dot' },
];

for (const options of CONFIGURATIONS) {
  test(`analyze equals a double-precision reference: ${JSON.stringify(options)}`, async () => {
    const result = await analyze(SENTENCE, options);
    const n = result.tokens.length;
    assert.equal(n, 11);
    assert.equal(result.heads.length, options.heads ?? 4);
    assert.equal(result.output.length, n * result.shape.modelDim);
    assert.equal(result.shape.modelDim, result.shape.heads * result.shape.headDim);
    assert.match(result.backend, /^wasm-(simd|scalar)$/);
    assert.ok(result.timing.ms > 0 && result.timing.totalMs >= result.timing.ms);
    checkAgainstReference(result, options, result.tokens, result.tokens);
  });
}

test('each weight row is a distribution over the visible keys', async () => {
  const { tokens, heads } = await analyze(SENTENCE, { causal: true, window: 3 });
  const n = tokens.length;
  for (const { weights, mask } of heads) {
    for (let i = 0; i < n; i++) {
      let sum = 0;
      for (let j = 0; j < n; j++) {
        if (!mask[i * n + j]) assert.equal(weights[i * n + j], 0);
        sum += weights[i * n + j];
      }
      assert.ok(Math.abs(sum - 1) < 1e-5, `row ${i} sums to ${sum}`);
    }
  }
});

test('a passed instance is used; SIMD and scalar agree', async () => {
  const scalar = await createAttention({ backend: 'wasm-scalar' });
  try {
    const a = await analyze(SENTENCE, { attention: scalar, causal: true });
    const b = await analyze(SENTENCE, { causal: true });
    assert.equal(a.backend, 'wasm-scalar');
    a.heads.forEach((head, h) => assertClose(head.weights, b.heads[h].weights, 1e-5, `head ${h}`));
  } finally {
    scalar.dispose();
  }
});

test('same text, options and seed give the same bits; another seed differs', async () => {
  const a = await analyze(SENTENCE, { seed: 5 });
  const b = await analyze(SENTENCE, { seed: 5 });
  const c = await analyze(SENTENCE, { seed: 6 });
  assert.deepEqual(a.heads[0].weights, b.heads[0].weights);
  assert.deepEqual(a.output, b.output);
  assert.notDeepEqual(a.heads[0].weights, c.heads[0].weights);
});

test('modelDim, valueDim and granularity pass through', async () => {
  const result = await analyze('我爱自然语言处理', {
    modelDim: 40,
    heads: 2,
    headDim: 8,
    valueDim: 6,
    granularity: 'subword',
  });
  assert.equal(result.tokens.length, 8);
  assert.equal(result.output.length, 8 * 40);
  assert.equal(result.v.length, 2 * 8 * 6);
  assert.equal(result.embeddings.query.length, 8 * 40);
  checkAgainstReference(result, { modelDim: 40 }, result.tokens, result.tokens);
});

test('analyzePair: target tokens attend to source tokens', async () => {
  const source = 'the animal was too tired to cross';
  const target = 'tired animal';
  const options = { heads: 2, headDim: 8, causal: true, score: 'cosine' };
  const pair = await analyzePair(source, target, options);
  assert.deepEqual(
    pair.sourceTokens.map((t) => t.text),
    source.split(' '),
  );
  assert.deepEqual(
    pair.targetTokens.map((t) => t.text),
    ['tired', 'animal'],
  );
  assert.equal(pair.heads[0].weights.length, 2 * 7);
  assert.equal(pair.q.length, 2 * 2 * 8);
  assert.equal(pair.k.length, 2 * 7 * 8);
  assert.equal(pair.output.length, 2 * 16);
  assert.deepEqual(pair.shape, {
    heads: 2,
    queryLength: 2,
    keyLength: 7,
    headDim: 8,
    valueDim: 8,
    modelDim: 16,
    outDim: 16,
  });
  checkAgainstReference(pair, options, pair.targetTokens, pair.sourceTokens);
});

test('identical words align across texts when queries and keys share a projection', async () => {
  const pair = await analyzePair('a cat sat on the mat', 'the cat', {
    shareQueryKey: true,
    heads: 1,
    headDim: 64,
    positionScale: 0,
    temperature: 0.25,
  });
  const [top] = topAttended(pair.heads[0].weights.subarray(6, 12), 1);
  assert.equal(pair.sourceTokens[top.index].text, 'cat');
});

test('caps and bad input raise named errors', async () => {
  await assert.rejects(
    analyze('a '.repeat(513)),
    (e) => e instanceof RangeError && /cap of 512/.test(e.message),
  );
  await assert.rejects(
    analyze('x'.repeat(20001)),
    (e) => e instanceof RangeError && /cap of 20000/.test(e.message),
  );
  await assert.rejects(
    analyzePair('a '.repeat(513), 'b'),
    (e) =>
      e instanceof RangeError &&
      e.parameter === 'source' &&
      /^source: 513 word tokens/.test(e.message),
  );
  await assert.rejects(
    analyzePair('a', '   '),
    (e) => e instanceof RangeError && /^target: contains no tokens/.test(e.message),
  );
  await assert.rejects(analyze(7), (e) => e instanceof TypeError && /^text: /.test(e.message));
  await assert.rejects(
    analyze('a b', { heads: 17 }),
    (e) => e instanceof RangeError && /^heads: /.test(e.message),
  );
  await assert.rejects(
    analyze('a b', { temperature: 0 }),
    (e) => e instanceof RangeError && /^temperature: /.test(e.message),
  );
  await assert.rejects(
    analyze('a b', { casual: true }),
    (e) => e instanceof TypeError && /unknown option 'casual'/.test(e.message),
  );
  await assert.rejects(
    analyze('a b', { window: -1 }),
    (e) => e instanceof RangeError && /^window: /.test(e.message),
  );
  // The shared instance still works after all of that.
  assert.equal((await analyze('a b')).tokens.length, 2);
});

test('entropy in bits and the most attended keys', () => {
  assert.equal(entropy([0.25, 0.25, 0.25, 0.25]), 2);
  assert.equal(entropy(new Float32Array([0, 1, 0])), 0);
  assert.equal(entropy([0, 0, 0]), 0);
  assert.ok(Math.abs(entropy([0.5, 0.5, 0]) - 1) < 1e-12);
  assert.deepEqual(topAttended([0.1, 0.4, 0, 0.4, 0.1], 3), [
    { index: 1, weight: 0.4 },
    { index: 3, weight: 0.4 },
    { index: 0, weight: 0.1 },
  ]);
  assert.deepEqual(topAttended([0, 0]), []);
});
