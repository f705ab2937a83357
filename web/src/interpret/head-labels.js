// What a head does, read from its weights: the share of each query's attention that goes to the
// previous token, the first token, the token itself, the special tokens ([CLS], [SEP]), and how
// evenly a row spreads over the keys it may see. A head gets the label of the pattern that holds
// most of its attention when that share passes the pattern's threshold; "broad" when no single
// pattern does and its rows are spread out. Pure: matrices in, numbers out.

/** The labels, most specific first: a head gets the first whose share passes its threshold. */
export const HEAD_LABELS = Object.freeze(['previous', 'first', 'self', 'special', 'broad']);

// Mean share of a row's weight that makes a head "do" a pattern; broad: mean normalised entropy.
export const LABEL_THRESHOLDS = Object.freeze({
  previous: 0.5,
  first: 0.5,
  self: 0.5,
  special: 0.5,
  broad: 0.75,
});

/**
 * The measures and label of one head.
 * @param {Float32Array|number[]} weights row-major [N, N]: row i is what query i attends to
 * @param {object} options
 *   n         tokens
 *   mask      0/1 per cell (null: every key visible)
 *   special   true per token the tokenizer added or marked special ([CLS], [SEP], <|endoftext|>)
 * @returns {{ label: string|null, measures: { previous, first, self, special, broad } }}
 *   each measure the mean over the rows that can show it (null when none can): previous, the
 *   weight on key i - 1; first, on key 0 (when token 0 is not special); self, on key i;
 *   special, on every special key; broad, the row's entropy over log2 of its visible keys.
 *   Rows that see a single key (the first row of a causal head) show nothing and are skipped.
 *   A pattern gives the label only when at least half of the other rows can show it.
 */
export function headMeasures(weights, { n, mask = null, special = [] }) {
  const visible = (i, j) => !mask || mask[i * n + j] === 1;
  const sums = { previous: 0, first: 0, self: 0, special: 0, broad: 0 };
  const rows = { previous: 0, first: 0, self: 0, special: 0, broad: 0 };
  const hasSpecial = special.some(Boolean);
  const firstIsSpecial = Boolean(special[0]);
  for (let i = 0; i < n; i++) {
    let seen = 0;
    for (let j = 0; j < n; j++) if (visible(i, j)) seen += 1;
    if (seen < 2 || special[i]) continue; // nothing to choose, or a special token's own row
    const row = (j) => weights[i * n + j];
    if (i > 0 && visible(i, i - 1)) add('previous', row(i - 1));
    if (i > 0 && !firstIsSpecial && visible(i, 0)) add('first', row(0));
    if (visible(i, i)) add('self', row(i));
    if (hasSpecial) {
      let share = 0;
      for (let j = 0; j < n; j++) if (special[j] && visible(i, j)) share += row(j);
      add('special', share);
    }
    let bits = 0;
    for (let j = 0; j < n; j++) {
      const w = row(j);
      if (w > 0 && visible(i, j)) bits -= w * Math.log2(w);
    }
    add('broad', bits / Math.log2(seen));
  }
  function add(name, value) {
    sums[name] += value;
    rows[name] += 1;
  }
  const measures = {};
  for (const name of HEAD_LABELS) measures[name] = rows[name] ? sums[name] / rows[name] : null;
  // A pattern names the head only when at least half its rows can show it: in a local window
  // only the first rows see token 0, and one row is not a first-token sink.
  const shown = (name) => rows[name] * 2 >= rows.broad;
  return { label: labelOf(measures, shown), measures };
}

// The pattern holding the largest share past its threshold; broad only when none does.
function labelOf(measures, shown) {
  let best = null;
  for (const name of HEAD_LABELS.filter((label) => label !== 'broad')) {
    const share = measures[name];
    if (share === null || share < LABEL_THRESHOLDS[name] || !shown(name)) continue;
    if (best === null || share > measures[best]) best = name;
  }
  if (best) return best;
  return measures.broad !== null && measures.broad >= LABEL_THRESHOLDS.broad ? 'broad' : null;
}

/**
 * Labels for every head of every layer of a run.
 * @param {Float32Array} attention [layers, heads, N, N]
 * @param {{ layers, heads, n, masks?: (Uint8Array|null)[] (one per layer), special }} shape
 * @returns {{ label, measures }[][]} [layer][head]
 */
export function labelHeads(attention, { layers, heads, n, masks = [], special = [] }) {
  const size = n * n;
  return Array.from({ length: layers }, (_, l) =>
    Array.from({ length: heads }, (_, h) =>
      headMeasures(attention.subarray((l * heads + h) * size, (l * heads + h + 1) * size), {
        n,
        mask: masks[l] ?? null,
        special,
      }),
    ),
  );
}
