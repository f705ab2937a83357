// Token offsets the tokenizer library does not give: where each token of an encoding came from
// in the original text, as UTF-16 [start, end).
//
// The library (@huggingface/tokenizers) gives token strings but no offsets, so its own encoding
// is replayed here with an alignment kept beside the text, the way the Rust library's
// NormalizedString does it (aligned-text.js):
// 1. the text is cut where added tokens are, with the library's own splitters (each added token
//    is its own span);
// 2. each other section goes through the tokenizer.json's own normalizer components and the
//    pre-tokenizers that change text (Metaspace, ByteLevel's prefix space, Replace), each output
//    character keeping the original range it came from (an inserted '▁' has an empty range);
// 3. the library's own pre-tokenizer and model turn that text into tokens; each pre-token (word)
//    is found in order in the UTF-8 of the aligned text, and each of its tokens' bytes (GPT-2's
//    byte alphabet, <0xNN> byte pieces, '##' and end-of-word marks undone) in order within it:
//    a token spans the original ranges of its bytes.
// Byte pieces of one character share that character's span. The unknown token spans what lies
// between its neighbours within its word. Where a step cannot be followed exactly the spans get
// coarser (a cluster, a word, the rest of the section), never wrong; if the replayed tokens are
// not the library's, every token spans the whole text.

import {
  LOWERCASE_AND_REMOVE_ACCENTS,
  REMOVE_SPACE,
  alignedText,
  joined,
  normalizeAligned,
  preTokenizeAligned,
  sliceAligned,
  toBytes,
  unitIndex,
} from './aligned-text.js';

const encoder = new TextEncoder();

// GPT-2's printable stand-ins for the 256 byte values (the ByteLevel pre-tokenizer's alphabet).
export function byteLevelDecoder() {
  const printable = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const map = new Map(printable.map((b) => [String.fromCharCode(b), b]));
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    if (!printable.includes(b)) map.set(String.fromCharCode(256 + extra++), b);
  }
  return map;
}

// Every component of a pipeline part, Sequence parts included.
function components(part) {
  if (!part || typeof part !== 'object') return [];
  const nested = part.pretokenizers ?? part.decoders ?? part.normalizers ?? part.processors ?? [];
  return [part, ...(Array.isArray(nested) ? nested : []).flatMap(components)];
}

/** Whether the post-processor trims whitespace off offsets (RoBERTa's, some ByteLevel ones). */
export function trimsOffsets(json) {
  return components(json.post_processor).some((part) => part.trim_offsets === true);
}

const BYTE_PIECE = /^<0x([0-9A-Fa-f]{2})>$/;

/**
 * A function from a token string to the byte strings of pipeline text it may stand for, most
 * likely first ([] for the unknown token, whose text is unknown).
 */
export function createSurface(json) {
  const model = json.model ?? {};
  const parts = [...components(json.pre_tokenizer), ...components(json.decoder)];
  const byteLevel = parts.some((p) => p.type === 'ByteLevel') ? byteLevelDecoder() : null;
  const prefix = model.continuing_subword_prefix || (model.type === 'WordPiece' ? '##' : '');
  const suffix = model.end_of_word_suffix || '';
  // BPE and WordPiece name the unknown token; Unigram gives its index (and its library keeps
  // the unknown text itself as the token string, which is then found like any other).
  const unknown = new Set([model.unk_token]);
  if (model.type === 'Unigram' && Number.isInteger(model.unk_id)) {
    unknown.add(model.vocab?.[model.unk_id]?.[0]);
  }
  unknown.delete(undefined);
  unknown.delete(null);
  const asBytes = (token) => {
    if (byteLevel) {
      const out = new Uint8Array(token.length);
      let n = 0;
      for (const ch of token) {
        const byte = byteLevel.get(ch);
        if (byte === undefined) return encoder.encode(token);
        out[n++] = byte;
      }
      return out.subarray(0, n);
    }
    return encoder.encode(token);
  };
  const surface = (token) => {
    if (unknown.has(token)) return [];
    const byte = model.byte_fallback && BYTE_PIECE.exec(token);
    if (byte) return [Uint8Array.of(parseInt(byte[1], 16))];
    const candidates = [];
    let text = token;
    if (prefix && text.startsWith(prefix) && text.length > prefix.length) {
      text = text.slice(prefix.length);
    }
    if (suffix && text.endsWith(suffix) && text.length > suffix.length) {
      text = text.slice(0, -suffix.length);
    }
    candidates.push(asBytes(text));
    if (text !== token) candidates.push(asBytes(token));
    return candidates;
  };
  // A pre-tokenizer's piece as bytes of the pipeline text.
  surface.piece = asBytes;
  return surface;
}

