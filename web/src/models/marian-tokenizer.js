// Marian's tokenizer (Helsinki-NLP/opus-mt-*): two SentencePiece Unigram models, source.spm and
// target.spm, whose pieces are mapped to ids through vocab.json (one id space the model's
// embeddings use; the SentencePiece ids are not the model's). The semantics are the transformers
// library's MarianTokenizer:
//   - a leading language code '>>xx<<' (multi-target models) is one token, taken off the text
//     before SentencePiece sees it (up to the first '<<');
//   - pieces missing from vocab.json become <unk>; '</s>' is appended;
//   - the target side uses target.spm, and target_vocab.json when tokenizer_config.json says
//     `separate_vocabs`;
//   - decoding maps ids back through the vocabulary, special tokens written between the pieces
//     SentencePiece decodes, '▁' as spaces, the ends stripped.
// Decided: a piece missing from the vocabulary is <unk> (the library's long-standing behaviour;
// its newest version falls back to the SentencePiece id, which indexes a different id space).
// SentencePiece runs through tokenizer.js (sentencepiece-unigram.js), so every token keeps its
// span in the text, language code included.

import { attnlensError, describe } from '../errors.js';
import { optional, optionsObject } from './files/options.js';
import { readSentencePieceModel } from './files/sentencepiece.js';
import { unigramTokenizerJson } from './sentencepiece-unigram.js';
import { createTokenizer } from './tokenizer.js';

const SPACE = '\u2581';
const UNKNOWN_SURFACE = ' \u2047 ';
// Far above a real vocabulary (opus-mt: 65,001) and below what an id can index in the core.
const MAX_VOCAB = 1 << 20;
const FILES = ['sourceSpm', 'targetSpm', 'vocab', 'targetVocab', 'config'];

/**
 * @param {{ sourceSpm: Uint8Array, targetSpm: Uint8Array, vocab: object,
 *   targetVocab?: object | null, config?: object | null }} files the bytes of source.spm and
 *   target.spm, vocab.json (and target_vocab.json) and tokenizer_config.json parsed
 */
export async function createMarianTokenizer(files) {
  const checked = optionsObject(files, FILES, 'tokenizer');
  const config = checked.config ?? {};
  if (typeof config !== 'object' || Array.isArray(config)) {
    throw attnlensError('invalid_argument', 'tokenizer_config.json', 'must be a JSON object');
  }
  const separate = config.separate_vocabs === true;
  const names = {
    unk: tokenName(config.unk_token, '<unk>'),
    eos: tokenName(config.eos_token, '</s>'),
    pad: tokenName(config.pad_token, '<pad>'),
  };
  const vocab = readVocab(checked.vocab, 'vocab.json');
  const targetVocab = separate ? readVocab(checked.targetVocab, 'target_vocab.json') : vocab;
  for (const [role, name] of Object.entries(names)) {
    if (!vocab.ids.has(name)) {
      throw attnlensError('invalid_argument', 'vocab.json', `has no ${role} token ${name}`);
    }
  }
  const sides = {};
  for (const [side, bytes, file] of [
    ['source', checked.sourceSpm, 'source.spm'],
    ['target', checked.targetSpm, 'target.spm'],
  ]) {
    const model = readSentencePieceModel(bytes, file);
    const tokenizer = await createTokenizer({ json: unigramTokenizerJson(model, file) });
    sides[side] = { model, tokenizer, types: new Map(model.pieces.map((p) => [p.piece, p.type])) };
  }
  return new MarianTokenizer(sides, vocab, targetVocab, names, config, separate);
}

class MarianTokenizer {
  #sides;
  #vocab;
  #targetVocab;
  #special;
  #cleanUp;

