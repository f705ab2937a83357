// A deterministic, vocabulary-free subword split of one word-like segment.
//
// Real subword tokenizers (BPE, WordPiece) learn a vocabulary from a corpus; attnlens ships no
// vocabulary, so this rule only imitates the effect people see in them: long words fall apart into
// a stem and familiar affixes, and CJK words into characters. The rule, applied in this order:
//
// 1. A word containing Han, Hiragana, Katakana or Hangul is split into characters (grapheme
//    clusters): 自然语言 -> 自 / 然 / 语 / 言.
// 2. An English clitic at the end is split off: n't, 's, 're, 've, 'll, 'd, 'm (straight or curly
//    apostrophe), as the Penn Treebank does: didn't -> did / n't, can't -> ca / n't.
// 3. A word of ASCII letters only, at least 6 letters long, loses up to two suffixes from SUFFIXES
//    (longest match first, case-insensitive), each time only if at least 4 letters stay, and then
//    one prefix from PREFIXES under the same condition ("un" is not stripped before "i", which
//    keeps universe, unique, united whole): unbelievable -> un / believ / able,
//    carefully -> care / ful / ly, attention -> attent / ion.
// 4. Any piece still longer than 10 characters is cut into the fewest near-equal chunks of at most
//    8 characters (grapheme clusters): Donaudampfschifffahrt (21) -> Donauda / mpfschi / fffahrt.
//
// Pieces are returned as [start, end) UTF-16 offsets relative to the word, so the caller's token
// offsets stay exact.

// Longest first, so "ization" wins over "ation" and "ion".
const SUFFIXES = [
  'ization',
  'isation',
  'ational',
  'fulness',
  'ousness',
  'iveness',
  'ations',
  'ation',
  'ition',
  'ments',
  'ings',
  'ions',
  'ness',
  'ment',
  'able',
  'ible',
  'less',
  'ship',
  'hood',
  'ers',
  'ing',
  'ion',
  'ful',
  'ous',
  'ive',
  'ize',
  'ity',
  'ism',
  'ist',
  'ed',
  'er',
  'ly',
].sort((a, b) => b.length - a.length);

const PREFIXES = [
  'counter',
  'under',
  'inter',
  'trans',
  'super',
  'multi',
  'micro',
  'over',
  'anti',
  'non',
  'mis',
  'un',
].sort((a, b) => b.length - a.length);

const MIN_AFFIX_WORD = 6;
const MIN_STEM = 4;
const MAX_SUFFIXES = 2;
const LONG_PIECE = 10;
const MAX_CHUNK = 8;

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const CLITIC = /(?:n['\u2019]t|['\u2019](?:s|re|ve|ll|d|m))$/i;
const ASCII_WORD = /^[A-Za-z]+$/;

// Created on first use, so merely importing attnlens works where Intl.Segmenter is missing.
let graphemeSegmenter = null;

/** Grapheme cluster boundaries of `text` as [start, end) pairs. */
function graphemeSpans(text) {
  graphemeSegmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  const spans = [];
  for (const { segment, index } of graphemeSegmenter.segment(text)) {
    spans.push([index, index + segment.length]);
  }
  return spans;
}

/** Splits the ASCII word word.slice(start, end) by rule 3; returns [start, end) pieces. */
function splitAffixes(word, start, end) {
  const lower = word.slice(start, end).toLowerCase();
  if (lower.length < MIN_AFFIX_WORD || !ASCII_WORD.test(lower)) return [[start, end]];

  const suffixes = [];
  let stemEnd = lower.length;
  for (let round = 0; round < MAX_SUFFIXES; round++) {
    const suffix = SUFFIXES.find(
      (s) => stemEnd - s.length >= MIN_STEM && lower.startsWith(s, stemEnd - s.length),
    );
    if (!suffix) break;
    suffixes.unshift([start + stemEnd - suffix.length, start + stemEnd]);
    stemEnd -= suffix.length;
  }

  let stemStart = 0;
  const prefix = PREFIXES.find(
    (p) =>
      stemEnd - p.length >= MIN_STEM && lower.startsWith(p) && !(p === 'un' && lower[2] === 'i'),
  );
  const pieces = [];
  if (prefix) {
    pieces.push([start, start + prefix.length]);
    stemStart = prefix.length;
  }
  pieces.push([start + stemStart, start + stemEnd], ...suffixes);
  return pieces;
}

/** Rule 4: cuts a long piece into near-equal grapheme chunks of at most MAX_CHUNK. */
function chunkLongPiece(word, start, end) {
  const graphemes = graphemeSpans(word.slice(start, end));
  if (graphemes.length <= LONG_PIECE) return [[start, end]];
  const chunks = Math.ceil(graphemes.length / MAX_CHUNK);
  const pieces = [];
  let first = 0;
  for (let c = 0; c < chunks; c++) {
    // Integer arithmetic: chunk c ends after floor((c + 1) * count / chunks) graphemes.
    const last = Math.floor(((c + 1) * graphemes.length) / chunks);
    pieces.push([start + graphemes[first][0], start + graphemes[last - 1][1]]);
    first = last;
  }
  return pieces;
}

/**
 * Splits one word-like segment into subword pieces.
 * @param {string} word
 * @returns {Array<[number, number]>} [start, end) UTF-16 offsets into `word`, in order, covering it
 */
export function subwordSpans(word) {
  if (CJK.test(word)) return graphemeSpans(word);

  let end = word.length;
  let clitic = null;
  const match = CLITIC.exec(word);
  if (match && match.index > 0) {
    clitic = [match.index, word.length];
    end = match.index;
  }
  const pieces = splitAffixes(word, 0, end).flatMap(([s, e]) => chunkLongPiece(word, s, e));
  if (clitic) pieces.push(clitic);
  return pieces;
}
