// The head scores (src/interpret/head-scores.js) on hand-made attention: an exact induction,
// previous-token or sink pattern scores 1, uniform attention scores 1 / the keys a row sees,
// worked out by hand below, for causal and bidirectional heads; then the labels, the averaging
// over probes and the smoothing over snapshots (no flicker on noisy scores).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  headScores,
  HEAD_LABEL_THRESHOLD,
  labelOfScores,
  smoothHeadScores,
} from '../src/interpret/head-scores.js';
import { averageScores, probeSequences } from '../src/models/head-probe.js';

const close = (actual, expected, label = '') =>
  assert.ok(Math.abs(actual - expected) < 1e-6, `${label} ${actual} is not ${expected}`);

// The probe's shape: [BOS] a b c d a b c d (BOS special), causal.
const L = 4;
const PROBE = [0, 11, 12, 13, 14, 11, 12, 13, 14];
const N = PROBE.length;
const BOS = PROBE.map((_, i) => i === 0);

// One head [N, N] whose row i is rowOf(i) (a list of [key, weight]).
function head(rowOf, n = N) {
  const weights = new Float32Array(n * n);
  for (let i = 0; i < n; i++) for (const [j, w] of rowOf(i)) weights[i * n + j] += w;
  return weights;
}
const uniformCausal = (i) => Array.from({ length: i + 1 }, (_, j) => [j, 1 / (i + 1)]);
const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;
const range = (from, to) => Array.from({ length: to - from }, (_, k) => from + k);

describe('headScores', () => {
  it('an exact induction head scores 1: the second copy looks at the token after the first', () => {
    // Second copy (rows 5..8): token i - L + 1; the rest on BOS.
    const weights = head((i) => (i > L ? [[i - L + 1, 1]] : [[0, 1]]));
    const [score] = headScores(weights, PROBE, 1, 1, { special: BOS });
    assert.equal(score.induction, 1);
    assert.equal(score.label, 'induction');
    // Rows 1..4 (of 8 non-special rows) sit on BOS, which is also row 1's previous token.
    close(score.sink, 4 / 8);
    close(score.previousToken, 1 / 8);
  });

  it('uniform causal attention scores 1 / the keys each row sees', () => {
    const [score] = headScores(head(uniformCausal), PROBE, 1, 1, { special: BOS });
    close(score.induction, mean(range(L + 1, N).map((i) => 1 / (i + 1))), 'induction');
    close(score.previousToken, mean(range(1, N).map((i) => 1 / (i + 1))), 'previous');
    close(score.sink, mean(range(1, N).map((i) => 1 / (i + 1))), 'sink');
    close(score.entropy, mean(range(0, N).map((i) => Math.log(i + 1))), 'entropy');
    assert.equal(score.label, null);
  });

  it('a previous-token head and a sink head', () => {
    const previous = head((i) => [[Math.max(0, i - 1), 1]]);
    const sink = head(() => [[0, 1]]);
    const attention = new Float32Array(2 * N * N);
    attention.set(previous, 0);
    attention.set(sink, N * N);
    const [p, s] = headScores(attention, PROBE, 1, 2, { special: BOS });
    assert.deepEqual([p.layer, p.head, s.layer, s.head], [0, 0, 0, 1]);
    assert.equal(p.previousToken, 1);
    assert.equal(p.induction, 0);
    assert.equal(p.label, 'previous-token');
    assert.equal(s.sink, 1);
    assert.equal(s.entropy, 0);
    assert.equal(s.label, 'sink');
  });

  it('without special tokens the sink is the first token (a text with no BOS)', () => {
    const ids = PROBE.slice(1);
    const n = ids.length;
    const [score] = headScores(
      head((i) => [[0, 1]], n),
      ids,
      1,
      1,
    );
    assert.equal(score.sink, 1, 'rows 1.. all on token 0');
    close(score.induction, 0);
  });

  it('bidirectional (BERT: [CLS] a b c d a b c d [SEP]): every key counts', () => {
    const ids = [...PROBE, 1];
    const n = ids.length;
    const special = ids.map((_, i) => i === 0 || i === n - 1);
    const uniform = head(() => range(0, n).map((j) => [j, 1 / n]), n);
    const [flat] = headScores(uniform, ids, 1, 1, { causal: false, special });
    close(flat.induction, 1 / n, 'induction');
    close(flat.previousToken, 1 / n, 'previous');
    close(flat.sink, 2 / n, 'sink: [CLS] and [SEP]');
    close(flat.entropy, Math.log(n), 'entropy');
    // Looking ahead to the twin in the other copy is not induction; the look-back target is.
    const twin = head((i) => (special[i] ? [[i, 1]] : [[i <= L ? i + L : i - L, 1]]), n);
    assert.equal(headScores(twin, ids, 1, 1, { causal: false, special })[0].induction, 0);
    const induction = head((i) => (i > L && i < n - 1 ? [[i - L + 1, 1]] : [[n - 1, 1]]), n);
    const [score] = headScores(induction, ids, 1, 1, { causal: false, special });
    assert.equal(score.induction, 1);
    assert.equal(score.label, 'induction');
    close(score.sink, 4 / 8, 'the first copy parks on [SEP]');
  });

  it('no repeated token: induction is null', () => {
    const ids = [1, 2, 3];
    const [score] = headScores(head(uniformCausal, 3), ids, 1, 1);
    assert.equal(score.induction, null);
  });
});

