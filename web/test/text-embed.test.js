import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  embed,
  fingerprint,
  positionEncoding,
  projectionWeights,
  tokenize,
} from '../src/text/index.js';
import {
  exactCos,
  exactIntegerPower,
  exactRootOfUnitInterval,
  exactSin,
} from '../src/text/exact-math.js';
import { tokenFeatures } from '../src/text/embed.js';

const SENTENCE = "The animal didn't cross the street because it was too tired";

function cosine(a, b) {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return ab / Math.sqrt(aa * bb);
}

const contentOnly = (word, seed, dim = 64) => embed([word], { dim, seed, positionScale: 0 });

test('pinned fingerprints: any change to the numbers is caught', () => {
  // Computed once in Node 20; the same bytes are expected in every engine. If an intended change
  // to the embedding or the weights moves them, update these values and say so in the changelog.
  const tokens = tokenize(SENTENCE);
  assert.equal(fingerprint(embed(tokens, { dim: 64, seed: 1 })), '5624809d');
  assert.equal(fingerprint(embed(tokenize('我爱自然语言处理'), { dim: 32, seed: 7 })), '107345ad');
  assert.equal(fingerprint(positionEncoding(512, 64)), 'e8f182e8');
  const w = projectionWeights({ heads: 4, headDim: 16, seed: 1 });
  assert.equal(fingerprint(w.wQuery), 'e89c863f');
  assert.equal(fingerprint(w.wKey), '66be26de');
  assert.equal(fingerprint(w.wValue), '698b2b24');
  assert.equal(fingerprint(w.wOut), 'b4776fe6');
  assert.equal(fingerprint(w.additive.wQuery), '068f6caa');
  assert.equal(fingerprint(w.additive.wKey), 'c8a3e16c');
  assert.equal(fingerprint(w.additive.v), '96a16717');
});

test('embed: shape, determinism, seed and input forms', () => {
  const tokens = tokenize(SENTENCE);
  const a = embed(tokens, { dim: 48, seed: 3 });
  assert.ok(a instanceof Float32Array);
  assert.equal(a.length, tokens.length * 48);
  assert.deepEqual(embed(tokens, { dim: 48, seed: 3 }), a);
  assert.deepEqual(
    embed(
      tokens.map((t) => t.text),
      { dim: 48, seed: 3 },
    ),
    a,
    'strings work like tokens',
  );
  assert.notDeepEqual(embed(tokens, { dim: 48, seed: 4 }), a);
  assert.equal(embed([]).length, 0);
  assert.equal(embed(['x']).length, 64, 'default dim is 64');
});

test('content: related words are similar, unrelated words nearly orthogonal', () => {
  const related = [
    ['attend', 'attention'],
    ['attend', 'attended'],
    ['tokenize', 'tokenization'],
    ['Attention', 'attention'],
  ];
  const unrelated = [
    ['attend', 'banana'],
    ['street', 'because'],
    ['animal', 'tired'],
    ['river', 'cross'],
    ['the', 'animal'],
  ];
  const meanOverSeeds = ([a, b]) => {
    let sum = 0;
    for (let seed = 1; seed <= 20; seed++)
      sum += cosine(contentOnly(a, seed), contentOnly(b, seed));
    return sum / 20;
  };
  for (const pair of related)
    assert.ok(meanOverSeeds(pair) > 0.45, `${pair}: ${meanOverSeeds(pair)}`);
  for (const pair of unrelated)
    assert.ok(Math.abs(meanOverSeeds(pair)) < 0.1, `${pair}: ${meanOverSeeds(pair)}`);
  // With the default seed and a wide embedding, attention is nearer to attend than any other word.
  const attend = contentOnly('attend', 1, 256);
  const others = ['banana', 'street', 'because', 'animal', 'tired', 'river', 'cross', 'the'];
  const nearest = Math.max(...others.map((w) => cosine(attend, contentOnly(w, 1, 256))));
  assert.ok(cosine(attend, contentOnly('attention', 1, 256)) > nearest + 0.2);
  assert.equal(
    cosine(contentOnly('Attention', 1), contentOnly('attention', 1)),
    1,
    'case is folded',
  );
});

test('features are character 2- to 4-grams with boundary marks, plus the whole token', () => {
  assert.deepEqual(tokenFeatures('Cat'), [
    '\u0001cat',
    '\u0002c',
    'ca',
    'at',
    't\u0003',
    '\u0002ca',
    'cat',
    'at\u0003',
    '\u0002cat',
    'cat\u0003',
  ]);
  const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
  for (const feature of tokenFeatures('👍🏽𝔸')) {
    assert.doesNotMatch(feature, loneSurrogate, 'n-grams are taken over code points');
  }
});

test('content has norm sqrt(dim / 2); positions add the sinusoidal encoding', () => {
  const dim = 32;
  const content = embed(['the', 'the'], { dim, seed: 1, positionScale: 0 });
  const norm = Math.sqrt(content.subarray(0, dim).reduce((s, x) => s + x * x, 0));
  assert.ok(Math.abs(norm - Math.sqrt(dim / 2)) < 1e-5);
  assert.deepEqual(content.subarray(0, dim), content.subarray(dim), 'no positions: order-blind');

  const withPositions = embed(['the', 'the'], { dim, seed: 1, positionScale: 0.5 });
  const pe = positionEncoding(2, dim);
  for (let i = 0; i < 2 * dim; i++) {
    assert.ok(Math.abs(withPositions[i] - (content[i] + 0.5 * pe[i])) < 1e-6);
  }
  assert.notDeepEqual(withPositions.subarray(0, dim), withPositions.subarray(dim));
});