  constructor(sides, vocab, targetVocab, names, config, separate) {
    this.#sides = sides;
    this.#vocab = vocab;
    this.#targetVocab = targetVocab;
    this.separateVocabs = separate;
    this.special = {};
    for (const [role, text] of Object.entries(names)) {
      this.special[role] = { id: vocab.ids.get(text), text };
    }
    // The tokens decoding writes as themselves (the library's all_special_tokens).
    this.#special = new Set(Object.values(names));
    this.#cleanUp = config.clean_up_tokenization_spaces === true;
    this.vocabSize = vocab.size;
    // One past the largest id either vocabulary maps to: the model's vocabulary must reach it.
    this.idLimit = Math.max(vocab.idLimit, targetVocab.idLimit);
    const maxLength = config.model_max_length;
    this.maxLength = Number.isSafeInteger(maxLength) && maxLength > 0 ? maxLength : 512;
    // Multi-target models name their target languages in the vocabulary.
    this.languageCodes = separate
      ? []
      : [...vocab.ids.keys()].filter((t) => t.startsWith('>>') && t.endsWith('<<'));
  }

  /** The source text as the encoder's input ids, '</s>' last, with each token's span. */
  encode(text, options) {
    return this.#encode(text, options, this.#sides.source, this.#vocab);
  }

  /** A target text as the decoder's labels (target.spm, the target vocabulary), '</s>' last. */
  encodeTarget(text, options) {
    return this.#encode(text, options, this.#sides.target, this.#targetVocab);
  }

