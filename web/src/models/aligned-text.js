// A text with its alignment to the original: one code point per unit, each with the UTF-16 range
// [start, end) of the original text it came from, as a tokenizer's normalizer and pre-tokenizer
// change the text (the Rust library's NormalizedString keeps the same thing). A character the
// pipeline inserts (the '▁' of Prepend or Metaspace) has an empty range where it was inserted; a
// character made from several (a composed é, '▁' for a run of spaces) has the range of all of
// them.
//
// Each component runs on the whole text, as the library runs it. Components whose effect is
// character by character (lowercasing, NFC/NFD/NFKC/NFKD, StripAccents, BertNormalizer,
// Precompiled, and any kind this file does not know) are run on each character with its
// combining marks; if the pieces joined are not what the component makes of the whole text, on
// each run of whitespace or non-whitespace; failing that, the whole text is one piece. Coarser,
// never wrong.

/** @typedef {{ chars: string[], starts: number[], ends: number[], start: number, end: number }}
 *  Aligned (start, end: the original range of the whole, for what is inserted into an empty text)
 */

/** @returns {Aligned} `text`, found at `offset` in the original */
export function alignedText(text, offset = 0) {
  const chars = [];
  const starts = [];
  const ends = [];
  let at = offset;
  for (const ch of text) {
    chars.push(ch);
    starts.push(at);
    ends.push((at += ch.length));
  }
  return { chars, starts, ends, start: offset, end: offset + text.length };
}

export const joined = (aligned) => aligned.chars.join('');

function empty(like) {
  return { chars: [], starts: [], ends: [], start: like.start, end: like.end };
}

function push(out, ch, start, end) {
  out.chars.push(ch);
  out.starts.push(start);
  out.ends.push(end);
}

function copyUnits(from, first, last, out) {
  for (let u = first; u < last; u++) push(out, from.chars[u], from.starts[u], from.ends[u]);
}

// The original position in front of unit `u` (where something inserted there belongs).
function positionAt(aligned, u) {
  if (u < aligned.chars.length) return aligned.starts[u];
  return aligned.chars.length ? aligned.ends[aligned.chars.length - 1] : aligned.start;
}

// The original range units [first, last) came from; empty at their position if all inserted.
export function rangeOf(aligned, first, last) {
  let start = Infinity;
  let end = -Infinity;
  for (let u = first; u < last; u++) {
    if (aligned.starts[u] === aligned.ends[u]) continue;
    start = Math.min(start, aligned.starts[u]);
    end = Math.max(end, aligned.ends[u]);
  }
  if (start === Infinity) return [positionAt(aligned, first), positionAt(aligned, first)];
  return [start, end];
}

// For each UTF-16 index of the joined string, the unit it falls in (and one past the end).
export function unitIndex(aligned) {
  const index = [];
  aligned.chars.forEach((ch, unit) => {
    for (let k = 0; k < ch.length; k++) index.push(unit);
  });
  index.push(aligned.chars.length);
  return index;
}

/** Units [first, last) as an aligned text of their own. */
export function sliceAligned(aligned, first, last) {
  const [start, end] = rangeOf(aligned, first, last);
  return {
    chars: aligned.chars.slice(first, last),
    starts: aligned.starts.slice(first, last),
    ends: aligned.ends.slice(first, last),
    start,
    end,
  };
}

/** `string` in front of the text, each character with an empty range at the text's start. */
export function prepend(aligned, string) {
  const out = empty(aligned);
  const at = positionAt(aligned, 0);
  for (const ch of string) push(out, ch, at, at);
  copyUnits(aligned, 0, aligned.chars.length, out);
  return out;
}

/** Each match of `regex` replaced by `content`; each new character has the match's range. */
export function replaceMatches(aligned, regex, content) {
  if (!regex) return aligned;
  const flags = regex.flags.includes('g') ? regex.flags : `${regex.flags}g`;
  const text = joined(aligned);
  const unitAt = unitIndex(aligned);
  const out = empty(aligned);
  let done = 0;
  for (const match of text.matchAll(new RegExp(regex.source, flags))) {
    const first = unitAt[match.index];
    const last = unitAt[match.index + match[0].length];
    copyUnits(aligned, done, first, out);
    const [start, end] = rangeOf(aligned, first, last);
    for (const ch of content) push(out, ch, start, end);
    done = last;
  }
  copyUnits(aligned, done, aligned.chars.length, out);
  return out;
}

/** Whitespace removed from the left and / or right end (JavaScript's trim, as the library). */
export function strip(aligned, left, right) {
  let first = 0;
  let last = aligned.chars.length;
  while (left && first < last && /^\s$/u.test(aligned.chars[first])) first++;
  while (right && last > first && /^\s$/u.test(aligned.chars[last - 1])) last--;
  const out = empty(aligned);
  copyUnits(aligned, first, last, out);
  return out;
}

const CLUSTER = /\P{M}\p{M}*|\p{M}+/gu;
const RUN = /\s+|\S+/gu;