test('positionEncoding equals the textbook formula', () => {
  const dim = 20;
  const pe = positionEncoding(512, dim);
  for (let p = 0; p < 512; p += 7) {
    for (let i = 0; i < dim; i++) {
      const angle = p / 10000 ** ((2 * Math.floor(i / 2)) / dim);
      const expected = i % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
      assert.ok(Math.abs(pe[p * dim + i] - expected) < 1e-6, `PE[${p}, ${i}]`);
    }
  }
  assert.equal(positionEncoding(3, 5).length, 15, 'odd widths work');
});

test('exact sine and cosine agree with Math.sin/cos to the last bits', () => {
  let worst = 0;
  for (let i = -20000; i <= 20000; i++) {
    const x = i * 0.0731;
    worst = Math.max(
      worst,
      Math.abs(exactSin(x) - Math.sin(x)),
      Math.abs(exactCos(x) - Math.cos(x)),
    );
  }
  assert.ok(worst <= 2.3e-16, `worst difference ${worst}`);
  assert.equal(exactSin(0), 0);
  assert.equal(exactCos(0), 1);
  assert.throws(() => exactSin(1e7), RangeError);
  assert.throws(() => exactSin(NaN), RangeError);
});

test('exact roots and powers', () => {
  assert.equal(exactIntegerPower(3, 5), 243);
  assert.equal(exactIntegerPower(0.5, 0), 1);
  const root = exactRootOfUnitInterval(1e-8, 64);
  assert.ok(Math.abs(root - 1e-8 ** (1 / 64)) < 1e-15);
});

test('projectionWeights: layout, Xavier range, head independence, sharing', () => {
  const w = projectionWeights({
    heads: 2,
    headDim: 8,
    modelDim: 24,
    valueDim: 4,
    outDim: 10,
    seed: 2,
  });
  assert.equal(w.wQuery.length, 24 * 16);
  assert.equal(w.wKey.length, 24 * 16);
  assert.equal(w.wValue.length, 24 * 8);
  assert.equal(w.wOut.length, 8 * 10);
  assert.equal(w.additive.hidden, 8);
  assert.equal(w.additive.wQuery.length, 2 * 8 * 8);
  assert.equal(w.additive.v.length, 2 * 8);

  const limit = Math.sqrt(6 / (24 + 8));
  const max = Math.max(...w.wQuery.map(Math.abs));
  assert.ok(max <= limit && max > 0.9 * limit, `max |w| ${max}, limit ${limit}`);
  const variance = w.wQuery.reduce((s, x) => s + x * x, 0) / w.wQuery.length;
  assert.ok(Math.abs(variance - (limit * limit) / 3) < (0.2 * (limit * limit)) / 3);

  // Head 0's query columns do not depend on how many heads there are.
  const three = projectionWeights({ heads: 3, headDim: 8, modelDim: 24, seed: 2 });
  for (let r = 0; r < 24; r++) {
    assert.deepEqual(
      w.wQuery.subarray(r * 16, r * 16 + 8),
      three.wQuery.subarray(r * 24, r * 24 + 8),
    );
  }

  const shared = projectionWeights({ heads: 2, headDim: 8, seed: 2, shareQueryKey: true });
  assert.deepEqual(shared.wKey, shared.wQuery);
  assert.deepEqual(shared.additive.wKey, shared.additive.wQuery);
  assert.notDeepEqual(w.wKey, w.wQuery);
});

test('argument checks name the argument', () => {
  assert.throws(
    () => embed('the'),
    (e) => e instanceof TypeError && /^tokens: /.test(e.message),
  );
  assert.throws(
    () => embed([{ text: 3 }]),
    (e) => e instanceof TypeError && /^tokens\[0\]: /.test(e.message),
  );
  assert.throws(
    () => embed(['a'], { dim: 0 }),
    (e) => e instanceof RangeError && /^dim: /.test(e.message),
  );
  assert.throws(() => embed(['a'], { dim: 2000 }), /dim: must be an integer from 1 to 1024/);
  assert.throws(
    () => embed(['a'], { seed: -1 }),
    (e) => e instanceof RangeError && e.parameter === 'seed',
  );
  assert.throws(() => embed(['a'], { seed: 1.5 }), RangeError);
  assert.throws(() => embed(['a'], { seed: '1' }), TypeError);
  assert.throws(() => embed(['a'], { positionScale: Infinity }), RangeError);
  assert.throws(
    () => projectionWeights({ headDim: 4 }),
    (e) => e instanceof TypeError && /^heads: /.test(e.message),
  );
  assert.throws(
    () => projectionWeights({ heads: 17, headDim: 4 }),
    /heads: must be an integer from 1 to 16/,
  );
  assert.throws(
    () => projectionWeights({ heads: 4, headDim: 300 }),
    /headDim: must be an integer from 1 to 256/,
  );
  assert.throws(
    () => projectionWeights({ heads: 1, headDim: 4, keyModelDim: 3, shareQueryKey: true }),
    (e) => e instanceof RangeError && /^shareQueryKey: /.test(e.message),
  );
});