/** The bytes a token adds to a decoded text, or null where that is not known. */
export function tokenBytes(surface, token) {
  return surface(token)[0] ?? null;
}

const isSpaceByte = (b) => b === 0x20 || (b >= 0x09 && b <= 0x0d);
const MARKS = [encoder.encode('\u2581'), encoder.encode(' ')];

function equalAt(haystack, at, needle) {
  if (at + needle.length > haystack.length) return false;
  for (let i = 0; i < needle.length; i++) if (haystack[at + i] !== needle[i]) return false;
  return true;
}

function indexOfBytes(haystack, needle, from) {
  for (let at = from; at + needle.length <= haystack.length; at++) {
    if (equalAt(haystack, at, needle)) return at;
  }
  return -1;
}

// Where `needle` continues the bytes at `pos`: [from, to) or null. Whitespace a pre-tokenizer
// dropped may lie before it; a leading '▁' or space that a pre-tokenizer put in front of a piece
// (Metaspace or ByteLevel inside a Sequence) may be in no text.
function locate(bytes, pos, needle, searchAhead) {
  let after = pos;
  while (after < bytes.length && isSpaceByte(bytes[after]) && !equalAt(bytes, after, needle)) {
    after++;
  }
  for (const at of [pos, after]) if (equalAt(bytes, at, needle)) return [at, at + needle.length];
  for (const mark of MARKS) {
    if (needle.length > mark.length && equalAt(needle, 0, mark)) {
      const rest = needle.subarray(mark.length);
      for (const at of [pos, after]) if (equalAt(bytes, at, rest)) return [at, at + rest.length];
    }
  }
  if (!searchAhead) return null;
  const found = indexOfBytes(bytes, needle, after);
  return found < 0 ? null : [found, found + needle.length];
}

// [start, end) with whitespace trimmed from both ends (empty spans stay at `start`).
function trimmed(text, start, end) {
  while (start < end && /\s/.test(text[start])) start++;
  while (end > start && /\s/.test(text[end - 1])) end--;
  return { start, end };
}

// The words of the piece's bytes [from, to) as pre-tokenizers split them, with their original
// ranges: punctuation one character each and other runs between whitespace whole (BERT's rule),
// or symbols one each as well. Several unknown tokens in a row get one word each when a rule
// gives as many words as there are tokens.
const WORD_RULES = [/\p{P}|[^\s\p{P}]+/gu, /[\p{P}\p{S}]|[^\s\p{P}\p{S}]+/gu];
const utf8 = new TextDecoder();

function wordsIn({ bytes, starts, ends }, from, to, count) {
  const chars = [];
  const charAt = []; // for each UTF-16 index of the gap's text, its character
  for (let b = from; b < to;) {
    const lead = bytes[b];
    const size = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    const ch = utf8.decode(bytes.subarray(b, Math.min(to, b + size)));
    for (let k = 0; k < ch.length; k++) charAt.push(chars.length);
    chars.push({ ch, start: starts[b], end: ends[b] });
    b += size;
  }
  const text = chars.map((c) => c.ch).join('');
  for (const rule of WORD_RULES) {
    const words = [...text.matchAll(rule)].map((m) => {
      const first = chars[charAt[m.index]];
      const last = chars[charAt[m.index + m[0].length - 1]];
      return { start: first.start, end: last.end };
    });
    if (words.length === count) return words;
  }
  return null;
}

