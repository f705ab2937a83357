// The numbers the Translate mode draws from a translation's steps: the cross-attention matrix
// (target rows x source columns) of one head, or averaged over heads and layers, and how much
// each head's attention lands where a small dictionary of the example says it should (the share
// of a target word's attention on the source word it translates).

/** The target tokens with their spans in the translation the steps spell out. */
export function targetTokens(steps) {
  let at = 0;
  return steps.map((step) => {
    const start = at;
    if (!step.special) at += step.text.length;
    return { text: step.text, start, end: at, special: step.special === true };
  });
}

/**
 * The [steps x n] matrix of `layer` and `head` (-1 for the average over them) from steps'
 * crossAttention rows [decoder layers, heads, n].
 */
export function crossMatrix(steps, { layer, head, decoderLayers, heads, n }) {
  const layerList = layer < 0 ? [...Array(decoderLayers).keys()] : [layer];
  const headList = head < 0 ? [...Array(heads).keys()] : [head];
  const share = 1 / (layerList.length * headList.length);
  const out = new Float32Array(steps.length * n);
  steps.forEach((step, t) => {
    for (const l of layerList) {
      for (const h of headList) {
        const from = (l * heads + h) * n;
        for (let j = 0; j < n; j++) out[t * n + j] += step.crossAttention[from + j] * share;
      }
    }
  });
  return out;
}

// Indices of the tokens whose span overlaps [start, end).
const overlapping = (tokens, start, end) =>
  tokens.flatMap((token, i) =>
    !token.special && token.start < end && token.end > start ? [i] : [],
  );

// The first whole-word, case-blind place of `word` in `text` (CJK words have no boundaries).
function findWord(text, word) {
  const lower = text.toLowerCase();
  const needle = word.toLowerCase();
  const isWordChar = (c) =>
    c !== undefined && /[\p{L}\p{N}]/u.test(c) && !/\p{Script=Han}/u.test(c);
  for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, at + 1)) {
    if (!isWordChar(lower[at - 1]) && !isWordChar(lower[at + needle.length])) return at;
  }
  return -1;
}

/**
 * The dictionary's pairs found in this source and translation: [{ source, target, sourceTokens,
 * targetTokens }] (token indices), skipping words either side does not contain.
 */
export function dictionaryPairs(dictionary, { sourceText, source, translation, target }) {
  const pairs = [];
  for (const [from, to] of Object.entries(dictionary ?? {})) {
    const s = findWord(sourceText, from);
    const t = findWord(translation, to);
    if (s < 0 || t < 0) continue;
    const sourceTokens = overlapping(source, s, s + from.length);
    const targetTokens = overlapping(target, t, t + to.length);
    if (sourceTokens.length && targetTokens.length) {
      pairs.push({ source: from, target: to, sourceTokens, targetTokens });
    }
  }
  return pairs;
}

/**
 * Every decoder head's alignment share [layers * heads]: over the dictionary's target tokens,
 * the mean attention on their source words. null when no pair is found.
 */
export function headAlignment(steps, pairs, { decoderLayers, heads, n }) {
  const rows = pairs.flatMap((pair) =>
    pair.targetTokens.filter((t) => t < steps.length).map((t) => ({ t, cols: pair.sourceTokens })),
  );
  if (!rows.length) return null;
  const shares = new Float32Array(decoderLayers * heads);
  for (let lh = 0; lh < decoderLayers * heads; lh++) {
    let sum = 0;
    for (const { t, cols } of rows) {
      for (const j of cols) sum += steps[t].crossAttention[lh * n + j];
    }
    shares[lh] = sum / rows.length;
  }
  return shares;
}
