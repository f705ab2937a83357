// A trainer's vocabulary: what turns text into token ids, and the tokenizer.json that gives a
// saved model the same ids (models/tokenizer.js reads it back):
//   'bytes'                   the 256 UTF-8 byte values (byte-level BPE without merges)
//   { characters: text }      every distinct character (code point) of `text`, in code point
//                             order (a BPE model without merges)
//   { tokenizer }             a loaded model's tokenizer (attnlens/models): its own files

import { attnlensError } from '../errors.js';
import { byteLevelDecoder } from '../models/token-offsets.js';

/** The most tokens a vocabulary may have (the core's bound). */
export const MAX_VOCABULARY = 2 ** 20;

// A BPE model with no merges: every character of the vocabulary is one token.
function bpeModel(vocab) {
  return {
    type: 'BPE',
    dropout: null,
    unk_token: null,
    continuing_subword_prefix: null,
    end_of_word_suffix: null,
    fuse_unk: false,
    byte_fallback: false,
    ignore_merges: false,
    vocab,
    merges: [],
  };
}

function tokenizerJson(vocab, byteLevel) {
  const level = {
    type: 'ByteLevel',
    add_prefix_space: false,
    trim_offsets: false,
    use_regex: false,
  };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [],
    normalizer: null,
    pre_tokenizer: byteLevel ? level : null,
    post_processor: null,
    decoder: byteLevel ? level : { type: 'Fuse' },
    model: bpeModel(vocab),
  };
}

const notIn = (name, ch, at) =>
  attnlensError(
    'out_of_range',
    name,
    `${JSON.stringify(ch)} at ${at} is not in the vocabulary (the characters it was made from)`,
  );

class CharacterVocabulary {
  constructor(text) {
    const characters = [...new Set(Array.from(text))].sort(
      (a, b) => a.codePointAt(0) - b.codePointAt(0),
    );
    if (characters.length === 0) {
      throw attnlensError('out_of_range', 'vocabulary.characters', 'has no characters');
    }
    if (characters.length > MAX_VOCABULARY) {
      throw attnlensError(
        'out_of_range',
        'vocabulary.characters',
        `has ${characters.length} distinct characters, more than ${MAX_VOCABULARY}`,
      );
    }
    this.kind = 'characters';
    this.characters = characters;
    this.size = characters.length;
    this.ids = new Map(characters.map((ch, id) => [ch, id]));
  }

  encode(text, name) {
    const ids = [];
    const tokens = [];
    let at = 0;
    for (const ch of text) {
      const id = this.ids.get(ch);
      if (id === undefined) throw notIn(name, ch, at);
      ids.push(id);
      tokens.push({ id, text: ch, start: at, end: at + ch.length });
      at += ch.length;
    }
    return { ids: Int32Array.from(ids), tokens };
  }

  tokenText(id) {
    return this.characters[id];
  }

  files() {
    const vocab = Object.fromEntries(this.characters.map((ch, id) => [ch, id]));
    return { 'tokenizer.json': tokenizerJson(vocab, false) };
  }
}

const BYTE_NAMES = Array.from({ length: 256 }, (_, b) =>
  b >= 0x20 && b < 0x7f
    ? String.fromCharCode(b)
    : `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`,
);

class ByteVocabulary {
  constructor() {
    this.kind = 'bytes';
    this.size = 256;
  }

  encode(text) {
    const encoder = new TextEncoder();
    const ids = [];
    const tokens = [];
    let at = 0;
    for (const ch of text) {
      for (const byte of encoder.encode(ch)) {
        ids.push(byte);
        tokens.push({ id: byte, text: BYTE_NAMES[byte], start: at, end: at + ch.length });
      }
      at += ch.length;
    }
    return { ids: Int32Array.from(ids), tokens };
  }

  tokenText(id) {
    return BYTE_NAMES[id];
  }

  files() {
    const vocab = {};
    for (const [ch, byte] of byteLevelDecoder()) vocab[ch] = byte;
    return { 'tokenizer.json': tokenizerJson(vocab, true) };
  }
}

class TokenizerVocabulary {
  constructor(tokenizer, files) {
    this.kind = 'tokenizer';
    this.tokenizer = tokenizer;
    this.size = tokenizer.vocabSize;
    this.sourceFiles = files;
  }

  encode(text) {
    const { ids, tokens } = this.tokenizer.encode(text, { addSpecialTokens: false });
    return {
      ids: Int32Array.from(ids),
      tokens: tokens.map(({ id, text: token, start, end }) => ({ id, text: token, start, end })),
    };
  }

  tokenText(id) {
    return this.tokenizer.idToToken(id);
  }

  files() {
    const { json, config } = this.sourceFiles;
    return config === null
      ? { 'tokenizer.json': json }
      : { 'tokenizer.json': json, 'tokenizer_config.json': config };
  }
}

/**
 * The vocabulary of a checked spec: { kind: 'bytes' } | { kind: 'characters', text } |
 * { kind: 'tokenizer', files: { json, config } }.
 */
export async function createVocabulary(spec) {
  if (spec.kind === 'bytes') return new ByteVocabulary();
  if (spec.kind === 'characters') return new CharacterVocabulary(spec.text);
  // Imported only here: it needs @huggingface/tokenizers, a bare specifier that a worker run
  // from the package's files (no bundler, no import map in workers) cannot resolve.
  const { createTokenizer } = await import('../models/tokenizer.js');
  const tokenizer = await createTokenizer(spec.files);
  if (tokenizer.vocabSize > MAX_VOCABULARY) {
    throw attnlensError(
      'out_of_range',
      'vocabulary.tokenizer',
      `has ${tokenizer.vocabSize} tokens, more than ${MAX_VOCABULARY}`,
    );
  }
  return new TokenizerVocabulary(tokenizer, spec.files);
}