  #encode(text, options, side, vocab) {
    if (typeof text !== 'string') {
      throw attnlensError('invalid_argument', 'text', `must be a string, got ${describe(text)}`);
    }
    const { addSpecialTokens = true } = optionsObject(options, ['addSpecialTokens']);
    optional(addSpecialTokens, 'addSpecialTokens', 'boolean');
    const tokens = [];
    const unk = vocab.ids.get(this.special.unk.text);
    const token = (piece, start, end) => {
      const id = vocab.ids.get(piece) ?? unk;
      const special = this.#special.has(piece) && id !== unk;
      tokens.push({ id, text: piece, start, end, special, segment: 0 });
    };
    let offset = 0;
    const end = text.startsWith('>>') ? text.indexOf('<<') : -1;
    if (end >= 0) {
      offset = end + 2;
      token(text.slice(0, offset), 0, offset);
    }
    for (const piece of side.tokenizer.encode(text.slice(offset)).tokens) {
      token(piece.text, piece.start + offset, piece.end + offset);
    }
    if (addSpecialTokens) {
      const { id, text: eos } = this.special.eos;
      tokens.push({
        id,
        text: eos,
        start: text.length,
        end: text.length,
        special: true,
        segment: 0,
      });
    }
    return { ids: tokens.map((t) => t.id), typeIds: tokens.map(() => 0), tokens };
  }

  /**
   * The text of target ids (as the library's decode: target.spm, special tokens written as
   * themselves unless skipped, the ends stripped).
   */
  decode(ids, { skipSpecialTokens = false } = {}) {
    const list = this.#checkIds(ids);
    const pieces = list
      .filter((id) => !(skipSpecialTokens && this.#isSpecialId(id)))
      .map((id) => this.#targetVocab.tokens.get(id) ?? this.special.unk.text);
    let out = '';
    let run = [];
    for (const piece of pieces) {
      if (this.#special.has(piece)) {
        out += this.#decodePieces(run) + piece + ' ';
        run = [];
      } else {
        run.push(piece);
      }
    }
    out = (out + this.#decodePieces(run)).replaceAll(SPACE, ' ').trim();
    return this.#cleanUp ? cleanUpSpaces(out) : out;
  }

  /** What target token `id` adds to the decoded text of `ids` (skipping special tokens). */
  appendedText(ids, id) {
    const before = this.decode(ids, { skipSpecialTokens: true });
    const after = this.decode([...this.#checkIds(ids), id], { skipSpecialTokens: true });
    return after.startsWith(before)
      ? { text: after.slice(before.length), partial: false }
      : { text: this.decode([id], { skipSpecialTokens: true }), partial: false };
  }

  idToToken(id) {
    this.#checkIds([id]);
    return this.#targetVocab.tokens.get(id) ?? this.special.unk.text;
  }

  tokenToId(token) {
    if (typeof token !== 'string') {
      throw attnlensError('invalid_argument', 'token', `must be a string, got ${describe(token)}`);
    }
    return this.#vocab.ids.get(token);
  }

  #isSpecialId(id) {
    return Object.values(this.special).some((s) => s.id === id);
  }

  // SentencePiece's decode of pieces (target.spm): control pieces vanish, its unknown piece is
  // ' ⁇ ', a piece it does not know stays as written, '▁' is a space except before the first
  // text, which starts without one.
  #decodePieces(pieces) {
    const { types } = this.#sides.target;
    const dropLeadingSpace = this.#sides.target.model.normalizer.addDummyPrefix;
    let out = '';
    let atStart = true;
    for (const piece of pieces) {
      const type = types.get(piece);
      if (type === 'control') continue;
      let text;
      if (type === undefined) text = piece;
      else if (type === 'unknown') text = UNKNOWN_SURFACE;
      else {
        text = piece.replaceAll(SPACE, ' ');
        if (atStart && dropLeadingSpace) text = text.replace(/^ +/, '');
      }
      if (text) atStart = false;
      out += text;
    }
    return out;
  }

  #checkIds(ids) {
    if (!Array.isArray(ids) && !ArrayBuffer.isView(ids)) {
      throw attnlensError(
        'invalid_argument',
        'ids',
        `must be an array of ids, got ${describe(ids)}`,
      );
    }
    const list = Array.from(ids);
    list.forEach((id, i) => {
      if (!Number.isInteger(id) || id < 0 || id >= this.#targetVocab.idLimit) {
        throw attnlensError(
          'out_of_range',
          `ids[${i}]`,
          `must be a token id between 0 and ${this.#targetVocab.idLimit - 1}, got ${describe(id)}`,
        );
      }
    });
    return list;
  }
}

// A tokenizer_config.json token: a string, an AddedToken object ({ content }), or the default.
function tokenName(value, fallback) {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof value.content === 'string') return value.content;
  return fallback;
}

// vocab.json: { piece: id }, ids non-negative integers; the reverse map keeps the last piece
// of an id, as the library's dict comprehension does.
function readVocab(value, file) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw attnlensError('invalid_argument', file, `must be a JSON object, got ${describe(value)}`);
  }
  const entries = Object.entries(value);
  if (entries.length === 0 || entries.length > MAX_VOCAB) {
    throw attnlensError(
      'out_of_range',
      file,
      `has ${entries.length} entries, not 1 to ${MAX_VOCAB}`,
    );
  }
  const ids = new Map();
  const tokens = new Map();
  let idLimit = 0;
  for (const [piece, id] of entries) {
    if (!Number.isInteger(id) || id < 0 || id >= MAX_VOCAB) {
      throw attnlensError(
        'out_of_range',
        file,
        `maps ${JSON.stringify(piece)} to ${describe(id)}, not an id from 0 to ${MAX_VOCAB - 1}`,
      );
    }
    ids.set(piece, id);
    tokens.set(id, piece);
    idLimit = Math.max(idLimit, id + 1);
  }
  return { ids, tokens, size: entries.length, idLimit };
}

// clean_up_tokenization_spaces, as the library applies it.
function cleanUpSpaces(text) {
  return text
    .replaceAll(' .', '.')
    .replaceAll(' ?', '?')
    .replaceAll(' !', '!')
    .replaceAll(' ,', ',')
    .replaceAll(" ' ", "'")
    .replaceAll(" n't", "n't")
    .replaceAll(" 'm", "'m")
    .replaceAll(" 's", "'s")
    .replaceAll(" 've", "'ve")
    .replaceAll(" 're", "'re");
}
