// A GGUF file's tokenizer (its tokenizer.ggml.* metadata) as a tokenizer.json, so it goes
// through the same tokenizer path (and token offsets) as every other model:
//   "llama"  SentencePiece BPE: tokens, scores, token_type; built as the transformers library
//            converts a Llama 2 SentencePiece model (llama2c-tokenizer.js' llamaTokenizerJson:
//            merges from the pieces and scores, byte fallback, the U+2581 prefix unless
//            add_space_prefix is false, BOS in front when add_bos_token says so)
//   "gpt2"   byte-level BPE: tokens, merges, and tokenizer.ggml.pre naming the pre-tokenizer
//            (llama.cpp's names: "default"/"gpt-2", "qwen2", "smollm", "llama-bpe" (Llama 3))
// token_type (llama.cpp's: 1 normal, 2 unknown, 3 control, 4 user defined, 5 unused, 6 byte):
// control and unknown tokens become special added tokens, user-defined ones added tokens.

import { attnlensError, describe } from '../../errors.js';
import { llamaTokenizerJson, mergesOf } from './llama2c-tokenizer.js';

const TYPE = { normal: 1, unknown: 2, control: 3, user: 4, unused: 5, byte: 6 };
// Longer pieces are no vocabulary's (Llama 2's longest is 16 bytes, Qwen2's 256), and merges are
// built from every split of a piece: the cap bounds that work.
const MAX_PIECE_CHARS = 1024;
// Qwen2's pattern (its tokenizer.json's Split), which llama.cpp's "qwen2" names.
const QWEN2_PATTERN =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}" +
  '| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';
// Llama 3's: Qwen2's with digits in runs of up to three.
const LLAMA3_PATTERN = QWEN2_PATTERN.replace('|\\p{N}|', '|\\p{N}{1,3}|');
const BYTE_LEVEL = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true };
// A Split by `pattern` before a ByteLevel that only maps bytes (Qwen2's and Llama 3's layout).
const splitThenBytes = (pattern) => ({
  type: 'Sequence',
  pretokenizers: [
    { type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false },
    { ...BYTE_LEVEL, trim_offsets: false, use_regex: false },
  ],
});
const PRE_TOKENIZERS = {
  default: { ...BYTE_LEVEL, use_regex: true },
  'gpt-2': { ...BYTE_LEVEL, use_regex: true },
  qwen2: splitThenBytes(QWEN2_PATTERN),
  'llama-bpe': splitThenBytes(LLAMA3_PATTERN),
  smollm: {
    type: 'Sequence',
    pretokenizers: [
      { type: 'Digits', individual_digits: true },
      { ...BYTE_LEVEL, use_regex: true },
    ],
  },
};

/** { json, config }: the tokenizer.json and tokenizer_config.json of a GGUF's metadata. */
export function ggufTokenizerFiles(meta, file, maxLength) {
  const fail = (detail) => attnlensError('invalid_argument', file, detail);
  const kind = meta.string('tokenizer.ggml.model');
  const tokens = meta.array('tokenizer.ggml.tokens');
  tokens.forEach((token, id) => {
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_PIECE_CHARS) {
      throw fail(`tokenizer.ggml.tokens[${id}] is not a piece of 1 to ${MAX_PIECE_CHARS} chars`);
    }
  });
  const types = meta.has('tokenizer.ggml.token_type')
    ? meta.array('tokenizer.ggml.token_type')
    : tokens.map(() => TYPE.normal);
  if (types.length !== tokens.length) {
    throw fail(`tokenizer.ggml.token_type has ${types.length} entries for ${tokens.length} tokens`);
  }
  const vocab = new Map();
  tokens.forEach((token, id) => {
    if (vocab.has(token))
      throw fail(`tokens ${vocab.get(token)} and ${id} are both ${describe(token)}`);
    vocab.set(token, id);
  });
  const tokenId = (key) => {
    if (!meta.has(key)) return null;
    const id = meta.get(key);
    if (!Number.isInteger(id) || id < 0 || id >= tokens.length) {
      throw fail(`${key} is ${describe(id)}, not a token id below ${tokens.length}`);
    }
    return id;
  };
  const bos = tokenId('tokenizer.ggml.bos_token_id');
  const eos = tokenId('tokenizer.ggml.eos_token_id');
  const unk = tokenId('tokenizer.ggml.unknown_token_id');
  const added = [];
  types.forEach((type, id) => {
    if (type === TYPE.control || type === TYPE.unknown || type === TYPE.user) {
      added.push({ id, content: tokens[id], special: type !== TYPE.user });
    }
  });
  const flag = (key, fallback) => {
    const value = meta.get(key, fallback);
    if (typeof value !== 'boolean') throw fail(`${key} must be a bool, got ${describe(value)}`);
    return value;
  };
  let json;
  if (kind === 'llama') {
    const scores = meta.array('tokenizer.ggml.scores');
    if (scores.length !== tokens.length || !scores.every(Number.isFinite)) {
      throw fail(`tokenizer.ggml.scores must hold one finite score per token (${tokens.length})`);
    }
    json = llamaTokenizerJson({
      added,
      vocab,
      merges: mergesOf(tokens, scores, vocab),
      bos:
        flag('tokenizer.ggml.add_bos_token', true) && bos !== null
          ? { id: bos, content: tokens[bos] }
          : null,
      unk: unk === null ? null : tokens[unk],
      addSpacePrefix: flag('tokenizer.ggml.add_space_prefix', true),
    });
  } else if (kind === 'gpt2') {
    json = byteLevelJson(meta, { tokens, vocab, added, fail });
  } else {
    throw fail(`tokenizer.ggml.model ${describe(kind)} is not supported (supported: llama, gpt2)`);
  }
  const name = (id) => (id === null ? null : tokens[id]);
  return {
    json,
    config: {
      bos_token: name(bos),
      eos_token: name(eos),
      unk_token: name(unk),
      add_bos_token: kind === 'llama' && bos !== null && flag('tokenizer.ggml.add_bos_token', true),
      add_eos_token: false,
      model_max_length: maxLength,
    },
  };
}

function byteLevelJson(meta, { tokens, vocab, added, fail }) {
  const pre = meta.has('tokenizer.ggml.pre') ? meta.string('tokenizer.ggml.pre') : 'default';
  if (!Object.hasOwn(PRE_TOKENIZERS, pre)) {
    throw fail(
      `tokenizer.ggml.pre ${describe(pre)} is not supported (supported: ` +
        `${Object.keys(PRE_TOKENIZERS).join(', ')})`,
    );
  }
  const merges = meta.array('tokenizer.ggml.merges').map((line, i) => {
    const parts = typeof line === 'string' ? line.split(' ') : [];
    if (parts.length !== 2 || !vocab.has(parts[0]) || !vocab.has(parts[1])) {
      throw fail(`tokenizer.ggml.merges[${i}] is not two tokens of the vocabulary`);
    }
    return parts;
  });
  const preTokenizer = PRE_TOKENIZERS[pre];
  const noRegex = { ...BYTE_LEVEL, trim_offsets: false, use_regex: false };
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
    normalizer: pre === 'qwen2' ? { type: 'NFC' } : null,
    pre_tokenizer: preTokenizer,
    post_processor: { ...noRegex },
    decoder: { ...BYTE_LEVEL, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      vocab: Object.fromEntries(tokens.map((token, id) => [token, id])),
      merges,
    },
  };
}
