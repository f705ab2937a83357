// Token offsets the tokenizer library does not give: where each token of an encoding came from
// in the original text, as UTF-16 [start, end).
//
// 1. normalizeWithMap: the text through the tokenizer's normalizer one character at a time, so
//    each UTF-8 byte of the normalized text knows the original characters behind it. Where the
//    normalizer is not character by character (composition, a pattern spanning characters), the
//    whole word is normalized at once and its bytes all map to that word: coarser, never wrong.
// 2. createSurface: each token string back to the bytes of normalized text it stands for
//    (byte-level BPE through GPT-2's byte map, '##' and end-of-word marks removed, the Metaspace
//    mark as a space, <0xNN> byte tokens as their byte); null for the unknown token.
// 3. alignTokens: finds the tokens' bytes in order, skipping whitespace the pre-tokenizer dropped
//    and a prefix space it added. An unknown token spans what lies between its neighbours.
//    Special tokens typed in the text are found in the original text itself.
// A character split across tokens (an emoji in byte-level BPE) belongs to each of them.

const encoder = new TextEncoder();

/** @returns {{ bytes: Uint8Array, starts: Int32Array, ends: Int32Array }} */
export function normalizeWithMap(text, normalizer) {
  const bytes = [];
  const starts = [];
  const ends = [];
  const push = (normalized, start, end) => {
    for (const byte of encoder.encode(normalized)) {
      bytes.push(byte);
      starts.push(start);
      ends.push(end);
    }
  };
  for (const match of text.matchAll(/\s+|\S+/gu)) {
    const word = match[0];
    const at = match.index;
    if (!normalizer) {
      let i = at;
      for (const ch of word) {
        push(ch, i, i + ch.length);
        i += ch.length;
      }
      continue;
    }
    const pieces = [];
    let joined = '';
    let i = at;
    for (const ch of word) {
      const normalized = normalizer(ch);
      pieces.push([normalized, i, i + ch.length]);
      joined += normalized;
      i += ch.length;
    }
    const whole = normalizer(word);
    if (joined === whole) pieces.forEach((piece) => push(...piece));
    else push(whole, at, at + word.length);
  }
  return {
    bytes: Uint8Array.from(bytes),
    starts: Int32Array.from(starts),
    ends: Int32Array.from(ends),
  };
}

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
  return [part, ...nested.flatMap(components)];
}

/** Whether the post-processor trims whitespace off offsets (RoBERTa's, some ByteLevel ones). */
export function trimsOffsets(json) {
  return components(json.post_processor).some((part) => part.trim_offsets === true);
}

/** A function from a token string to the bytes of normalized text it stands for (or null). */
export function createSurface(json) {
  const model = json.model ?? {};
  const parts = [...components(json.pre_tokenizer), ...components(json.decoder)];
  const byteLevel = parts.some((p) => p.type === 'ByteLevel') ? byteLevelDecoder() : null;
  const metaspace = parts.find((p) => p.type === 'Metaspace');
  const prefix = model.continuing_subword_prefix || (model.type === 'WordPiece' ? '##' : '');
  const suffix = model.end_of_word_suffix || '';
  const unknown = model.unk_token ?? null;
  return (token) => {
    if (token === unknown) return null;
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
    const byte = model.byte_fallback && /^<0x([0-9A-Fa-f]{2})>$/.exec(token);
    if (byte) return Uint8Array.of(parseInt(byte[1], 16));
    let text = token;
    if (prefix && text.startsWith(prefix) && text.length > prefix.length)
      text = text.slice(prefix.length);
    if (suffix && text.endsWith(suffix)) text = text.slice(0, -suffix.length);
    if (metaspace) text = text.replaceAll(metaspace.replacement ?? '\u2581', ' ');
    return encoder.encode(text);
  };
}

const isSpaceByte = (b) => b === 0x20 || (b >= 0x09 && b <= 0x0d);

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

// Where `needle` continues the normalized bytes at `pos`: [from, to) or null.
function locate(bytes, pos, needle, searchAhead) {
  if (equalAt(bytes, pos, needle)) return [pos, pos + needle.length];
  let after = pos;
  while (after < bytes.length && isSpaceByte(bytes[after])) after++;
  if (equalAt(bytes, after, needle)) return [after, after + needle.length];
  // A space the pre-tokenizer put in front of the first word (add_prefix_space) is in no text.
  if (needle[0] === 0x20 && equalAt(bytes, after, needle.subarray(1))) {
    return [after, after + needle.length - 1];
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

// The words of text[start, end) as pre-tokenizers split them: punctuation and symbols one
// character each, other runs between whitespace whole. Several unknown tokens in a row get one
// word each when the counts agree.
function wordsIn(text, { start, end }) {
  const words = [];
  for (const match of text.slice(start, end).matchAll(/[\p{P}\p{S}]|[^\s\p{P}\p{S}]+/gu)) {
    words.push({ start: start + match.index, end: start + match.index + match[0].length });
  }
  return words;
}

/**
 * Spans of `tokens` (strings, with their `ids`) of one text.
 * @param {string} text the original text
 * @param {{ normalized, surface, added: Map<number, { content: string }>, trim?: boolean }} context
 */
export function alignTokens(text, ids, tokens, { normalized, surface, added, trim = false }) {
  const { bytes, starts, ends } = normalized;
  const spans = new Array(tokens.length);
  let pos = 0; // next byte of the normalized text
  let cursor = 0; // next UTF-16 unit of the original text
  let pending = []; // tokens with no known text, waiting for the next token that has one
  let lost = false; // alignment failed: the rest of the tokens span the rest of the text
  const settle = (until) => {
    const gap = trimmed(text, cursor, Math.max(cursor, until));
    const words = pending.length > 1 ? wordsIn(text, gap) : null;
    pending.forEach((k, n) => (spans[k] = words?.length === pending.length ? words[n] : gap));
    pending = [];
  };
  for (let i = 0; i < tokens.length; i++) {
    if (lost) {
      spans[i] = { start: cursor, end: text.length };
      continue;
    }
    const addedToken = added.get(ids[i]);
    if (addedToken && addedToken.content === tokens[i]) {
      const at = text.indexOf(addedToken.content, cursor);
      if (at >= 0) {
        settle(at);
        spans[i] = { start: at, end: at + addedToken.content.length };
        cursor = at + addedToken.content.length;
        while (pos < bytes.length && starts[pos] < cursor) pos++;
        continue;
      }
    }
    // The unknown token has no text of its own (surface() is null for it), added or not.
    const own = surface(tokens[i]);
    const needle = addedToken && own !== null ? encoder.encode(addedToken.content) : own;
    if (needle === null) {
      pending.push(i);
      continue;
    }
    const match = needle.length ? locate(bytes, pos, needle, pending.length > 0) : [pos, pos];
    if (!match) {
      lost = true;
      settle(text.length);
      spans[i] = { start: cursor, end: text.length };
      continue;
    }
    const [from, to] = match;
    const start = from < to ? starts[from] : from < bytes.length ? starts[from] : text.length;
    settle(start);
    const end = from < to ? ends[to - 1] : start;
    spans[i] = trim ? trimmed(text, start, end) : { start, end };
    pos = to;
    cursor = Math.max(cursor, end);
  }
  settle(text.length);
  return spans;
}
