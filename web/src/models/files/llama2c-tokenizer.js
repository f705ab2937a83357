// llama2.c's tokenizer file (tokenizer.bin, tok512.bin, ...: written by its tokenizer.py from a
// SentencePiece model) as the tokenizer.json of a Llama 2 tokenizer, so it goes through the same
// tokenizer path as every other model (tokenizer.js).
//
//   int32 max_token_length, then per token: float32 score, int32 length, `length` UTF-8 bytes
//
// The file does not say how many tokens it holds: the model's vocab_size does (run.c reads it
// that way). Pieces have ' ' where SentencePiece writes U+2581; ids 0, 1, 2 are unk, BOS
// ("\n<s>\n") and EOS ("\n</s>\n"); ids 3..258 are the byte pieces <0x00>..<0xFF>, which run.c's
// byte fallback assumes.
//
// The result is what the transformers library makes of a Llama 2 SentencePiece model: a BPE model
// with byte fallback whose merges come from the pieces and scores (every split of a piece into
// two pieces, the merges ordered by the merged piece's score, highest first), the legacy
// normalizer (prepend U+2581, spaces to U+2581), BOS added in front. run.c's encode() computes the
// same: BOS, the dummy-prefix space, characters (bytes where a character is not a piece), then the
// adjacent pair whose merged piece scores highest, merged until none is left.

import { attnlensError } from '../../errors.js';

const SPACE = '\u2581';
const BYTE_PIECES = 256;
const FIRST_BYTE_ID = 3;
const SPECIAL = [
  { id: 0, content: '<unk>', stored: ['<unk>'] },
  { id: 1, content: '<s>', stored: ['\n<s>\n', '<s>'] },
  { id: 2, content: '</s>', stored: ['\n</s>\n', '</s>'] },
];
// Pieces longer than this are not a SentencePiece vocabulary (Llama 2's longest is 16 bytes).
const MAX_PIECE_BYTES = 1024;

/**
 * The pieces and scores of a llama2.c tokenizer file holding `vocab` tokens, every length
 * checked against the bytes that are left.
 * @returns {{ pieces: string[], scores: Float32Array, maxTokenLength: number }}
 */
export function readLlama2cTokens(bytes, file, vocab) {
  const fail = (code, detail) => attnlensError(code, file, detail);
  // 4 bytes of max_token_length, then at least 8 bytes (score, length) per token.
  if (bytes.byteLength < 4 + 8 * vocab) {
    throw fail(
      'shape_mismatch',
      `is ${bytes.byteLength} bytes, too short for the model's ${vocab} tokens (at least ` +
        `${4 + 8 * vocab} bytes): is it the tokenizer this model was trained with?`,
    );
  }
  const data = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const maxTokenLength = data.getInt32(0, true);
  if (!(maxTokenLength >= 1 && maxTokenLength <= MAX_PIECE_BYTES)) {
    throw fail(
      'out_of_range',
      `max_token_length is ${maxTokenLength}, not 1 to ${MAX_PIECE_BYTES}`,
    );
  }
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const pieces = new Array(vocab);
  const scores = new Float32Array(vocab);
  let at = 4;
  for (let id = 0; id < vocab; id++) {
    if (at + 8 > bytes.byteLength) {
      throw fail('shape_mismatch', `ends at token ${id} of the model's ${vocab}`);
    }
    scores[id] = data.getFloat32(at, true);
    const length = data.getInt32(at + 4, true);
    at += 8;
    if (!Number.isFinite(scores[id])) {
      throw fail('non_finite', `token ${id} has the score ${scores[id]}`);
    }
    if (!(length >= 1 && length <= maxTokenLength)) {
      throw fail(
        'out_of_range',
        `token ${id} has length ${length}, not 1 to max_token_length (${maxTokenLength})`,
      );
    }
    if (at + length > bytes.byteLength) {
      throw fail(
        'shape_mismatch',
        `token ${id}'s ${length} bytes run past the end of the file (${bytes.byteLength} bytes)`,
      );
    }
    try {
      pieces[id] = decoder.decode(bytes.subarray(at, at + length));
    } catch {
      throw fail('invalid_argument', `token ${id} is not valid UTF-8`);
    }
    at += length;
  }
  if (at !== bytes.byteLength) {
    throw fail(
      'shape_mismatch',
      `holds ${bytes.byteLength - at} bytes after the model's ${vocab} tokens: it belongs to ` +
        'another vocabulary',
    );
  }
  return { pieces, scores, maxTokenLength };
}

/**
 * { json, config }: the tokenizer.json and tokenizer_config.json of a llama2.c tokenizer file
 * (`vocab` tokens, `maxLength` the model's seq_len).
 */