// `normalize` on each piece of the text that `pattern` finds, every output character with its
// piece's range; null if the pieces joined differ from `whole`.
function mapPieces(aligned, normalize, pattern, whole) {
  const text = joined(aligned);
  const unitAt = unitIndex(aligned);
  const out = empty(aligned);
  let done = 0;
  for (const match of text.matchAll(pattern)) {
    const first = unitAt[match.index];
    const last = unitAt[match.index + match[0].length];
    const [start, end] = rangeOf(aligned, first, last);
    if (first !== done) return null;
    const piece = String(normalize(match[0]));
    // Unchanged (the usual case): each character keeps its own range.
    if (piece === match[0]) {
      copyUnits(aligned, first, last, out);
      done = last;
      continue;
    }
    // Each character on its own makes the same (a no-break space and a mark after it): each
    // output keeps the range of the character it came from.
    const each =
      last - first > 1 ? aligned.chars.slice(first, last).map((ch) => String(normalize(ch))) : null;
    if (each && each.join('') === piece) {
      each.forEach((made, k) => {
        for (const ch of made) push(out, ch, aligned.starts[first + k], aligned.ends[first + k]);
      });
    } else {
      for (const ch of piece) push(out, ch, start, end);
    }
    done = last;
  }
  return done === aligned.chars.length && joined(out) === whole ? out : null;
}

/** A component that changes characters, run piece by piece as finely as is exact. */
export function mapText(aligned, normalize) {
  const whole = String(normalize(joined(aligned)));
  for (const pattern of [CLUSTER, RUN]) {
    const out = mapPieces(aligned, normalize, pattern, whole);
    if (out) return out;
  }
  const out = empty(aligned);
  const [start, end] = rangeOf(aligned, 0, aligned.chars.length);
  for (const ch of whole) push(out, ch, start, end);
  return out;
}

// Steps the library takes before its normalizer (tokenizer_config.json's remove_space and
// do_lowercase_and_remove_accent), as normalizer components of their own.
export const REMOVE_SPACE = {
  config: { type: 'RemoveSpace' },
  normalize: (text) => text.trim().split(/\s+/).join(' '),
};
export const LOWERCASE_AND_REMOVE_ACCENTS = {
  config: { type: 'LowercaseAndRemoveAccents' },
  normalize: (text) => text.toLowerCase().replace(/\p{M}/gu, ''),
};

// The exact aligned form of a component that is not character by character, or null.
function exactStep(aligned, component) {
  const config = component.config ?? {};
  switch (config.type) {
    case 'Sequence':
      return (component.normalizers ?? []).reduce(
        (text, part) => (part ? normalizeAligned(text, part) : text),
        aligned,
      );
    case 'Prepend':
      return prepend(aligned, String(config.prepend ?? ''));
    case 'Replace':
      return replaceMatches(aligned, component.pattern, String(config.content ?? ''));
    case 'Strip':
      return strip(aligned, config.strip_left, config.strip_right);
    case 'RemoveSpace':
      return replaceMatches(strip(aligned, true, true), /\s+/g, ' ');
    default:
      return null;
  }
}

/**
 * The text through one normalizer component of the library (an instance with `config.type` and
 * `normalize(text)`), with its alignment.
 * @returns {Aligned}
 */
export function normalizeAligned(aligned, component) {
  if (!component) return aligned;
  const exact = exactStep(aligned, component);
  // A Sequence's parts each check themselves (checking the whole again would cost a pass per
  // level of nesting); any other step must make what the library makes of the whole text.
  if (exact && component.config?.type === 'Sequence') return exact;
  if (exact && joined(exact) === String(component.normalize(joined(aligned)))) return exact;
  return mapText(aligned, (text) => component.normalize(text));
}

/**
 * The text through the parts of a pre-tokenizer that change text rather than only split it:
 * Metaspace ('▁' for spaces, and in front as its prepend_scheme says), ByteLevel's prefix space,
 * Replace. Splitting is left to the library; matching tokens skips what a split drops.
 * @param {object} config the pre-tokenizer's part of tokenizer.json
 * @param {object} instance the library's pre-tokenizer made from it
 * @param {number} sectionIndex which section of the text (between added tokens) this is
 */
export function preTokenizeAligned(aligned, config, instance, sectionIndex) {
  if (!config || !instance) return aligned;
  switch (config.type) {
    case 'Sequence':
      return (config.pretokenizers ?? []).reduce(
        (text, part, i) => preTokenizeAligned(text, part, instance.tokenizers?.[i], sectionIndex),
        aligned,
      );
    case 'Metaspace': {
      const replacement = instance.replacement ?? '\u2581';
      const mark = instance.str_rep || replacement;
      let out = replaceMatches(aligned, / /g, mark);
      const scheme = instance.prepend_scheme;
      const first = scheme === 'always' || (scheme === 'first' && sectionIndex === 0);
      if (first && !joined(out).startsWith(replacement)) out = prepend(out, mark);
      return out;
    }
    case 'ByteLevel':
      return instance.add_prefix_space && !joined(aligned).startsWith(' ')
        ? prepend(aligned, ' ')
        : aligned;
    case 'Replace':
      return replaceMatches(aligned, instance.pattern, String(config.content ?? ''));
    default:
      return aligned;
  }
}

const encoder = new TextEncoder();

/** The UTF-8 bytes of the text, each with the original range of its character. */
export function toBytes(aligned) {
  const bytes = [];
  const starts = [];
  const ends = [];
  aligned.chars.forEach((ch, u) => {
    for (const byte of encoder.encode(ch)) {
      bytes.push(byte);
      starts.push(aligned.starts[u]);
      ends.push(aligned.ends[u]);
    }
  });
  return {
    bytes: Uint8Array.from(bytes),
    starts: Int32Array.from(starts),
    ends: Int32Array.from(ends),
  };
}