/**
 * Spans of the tokens of one piece of pipeline text.
 * @param {string} text the original text
 * @param {string[]} tokens the model's tokens of this piece
 * @param {{ bytes: Uint8Array, starts: Int32Array, ends: Int32Array, start, end }} piece the
 *   piece's UTF-8 bytes with each byte's original range, and the piece's own original range
 */
export function alignPiece(text, tokens, piece, { surface, trim = false }) {
  const { bytes, starts, ends } = piece;
  const spans = new Array(tokens.length);
  let pos = 0; // next byte of the piece
  let cursor = piece.start; // next UTF-16 unit of the original text
  let pending = []; // tokens with no known text, waiting for the next token that has one
  let gapFrom = 0; // the byte where the pending tokens' text begins
  const settle = (until, untilByte) => {
    const gap = trimmed(text, cursor, Math.max(cursor, until));
    const words = pending.length > 1 ? wordsIn(piece, gapFrom, untilByte, pending.length) : null;
    pending.forEach((k, n) => (spans[k] = words ? words[n] : gap));
    pending = [];
  };
  for (let i = 0; i < tokens.length; i++) {
    const candidates = surface(tokens[i]);
    if (candidates.length === 0) {
      if (pending.length === 0) gapFrom = pos;
      pending.push(i);
      continue;
    }
    let match = null;
    for (const needle of candidates) {
      match = needle.length ? locate(bytes, pos, needle, pending.length > 0) : [pos, pos];
      if (match) break;
    }
    if (!match) {
      // Lost: this token and the rest of the piece's span what is left of it.
      settle(cursor, pos);
      for (let k = i; k < tokens.length; k++) spans[k] = { start: cursor, end: piece.end };
      return spans;
    }
    const [from, to] = match;
    let start = from < bytes.length ? starts[from] : piece.end;
    let end = start;
    for (let b = from; b < to; b++) {
      start = Math.min(start, starts[b]);
      end = Math.max(end, ends[b]);
    }
    settle(start, from);
    spans[i] = trim ? trimmed(text, start, end) : { start, end };
    pos = to;
    cursor = Math.max(cursor, end);
  }
  settle(piece.end, bytes.length);
  return spans;
}

/**
 * The library's encoding of `text` without special tokens, replayed with spans.
 * @param {object} library an @huggingface/tokenizers Tokenizer
 * @param {object} json its tokenizer.json
 * @returns {{ token: string, id: number, start: number, end: number }[]}
 */
export function encodeWithSpans(library, json, text, { surface, trim = false }) {
  const own = library.encode(text, { add_special_tokens: false });
  let replayed = null;
  try {
    replayed = replay(library, json, text, { surface, trim });
  } catch {
    replayed = null; // a library this code does not know the insides of: the coarse answer
  }
  const same =
    replayed &&
    replayed.length === own.tokens.length &&
    replayed.every((entry, i) => entry.token === own.tokens[i]);
  return own.tokens.map((token, i) => ({
    token,
    id: own.ids[i],
    ...(same ? replayed[i].span : { start: 0, end: text.length }),
  }));
}