describe('labelOfScores', () => {
  it('the first label past the threshold, most specific first', () => {
    const at = HEAD_LABEL_THRESHOLD;
    assert.equal(labelOfScores({ induction: 0.6, previousToken: 0.9, sink: 0.9 }), 'induction');
    assert.equal(labelOfScores({ induction: at, previousToken: 0.6, sink: 0.9 }), 'previous-token');
    assert.equal(labelOfScores({ induction: null, previousToken: 0.1, sink: 0.7 }), 'sink');
    assert.equal(labelOfScores({ induction: at, previousToken: at, sink: at }), null);
  });
});

describe('averageScores', () => {
  it('averages each score over the probes and labels the averages', () => {
    const a = [{ layer: 0, head: 0, entropy: 1, previousToken: 0.2, induction: 0.9, sink: 0 }];
    const b = [{ layer: 0, head: 0, entropy: 3, previousToken: 0.4, induction: 0.3, sink: 0.2 }];
    const [score] = averageScores([a, b]);
    close(score.entropy, 2);
    close(score.previousToken, 0.3);
    close(score.induction, 0.6);
    close(score.sink, 0.1);
    assert.equal(score.label, 'induction');
  });
});

describe('smoothHeadScores', () => {
  // Scores of one head over snapshots: `induction` per snapshot, the rest low.
  const snapshots = (values) =>
    values.map((induction) => [
      { layer: 0, head: 0, entropy: 1, previousToken: 0.1, induction, sink: 0.1 },
    ]);
  const labelsOf = (list) => {
    let state = null;
    return list.map((heads) => (state = smoothHeadScores(state, heads))[0].label);
  };
  const changes = (labels) => labels.filter((label, i) => i > 0 && label !== labels[i - 1]).length;

  it('a score wavering around the threshold flickers raw, and is labelled once smoothed', () => {
    // 0.5 +- 0.1 alternating, after a rise: the raw label changes at almost every snapshot.
    const values = [
      0.1,
      0.2,
      0.3,
      0.4,
      ...Array.from({ length: 30 }, (_, i) => (i % 2 ? 0.4 : 0.6)),
    ];
    const raw = snapshots(values).map((heads) => labelOfScores(heads[0]));
    assert.ok(changes(raw) > 20, `raw changes ${changes(raw)}`);
    const smoothed = labelsOf(snapshots(values));
    assert.equal(changes(smoothed), 1, smoothed.join(' '));
    assert.equal(smoothed.at(-1), 'induction');
  });

  it('four noisy heads: the count of induction heads never falls back as they form', () => {
    // Each head rises through the threshold at its own time, with +-0.15 noise on top.
    const noise = [0.15, -0.12, 0.05, -0.15, 0.1, -0.05, 0.12, -0.1];
    const heads = [0, 1, 2, 3];
    const list = Array.from({ length: 60 }, (_, s) =>
      heads.map((h) => ({
        layer: 1,
        head: h,
        entropy: 1,
        previousToken: 0.05,
        sink: 0.1,
        induction: Math.min(0.9, Math.max(0, (s - 10 * h) / 30)) + noise[(s + 3 * h) % 8],
      })),
    );
    const rawCounts = list.map((hs) => hs.filter((x) => labelOfScores(x) === 'induction').length);
    const falls = (counts) => counts.filter((c, i) => i > 0 && c < counts[i - 1]).length;
    assert.ok(falls(rawCounts) > 3, `raw ${rawCounts.join('')}`);
    let state = null;
    const counts = list.map(
      (hs) => (state = smoothHeadScores(state, hs)).filter((x) => x.label === 'induction').length,
    );
    assert.equal(falls(counts), 0, counts.join(''));
    assert.equal(counts.at(-1), 4);
  });

  it('a label goes below the lower threshold; a missing score keeps the average', () => {
    const labels = labelsOf(snapshots([0.9, 0.9, 0.45, 0.45, 0.45, 0.2, 0.2, 0.2, 0.2]));
    assert.deepEqual(labels.slice(0, 5), Array(5).fill('induction'));
    assert.equal(labels.at(-1), null);
    const [first] = smoothHeadScores(null, snapshots([0.8])[0]);
    const [next] = smoothHeadScores([first], snapshots([null])[0]);
    assert.equal(next.induction, 0.8);
    const [moved] = smoothHeadScores([first], snapshots([0.4])[0]);
    close(moved.induction, 0.8 + 0.3 * (0.4 - 0.8));
  });
});

