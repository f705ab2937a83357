// What each head does on a sequence, from its attention weights [layers, heads, N, N]: the
// scores interpretability tools give heads (Olsson et al. 2022, "In-context learning and
// induction heads"; TransformerLens), for the trainer's snapshots and for a real model's probe
// (models/head-probe.js) alike. One implementation; the previous-token and first-token shares
// are head-labels.js' measures, read through headMeasures():
//   entropy        the mean over rows of -sum_j p_ij ln p_ij (nats) over the keys a row sees:
//                  how spread out the head looks; it falls as attention sharpens
//   previousToken  the mean weight row i puts on token i - 1: head-labels.js' `previous`
//   induction      the mean weight row i puts on the tokens right after the earlier occurrences
//                  of token i, over the rows whose token occurred before (null when none did).
//                  On a random sequence repeated twice (the probe), that is the weight each
//                  token of the second copy puts on the token after its first occurrence.
//   sink           the mean weight a row puts on the first token and on the tokenizer's own
//                  special tokens (BOS, [CLS], [SEP]): head-labels.js' `first` plus `special`.
//                  Heads with nothing to do park their attention there.
//   label          the first of 'induction', 'previous-token', 'sink' whose score passes
//                  HEAD_LABEL_THRESHOLD, else null (labelOfScores)
// Bidirectional models (BERT) are measured the same way with every key visible: a row's
// "earlier occurrence" is still the earlier one, so induction stays the look-back pattern (a
// head that looks at a token's twin in the other copy is a different pattern and scores 0).
// Rows of special tokens show no pattern and are left out of every measure but entropy.

import { headMeasures, LABEL_THRESHOLDS } from './head-labels.js';

/** A head is labelled when more than this share of its weight goes where the label says. */
export const HEAD_LABEL_THRESHOLD = LABEL_THRESHOLDS.previous;

/** The scores' labels, most specific first: a head gets the first whose score passes. */
export const HEAD_SCORE_LABELS = Object.freeze(['induction', 'previous-token', 'sink']);
const SCORE_OF = { induction: 'induction', 'previous-token': 'previousToken', sink: 'sink' };

/**
 * The label of a head's scores: the first of HEAD_SCORE_LABELS past `threshold`.
 * @param {{ induction: number|null, previousToken: number|null, sink: number|null }} scores
 */
export function labelOfScores(scores, threshold = HEAD_LABEL_THRESHOLD) {
  for (const label of HEAD_SCORE_LABELS) {
    const value = scores[SCORE_OF[label]];
    if (value !== null && value !== undefined && value > threshold) return label;
  }
  return null;
}

/**
 * For every row, the columns right after the earlier occurrences of its token (none for
 * special tokens).
 */
export function inductionTargets(ids, special = []) {
  const after = [];
  const seen = new Map();
  for (let i = 0; i < ids.length; i++) {
    if (special[i]) {
      after.push([]);
      continue;
    }
    const earlier = seen.get(ids[i]) ?? [];
    after.push(earlier.map((j) => j + 1));
    seen.set(ids[i], [...earlier, i]);
  }
  return after;
}

/**
 * @param {Float32Array} attention [layers, heads, N, N]
 * @param {ArrayLike<number>} ids the sequence's N token ids
 * @param {{ causal?: boolean, special?: boolean[] }} options causal (default true): row i sees
 *   keys 0..i, else every key; special: true per token the tokenizer added (BOS, [CLS], [SEP])
 * @returns {{ layer, head, entropy, previousToken, induction, sink, label }[]} layer by layer
 */
export function headScores(attention, ids, layers, heads, { causal = true, special = [] } = {}) {
  const n = ids.length;
  const after = inductionTargets(ids, special);
  const repeated = after.filter((columns) => columns.length > 0).length;
  const mask = new Uint8Array(n * n).fill(1);
  if (causal) for (let i = 0; i < n; i++) mask.fill(0, i * n + i + 1, (i + 1) * n);
  const scores = [];
  for (let layer = 0; layer < layers; layer++) {
    for (let head = 0; head < heads; head++) {
      const base = (layer * heads + head) * n * n;
      const weights = attention.subarray(base, base + n * n);
      let entropy = 0;
      let induction = 0;
      for (let i = 0; i < n; i++) {
        const row = i * n;
        for (let j = 0; j < n; j++) {
          const p = weights[row + j];
          if (p > 0 && mask[row + j]) entropy -= p * Math.log(p);
        }
        for (const j of after[i]) induction += weights[row + j];
      }
      const { measures } = headMeasures(weights, { n, mask, special });
      const sink =
        measures.first === null && measures.special === null
          ? null
          : (measures.first ?? 0) + (measures.special ?? 0);
      const score = {
        layer,
        head,
        entropy: entropy / n,
        previousToken: measures.previous ?? 0,
        induction: repeated > 0 ? induction / repeated : null,
        sink,
      };
      scores.push({ ...score, label: labelOfScores(score) });
    }
  }
  return scores;
}

/**
 * How labels are smoothed over a trainer's snapshots: `weight`, the newest snapshot's share of
 * the moving average; a label is taken when its average passes `enter` and kept while it stays
 * above `stay` (hysteresis), so a score that wavers around the threshold does not flicker.
 */
export const LABEL_SMOOTHING = Object.freeze({
  weight: 0.3,
  enter: HEAD_LABEL_THRESHOLD,
  stay: HEAD_LABEL_THRESHOLD - 0.1,
});
const SMOOTHED = ['entropy', 'previousToken', 'induction', 'sink'];

/**
 * The next snapshot's smoothed scores: each score an exponential moving average over the
 * snapshots so far, and the label from those averages with hysteresis: a head keeps its label
 * while its average stays above `stay`, unless a more specific label passes `enter`.
 * @param {object[]|null} previous this function's last result (null at the first snapshot)
 * @param {object[]} heads the snapshot's headScores()
 * @returns {{ layer, head, entropy, previousToken, induction, sink, label }[]}
 */
export function smoothHeadScores(previous, heads, smoothing = LABEL_SMOOTHING) {
  const { weight, enter, stay } = smoothing;
  return heads.map((score, i) => {
    const before = previous?.[i] ?? null;
    const smoothed = { layer: score.layer, head: score.head };
    for (const name of SMOOTHED) {
      const now = score[name] ?? null;
      const was = before?.[name] ?? null;
      smoothed[name] = was === null ? now : now === null ? was : was + weight * (now - was);
    }
    const entering = labelOfScores(smoothed, enter);
    const kept = before?.label ?? null;
    const keeps = kept !== null && (smoothed[SCORE_OF[kept]] ?? 0) > stay;
    const moreSpecific =
      entering !== null && HEAD_SCORE_LABELS.indexOf(entering) < HEAD_SCORE_LABELS.indexOf(kept);
    smoothed.label = keeps && !moreSpecific ? kept : entering;
    return smoothed;
  });
}
