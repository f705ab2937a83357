// Word-level attention for subword tokens: a model's BPE or WordPiece pieces are grouped back
// into the words of the text ("un", "believ", "able" -> "unbelievable"; 自, 然 -> 自然), and a
// matrix over pieces becomes one over words: a word looks at another word with the sum of the
// weights from its pieces to the other's pieces, averaged over its own pieces (so each row still
// sums to what the pieces' rows sum to, 1). Pure: spans and matrices in, spans and matrices out.

/**
 * The words the tokens belong to, in token order.
 * @param {{ start, end, special?, segment?, text }[]} tokens a model's tokens (UTF-16 offsets
 *   into their segment's text; the template's [CLS] / [SEP] have start === end)
 * @param {{ start, end }[][]} words the word spans of each segment's text (tokenize(text,
 *   { granularity: 'word' }) of the text, then of the pair)
 * @returns {{ tokens: number[], segment, start, end, special }[]} one group per word the tokens
 *   reach; a token that reaches into two words ('),' over ')' and ',') makes them one group; a
 *   token that covers no word (a space of its own, as GPT-2 has before a word it could not merge
 *   with, or a '▁' the tokenizer put in front of the text) joins the next word of its text, else
 *   the one before; a special token is a group of its own
 */
export function wordGroups(tokens, words) {
  // The words each token reaches, [first, last], or null.
  const reach = tokens.map((token) => {
    if (token.special) return null;
    const spans = words[token.segment ?? 0] ?? [];
    let first = -1;
    let last = -1;
    spans.forEach((w, k) => {
      if (token.start < w.end && token.end > w.start) {
        if (first < 0) first = k;
        last = k;
      }
    });
    return first < 0 ? null : [first, last];
  });
  tokens.forEach((token, i) => {
    if (token.special || reach[i]) return;
    const sameText = (j) => !tokens[j].special && (tokens[j].segment ?? 0) === (token.segment ?? 0);
    let j = i + 1;
    while (j < tokens.length && sameText(j) && !reach[j]) j++;
    if (j < tokens.length && sameText(j)) reach[i] = [reach[j][0], reach[j][0]];
    else if (i > 0 && sameText(i - 1) && reach[i - 1])
      reach[i] = [reach[i - 1][1], reach[i - 1][1]];
  });
  const groups = [];
  let open = null; // the group the next token may join: { group, first, last }
  tokens.forEach((token, index) => {
    const segment = token.segment ?? 0;
    const reached = reach[index];
    if (reached && open && open.group.segment === segment && reached[0] <= open.last) {
      open.group.tokens.push(index);
      open.last = Math.max(open.last, reached[1]);
      open.group.end = words[segment][open.last].end;
      return;
    }
    const group = {
      tokens: [index],
      segment,
      start: reached ? words[segment][reached[0]].start : token.start,
      end: reached ? words[segment][reached[1]].end : token.end,
      special: Boolean(token.special),
    };
    groups.push(group);
    open = reached ? { group, first: reached[0], last: reached[1] } : null;
  });
  return groups;
}

/**
 * A [rows, cols] matrix over tokens as one over groups of them.
 * @param {Float32Array} weights row-major [rows, cols]
 * @param {{ rowGroups, colGroups, cols, mask? }} options groups of token indices (wordGroups'
 *   `tokens`), the token matrix's column count, and its 0/1 mask (null: all visible)
 * @returns {{ weights: Float32Array, mask: Uint8Array }} [rowGroups, colGroups]: weights, the
 *   mean over a row group's tokens of the sum over a column group's; mask, 1 where any token
 *   pair of the two groups is visible
 */
export function aggregateGroups(weights, { rowGroups, colGroups, cols, mask = null }) {
  const out = new Float32Array(rowGroups.length * colGroups.length);
  const visible = new Uint8Array(out.length);
  rowGroups.forEach((rows, a) => {
    colGroups.forEach((columns, b) => {
      let sum = 0;
      let seen = 0;
      for (const i of rows) {
        for (const j of columns) {
          sum += weights[i * cols + j];
          if (!mask || mask[i * cols + j]) seen = 1;
        }
      }
      out[a * colGroups.length + b] = sum / rows.length;
      visible[a * colGroups.length + b] = seen;
    });
  });
  return { weights: out, mask: visible };
}

// The marks vocabularies write for a space: SentencePiece's '▁', byte-level BPE's 'Ġ'.
const SPACE_MARKS = /[\u2581\u0120]/g;

/**
 * What a model's tokens are called on screen: the text each covers, its leading space included
 * (" upon", shown "·upon"; "自"), or its vocabulary entry where it covers none (the [CLS] and
 * [SEP] a template adds); a '▁' the tokenizer put in front of the text reads as the space it
 * stands for.
 * @param {{ text, start, end, special, segment }[]} tokens model.run()'s tokens
 * @param {string[]} texts the text, then the pair
 * @returns {{ text, piece, start, end, special, segment }[]} piece: the vocabulary entry
 */
export function tokenLabels(tokens, texts) {
  return tokens.map((token) => {
    const span = texts[token.segment ?? 0]?.slice(token.start, token.end) ?? '';
    const inserted = !token.special && span === '' && /^[\u2581\u0120]+$/.test(token.text);
    return {
      text: inserted
        ? token.text.replace(SPACE_MARKS, ' ')
        : token.special || span === ''
          ? token.text
          : span,
      piece: token.text,
      start: token.start,
      end: token.end,
      special: Boolean(token.special),
      segment: token.segment ?? 0,
    };
  });
}