export function llama2cTokenizerFiles(bytes, file, vocab, maxLength) {
  const fail = (detail) => attnlensError('invalid_argument', file, detail);
  const { pieces, scores } = readLlama2cTokens(bytes, file, vocab);
  if (vocab < FIRST_BYTE_ID + BYTE_PIECES) {
    throw fail(
      `has ${vocab} tokens; a llama2.c vocabulary has at least unk, BOS, EOS and 256 bytes`,
    );
  }
  const names = pieces.map((piece) => piece.replaceAll(' ', SPACE));
  for (const { id, content, stored } of SPECIAL) {
    if (!stored.includes(pieces[id])) {
      throw fail(`token ${id} is ${JSON.stringify(pieces[id])}, not ${content}`);
    }
    names[id] = content;
  }
  for (let b = 0; b < BYTE_PIECES; b++) {
    const expected = `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;
    if (names[FIRST_BYTE_ID + b] !== expected) {
      throw fail(
        `token ${FIRST_BYTE_ID + b} is ${JSON.stringify(pieces[FIRST_BYTE_ID + b])}, not the ` +
          `byte piece ${expected} that byte fallback needs`,
      );
    }
  }
  const ids = new Map();
  names.forEach((name, id) => {
    if (ids.has(name)) {
      throw fail(`tokens ${ids.get(name)} and ${id} are both ${JSON.stringify(name)}`);
    }
    ids.set(name, id);
  });
  return {
    json: llamaTokenizerJson({
      added: SPECIAL.map(({ id, content }) => ({ id, content, special: true })),
      vocab: ids,
      merges: mergesOf(names, scores, ids),
      bos: { id: 1, content: '<s>' },
      unk: '<unk>',
    }),
    config: {
      tokenizer_class: 'LlamaTokenizer',
      bos_token: '<s>',
      eos_token: '</s>',
      unk_token: '<unk>',
      add_bos_token: true,
      add_eos_token: false,
      model_max_length: maxLength,
    },
  };
}

/**
 * The tokenizer.json of a Llama-2-style SentencePiece BPE (the transformers library's legacy
 * conversion): `vocab` a Map piece -> id, `merges` [[left, right]] (mergesOf), `added`
 * [{ id, content, special }], `bos` { id, content } put in front of every text or null,
 * `unk` the unknown piece or null, `addSpacePrefix` (default true) the U+2581 put in front.
 * GGUF's "llama" tokenizers (gguf-tokenizer.js) are built with it too.
 */
export function llamaTokenizerJson({ added, vocab, merges, bos, unk, addSpacePrefix = true }) {
  const spaces = { type: 'Replace', pattern: { String: ' ' }, content: SPACE };
  const single = [{ Sequence: { id: 'A', type_id: 0 } }];
  const pair = [{ Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }];
  if (bos) {
    single.unshift({ SpecialToken: { id: bos.content, type_id: 0 } });
    pair.splice(0, 0, { SpecialToken: { id: bos.content, type_id: 0 } });
    pair.splice(2, 0, { SpecialToken: { id: bos.content, type_id: 1 } });
  }
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added.map(({ id, content, special }) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special,
    })),
    normalizer: {
      type: 'Sequence',
      normalizers: addSpacePrefix ? [{ type: 'Prepend', prepend: SPACE }, spaces] : [spaces],
    },
    pre_tokenizer: null,
    post_processor: {
      type: 'TemplateProcessing',
      single,
      pair,
      special_tokens: bos
        ? { [bos.content]: { id: bos.content, ids: [bos.id], tokens: [bos.content] } }
        : {},
    },
    decoder: {
      type: 'Sequence',
      decoders: [
        { type: 'Replace', pattern: { String: SPACE }, content: ' ' },
        { type: 'ByteFallback' },
        { type: 'Fuse' },
        ...(addSpacePrefix ? [{ type: 'Strip', content: ' ', start: 1, stop: 0 }] : []),
      ],
    },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: unk,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: true,
      byte_fallback: true,
      ignore_merges: false,
      vocab: Object.fromEntries(vocab),
      merges,
    },
  };
}

// The transformers library's SentencePiece extractor (generate_merges): for every piece, each
// split into two pieces of the vocabulary (ordered by the ids of the left, then the right part),
// all merges then ordered by the merged piece's score, then the left part's length, then the
// right part's (in characters), each highest first, ties kept in that order (a stable sort). A
// BPE tokenizer ranks merges by their place in the list, so ties must fall as the library's do.
export function mergesOf(names, scores, ids) {
  const merges = [];
  names.forEach((piece, id) => {
    const chars = Array.from(piece);
    const local = [];
    for (let split = 1; split < chars.length; split++) {
      const left = chars.slice(0, split).join('');
      const right = chars.slice(split).join('');
      if (ids.has(left) && ids.has(right)) {
        local.push({
          left,
          right,
          l: ids.get(left),
          r: ids.get(right),
          score: scores[id],
          leftChars: split,
          rightChars: chars.length - split,
        });
      }
    }
    local.sort((a, b) => a.l - b.l || a.r - b.r);
    merges.push(...local);
  });
  merges.sort(
    (a, b) => b.score - a.score || b.leftChars - a.leftChars || b.rightChars - a.rightChars,
  );
  return merges.map(({ left, right }) => [left, right]);
}