// The library's encode_text step by step: sections around added tokens, lstrip / rstrip, the
// normalizer, added tokens in the normalized text, the pre-tokenizer and the model.
function replay(library, json, text, options) {
  const out = [];
  const sections = rangesOf(library.splitter_unnormalized.split(text));
  stripAround(library, text, sections);
  sections.forEach((section, sectionIndex) => {
    const content = text.slice(section.start, section.end);
    if (content.length === 0) return;
    const added = library.added_tokens_map.get(content);
    if (added) {
      out.push({ token: content, span: { start: section.start, end: section.end } });
      return;
    }
    let aligned = alignedText(content, section.start);
    if (library.remove_space === true) aligned = normalizeAligned(aligned, REMOVE_SPACE);
    if (library.do_lowercase_and_remove_accent) {
      aligned = normalizeAligned(aligned, LOWERCASE_AND_REMOVE_ACCENTS);
    }
    if (library.normalizer !== null) aligned = normalizeAligned(aligned, library.normalizer);
    const normalized = joined(aligned);
    if (normalized.length === 0) return;
    const unitAt = unitIndex(aligned);
    const subsections = rangesOf(library.splitter_normalized.split(normalized));
    stripAround(library, normalized, subsections);
    for (const sub of subsections) {
      const piece = normalized.slice(sub.start, sub.end);
      if (piece.length === 0) continue;
      const part = sliceAligned(aligned, unitAt[sub.start], unitAt[sub.end]);
      if (library.added_tokens_map.has(piece)) {
        out.push({ token: piece, span: { start: part.start, end: part.end } });
        continue;
      }
      const preTokens = library.pre_tokenizer
        ? library.pre_tokenizer(piece, { section_index: sectionIndex })
        : [piece];
      // The model encodes each word on its own (then fuses unknowns across words, if told to).
      const perWord = preTokens.length > 1 ? preTokens.map((word) => library.model([word])) : null;
      const tokens = perWord && !library.model.fuse_unk ? perWord.flat() : library.model(preTokens);
      const changed = library.pre_tokenizer
        ? preTokenizeAligned(part, json.pre_tokenizer, library.pre_tokenizer, sectionIndex)
        : part;
      const bytes = { ...toBytes(changed), start: part.start, end: part.end };
      const spans =
        (perWord && alignPreTokens(text, preTokens, perWord, tokens, bytes, options)) ??
        alignPiece(text, tokens, bytes, options);
      tokens.forEach((token, i) => out.push({ token, span: spans[i] }));
    }
  });
  return out;
}

// The tokens of each pre-token (the words the pre-tokenizer cut) aligned within that word's
// bytes, so that an unknown token covers its own word and no more; null where the model's tokens
// of the words one by one are not its tokens of them all (a fused unknown across words) or a
// word is not found.
function alignPreTokens(text, preTokens, perWord, tokens, whole, options) {
  const flat = perWord.flat();
  if (flat.length !== tokens.length || flat.some((token, i) => token !== tokens[i])) return null;
  const spans = [];
  let pos = 0;
  for (let w = 0; w < preTokens.length; w++) {
    const match = locate(whole.bytes, pos, options.surface.piece(preTokens[w]), true);
    if (!match) return null;
    const [from, to] = match;
    let start = from < whole.bytes.length ? whole.starts[from] : whole.end;
    let end = start;
    for (let b = from; b < to; b++) {
      start = Math.min(start, whole.starts[b]);
      end = Math.max(end, whole.ends[b]);
    }
    const word = {
      bytes: whole.bytes.subarray(from, to),
      starts: whole.starts.subarray(from, to),
      ends: whole.ends.subarray(from, to),
      start,
      end,
    };
    for (const span of alignPiece(text, perWord[w], word, options)) spans.push(span);
    pos = to;
  }
  return spans;
}

// Consecutive strings as [start, end) ranges of the text they split.
function rangesOf(pieces) {
  let at = 0;
  return pieces.map((piece) => ({ start: at, end: (at += piece.length) }));
}

// Added tokens with lstrip / rstrip take the whitespace beside them (the library's rule).
function stripAround(library, text, ranges) {
  ranges.forEach((range, i) => {
    const added = library.added_tokens_map.get(text.slice(range.start, range.end));
    if (!added) return;
    if (added.lstrip && i > 0) {
      const before = ranges[i - 1];
      while (before.end > before.start && /\s/.test(text[before.end - 1])) before.end--;
    }
    if (added.rstrip && i < ranges.length - 1) {
      const next = ranges[i + 1];
      while (next.start < next.end && /\s/.test(text[next.start])) next.start++;
    }
  });
}