describe('probeSequences', () => {
  // A vocabulary of `size` pieces where only the ids in `ordinary` encode back to themselves;
  // [BOS] (id 0) opens every text, as Llama's tokenizer does.
  function tokenizer(size, ordinary) {
    const piece = (id) => (ordinary.has(id) ? `w${id}` : `<0x${id.toString(16)}>`);
    return {
      vocabSize: size,
      special: { bos: { id: 0 } },
      decode: ([id]) => piece(id),
      encode(text, { addSpecialTokens = true } = {}) {
        const match = /^w(\d+)$/.exec(text);
        const own = match
          ? [{ id: Number(match[1]), special: false }]
          : [...text].map(() => ({ id: 1, special: false }));
        return { tokens: addSpecialTokens ? [{ id: 0, special: true }, ...own] : own };
      },
    };
  }

  it("draws distinct ordinary tokens, twice, after the tokenizer's BOS; seeded", () => {
    const ordinary = new Set([3, 5, 8, 13, 21, 34, 55, 89]);
    const probe = probeSequences(
      tokenizer(100, ordinary),
      { length: 4, probes: 3 },
      {
        vocab: 100,
        maxPositions: 64,
      },
    );
    assert.equal(probe.ids.length, 3);
    for (const ids of probe.ids) {
      assert.equal(ids[0], 0);
      const body = [...ids.subarray(1)];
      assert.deepEqual(body.slice(0, 4), body.slice(4));
      assert.equal(new Set(body).size, 4);
      assert.ok(body.every((id) => ordinary.has(id)));
    }
    assert.deepEqual(probe.special, [true, ...Array(8).fill(false)]);
    const again = probeSequences(
      tokenizer(100, ordinary),
      { length: 4, probes: 3 },
      {
        vocab: 100,
        maxPositions: 64,
      },
    );
    assert.deepEqual(again.ids, probe.ids);
  });

  it('refuses a vocabulary with fewer ordinary tokens than the length, naming it', () => {
    const few = tokenizer(50, new Set([7, 9, 11]));
    assert.throws(
      () => probeSequences(few, { length: 4 }, { vocab: 50, maxPositions: 64 }),
      (error) =>
        error instanceof RangeError &&
        error.code === 'out_of_range' &&
        error.parameter === 'length' &&
        /gave 3 ordinary tokens of the 4/.test(error.message),
    );
    // A large vocabulary with none: the search stops after a bounded number of checks.
    const none = tokenizer(1_000_000, new Set());
    assert.throws(
      () => probeSequences(none, {}, { vocab: 1_000_000, maxPositions: 1024 }),
      /gave 0 ordinary tokens of the 50 a probe needs \(8192 tokens checked\)/,
    );
    // Positions too few for any sequence twice.
    assert.throws(
      () => probeSequences(few, {}, { vocab: 50, maxPositions: 4 }),
      (error) => error.parameter === 'length' && /4 positions leave no room/.test(error.message),
    );
  });
});
