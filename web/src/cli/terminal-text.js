// Measuring, cleaning and cutting text for a monospace terminal, where CJK characters and emoji
// take two columns and combining marks none. Widths follow Unicode's East Asian Width (Wide and
// Fullwidth ranges) and emoji presentation, which is what terminals use.

const graphemeSegmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

// Control characters (an ESC in the input could otherwise drive the terminal) and bidi overrides
// (they would reorder the rest of the row) are shown as U+FFFD.
const UNSAFE = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu;
const EMOJI_PRESENTATION = /\p{Emoji_Presentation}/u;
const PICTOGRAPH_WITH_VS16 = /\p{Extended_Pictographic}\ufe0f/u;
const ZERO_WIDTH_ONLY = /^[\p{Mn}\p{Me}\p{Cf}]+$/u;

const WIDE_RANGES = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xa960, 0xa97f],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe10, 0xfe19],
  [0xfe30, 0xfe6f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f200, 0x1f2ff],
  [0x20000, 0x2fffd],
  [0x30000, 0x3fffd],
];

function isWideCodePoint(cp) {
  return WIDE_RANGES.some(([lo, hi]) => cp >= lo && cp <= hi);
}

/** Replaces characters that would act on the terminal instead of being shown. */
export function sanitize(text) {
  return text.replace(UNSAFE, '\ufffd');
}

/** Columns one grapheme cluster takes: 0, 1 or 2. */
export function graphemeWidth(cluster) {
  if (ZERO_WIDTH_ONLY.test(cluster)) return 0;
  if (EMOJI_PRESENTATION.test(cluster) || PICTOGRAPH_WITH_VS16.test(cluster)) return 2;
  return isWideCodePoint(cluster.codePointAt(0)) ? 2 : 1;
}

/** The grapheme clusters of text. */
export function graphemes(text) {
  return Array.from(graphemeSegmenter.segment(text), (s) => s.segment);
}

/** Columns text takes in a terminal. */
export function displayWidth(text) {
  let width = 0;
  for (const cluster of graphemes(text)) width += graphemeWidth(cluster);
  return width;
}

/**
 * Text cut to at most `width` columns (ending in '…' when cut) and padded with spaces to exactly
 * `width` columns, on the right or, with align 'right', on the left.
 */
export function fitToWidth(text, width, align = 'left') {
  let used = 0;
  let fitted = '';
  const clusters = graphemes(text);
  const total = clusters.reduce((sum, c) => sum + graphemeWidth(c), 0);
  if (total <= width) {
    fitted = text;
    used = total;
  } else {
    for (const cluster of clusters) {
      const w = graphemeWidth(cluster);
      if (used + w > width - 1) break;
      fitted += cluster;
      used += w;
    }
    if (width >= 1) {
      fitted += '…';
      used += 1;
    }
  }
  const padding = ' '.repeat(Math.max(0, width - used));
  return align === 'right' ? padding + fitted : fitted + padding;
}
