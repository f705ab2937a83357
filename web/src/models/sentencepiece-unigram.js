// A SentencePiece Unigram model (files/sentencepiece.js) as a tokenizer.json that tokenizer.js
// runs, so Marian's source.spm / target.spm get the same encoder, offsets and checks as every
// other model's tokenizer.
//
// The pipeline is SentencePiece's own, step by step (normalizer.cc, unigram_model.cc):
//   Precompiled (the file's precompiled_charsmap, e.g. nmt_nfkc)
//   Strip both ends + Replace " {2,}" -> " "   (remove_extra_whitespaces)
//   Metaspace, no split                        (escape_whitespaces: ' ' -> '▁'; add_dummy_prefix)
//   Unigram over the whole text                (SentencePiece runs one lattice per sentence)
// SentencePiece never matches the unknown, control and unused pieces against text ('</s>' typed
// in a sentence is '</', 's', '>'): here their texts start with a space, which no text reaches
// the model with (Metaspace has made every space '▁'), so they keep their ids and can never be
// matched. Byte pieces keep their texts, which byte fallback looks them up by. Runs of unknown
// characters fuse into one unknown piece, as SentencePiece does.

import { attnlensError } from '../errors.js';

const SPACE = '\u2581';
const UNMATCHED_TYPES = new Set(['unknown', 'control', 'unused']);
// A prefix no model text has (see above).
export const UNMATCHED_PREFIX = ' ';

/**
 * @param {ReturnType<import('./files/sentencepiece.js').readSentencePieceModel>} model
 * @param {string} file its name, for errors
 * @returns {object} a tokenizer.json (no post-processor: the caller adds its special tokens)
 */
export function unigramTokenizerJson(model, file) {
  const refuse = (detail) => attnlensError('invalid_argument', file, detail);
  if (model.modelType !== 'unigram') {
    throw refuse(`is a SentencePiece ${model.modelType} model; only Unigram models are read`);
  }
  if (model.treatWhitespaceAsSuffix || !model.normalizer.escapeWhitespaces) {
    throw refuse(
      'puts whitespace after pieces or keeps it unescaped, which this reader does not support',
    );
  }
  const userDefined = model.pieces.findIndex((p) => p.type === 'userDefined');
  if (userDefined >= 0) {
    throw refuse(
      `has user-defined pieces (${JSON.stringify(model.pieces[userDefined].piece)}), ` +
        'which this reader does not support',
    );
  }
  const seen = new Set();
  const vocab = model.pieces.map(({ piece, score, type }, id) => {
    if (seen.has(piece)) throw refuse(`has the piece ${JSON.stringify(piece)} twice (id ${id})`);
    seen.add(piece);
    return [UNMATCHED_TYPES.has(type) ? UNMATCHED_PREFIX + piece : piece, score];
  });
  const { precompiledCharsmap, removeExtraWhitespaces, addDummyPrefix } = model.normalizer;
  const normalizers = [];
  if (precompiledCharsmap.byteLength > 0) {
    normalizers.push({ type: 'Precompiled', precompiled_charsmap: base64(precompiledCharsmap) });
  }
  if (removeExtraWhitespaces) {
    normalizers.push(
      { type: 'Strip', strip_left: true, strip_right: true },
      { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' },
    );
  }
  const metaspace = {
    type: 'Metaspace',
    replacement: SPACE,
    prepend_scheme: addDummyPrefix ? 'always' : 'never',
    split: false,
  };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [],
    normalizer: normalizers.length ? { type: 'Sequence', normalizers } : null,
    pre_tokenizer: metaspace,
    post_processor: null,
    decoder: metaspace,
    model: { type: 'Unigram', unk_id: model.unkId, vocab, byte_fallback: model.byteFallback },
  };
}

function base64(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}
