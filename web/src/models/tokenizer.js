// createTokenizer({ json, config }): a model's own tokenizer (tokenizer.json +
// tokenizer_config.json) through @huggingface/tokenizers, Hugging Face's JavaScript
// implementation, with what a view of attention needs on top: each token's UTF-16 span in the
// text it came from, and which tokens are special.
//
// The library returns ids and token strings but no offsets, so its encoding is replayed with an
// alignment kept beside the text (token-offsets.js): the tokenizer.json's own normalizer and
// pre-tokenizer components run over the whole text, each output character knowing the original
// characters it came from, and each token's bytes are found in order in that text.

import { Tokenizer } from '@huggingface/tokenizers';
import { attnlensError, describe } from '../errors.js';
import { optional, optionsObject } from './files/options.js';
import { checkTokenizerPatterns } from './tokenizer-patterns.js';
import { createSurface, encodeWithSpans, tokenBytes, trimsOffsets } from './token-offsets.js';

const SPECIAL_ROLES = ['mask', 'cls', 'sep', 'pad', 'bos', 'eos', 'unk'];
// Where tokenizer_config.json says nothing: the names these tokens have in common vocabularies.
const USUAL_TEXT = {
  mask: ['[MASK]', '<mask>'],
  cls: ['[CLS]', '<s>'],
  sep: ['[SEP]', '</s>'],
  pad: ['[PAD]', '<pad>'],
  bos: ['<|endoftext|>', '<s>'],
  eos: ['<|endoftext|>', '</s>'],
  unk: ['[UNK]', '<unk>', '<|endoftext|>'],
};
const ENCODE_OPTIONS = ['pair', 'addSpecialTokens'];

/**
 * @param {{ json: object, config?: object | null }} files tokenizer.json and tokenizer_config.json
 *   as parsed objects (loadModelFiles' `files.tokenizer`)
 */
export async function createTokenizer(files) {
  if (files === null || typeof files !== 'object' || Array.isArray(files)) {
    throw attnlensError(
      'invalid_argument',
      'tokenizer',
      `expected { json, config }, got ${describe(files)}`,
    );
  }
  // Own properties, read once, no others (argument-checks.js): loadModelFiles' `tokenizer`.
  const { json, config = null } = optionsObject(files, ['json', 'config'], 'tokenizer');
  for (const [name, value, optional] of [
    ['tokenizer.json', json, false],
    ['tokenizer_config.json', config, true],
  ]) {
    if (
      (optional && value === null) ||
      (value && typeof value === 'object' && !Array.isArray(value))
    ) {
      continue;
    }
    throw attnlensError('invalid_argument', name, `must be a JSON object, got ${describe(value)}`);
  }
  if (!json.model || typeof json.model !== 'object') {
    throw attnlensError('invalid_argument', 'tokenizer.json', 'has no "model" object');
  }
  checkTokenizerPatterns(json);
  let library;
  try {
    // The pipeline parts a file may leave out are null (none), as the Rust library reads them.
    const parts = { normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null };
    library = new Tokenizer({ ...parts, added_tokens: [], ...json }, config ?? {});
  } catch (error) {
    throw attnlensError(
      'invalid_argument',
      'tokenizer.json',
      `is not a tokenizer this library reads (${error.message})`,
    );
  }
  return new ModelTokenizer(library, json, config ?? {}, { json, config });
}

class ModelTokenizer {
  #library;
  #surface;
  #json;
  #addedById;
  #specialIds;
  #trim;

  #files;

  constructor(library, json, config, files) {
    this.#library = library;
    this.#files = files;
    this.#json = json;
    this.#surface = createSurface(json);
    this.#trim = trimsOffsets(json);
    this.#addedById = new Map();
    this.#specialIds = new Set();
    for (const token of library.get_added_tokens_decoder().values()) {
      this.#addedById.set(token.id, token);
      // The unknown token stands for text that is there, so it is not marked special.
      if (token.special && token.content !== unknownToken(json.model)) {
        this.#specialIds.add(token.id);
      }
    }
    this.vocabSize = library.model.vocab.length;
    this.special = findSpecialTokens(library, config);
    for (const [role, { id }] of Object.entries(this.special)) {
      if (role !== 'unk') this.#specialIds.add(id);
    }
    const maxLength = config.model_max_length;
    // Configs without a limit carry a huge sentinel (1e30): that means "none stated".
    this.maxLength = Number.isSafeInteger(maxLength) && maxLength > 0 ? maxLength : null;
  }

  /** The files it was made from, { json, config } (attnlens/train trains in this vocabulary). */
  get files() {
    return this.#files;
  }

  /**
   * @returns {{ ids: number[], typeIds: number[],
   *   tokens: { id, text, start, end, special, segment }[] }}
   */
  encode(text, options) {
    const { pair = null, addSpecialTokens = true } = checkEncode(text, options);
    const library = this.#library;
    const full = library.encode(text, {
      text_pair: pair,
      add_special_tokens: addSpecialTokens,
      return_token_type_ids: true,
    });
    const segments = [text, pair].filter((s) => s !== null);
    const content = segments.map((segment) =>
      encodeWithSpans(library, this.#json, segment, { surface: this.#surface, trim: this.#trim }),
    );

    // The full encoding is the content of each segment with the template's tokens around it:
    // walk it, taking content tokens in order and marking the rest as the template's.
    const tokens = [];
    const typeIds = [];
    let segment = 0;
    let next = 0;
    const seen = [false, false];
    full.tokens.forEach((token, i) => {
      while (segment < content.length - 1 && next >= content[segment].length) {
        segment++;
        next = 0;
      }
      const candidate = content[segment]?.[next];
      const id = full.ids[i];
      if (candidate && candidate.token === token && candidate.id === id) {
        next++;
        seen[segment] = true;
        tokens.push({
          id,
          text: token,
          start: candidate.start,
          end: candidate.end,
          special: this.#specialIds.has(id),
          segment,
        });
        typeIds.push(full.token_type_ids?.[i] ?? segment);
      } else {
        const own = full.token_type_ids?.[i] ?? segment;
        const at = Math.min(own, segments.length - 1);
        const position = seen[at] ? segments[at].length : 0;
        tokens.push({
          id,
          text: token,
          start: position,
          end: position,
          special: true,
          segment: at,
        });
        typeIds.push(own);
      }
    });
    return { ids: [...full.ids], typeIds, tokens };
  }

  decode(ids, { skipSpecialTokens = false } = {}) {
    const list = this.#checkIds(ids);
    if (list.length === 0) return '';
    return this.#library.decode(list, { skip_special_tokens: skipSpecialTokens });
  }

  /**
   * What token `id` adds to the text of `ids` when appended: decode(ids + [id]) less decode(ids)
   * (' upon' for '▁upon' or 'Ġupon', 'ing' for '##ing'; '' for a special token), decoded without
   * special tokens and without clean_up_tokenization_spaces. A piece that
   * ends inside a character (a byte-fallback <0xE4>, a byte-level byte of an emoji) adds what
   * the decoder writes for it, U+FFFD, and is marked `partial`.
   * @returns {{ text: string, partial: boolean }}
   */
  appendedText(ids, id) {
    const list = this.#checkIds(ids);
    this.#checkId(id, 'id');
    if (this.#specialIds.has(id)) return { text: '', partial: false };
    const bytes = tokenBytes(this.#surface, this.#library.id_to_token(id) ?? '');
    const partial = bytes !== null && !isWholeUtf8(bytes);
    // Decoders treat only the start of a text specially (Strip, Metaspace's prefix), so the
    // last few ids are enough, from one that begins a character.
    let from = Math.max(0, list.length - CONTEXT_WINDOW);
    while (from < list.length && this.#continuesCharacter(list[from])) from++;
    const context = list.slice(from);
    // Without clean_up_tokenization_spaces: it rewrites text already there ('end !' -> 'end!').
    const options = { skip_special_tokens: true, clean_up_tokenization_spaces: false };
    const before = context.length ? this.#library.decode(context, options) : '';
    const after = this.#library.decode([...context, id], options);
    if (after.startsWith(before)) return { text: after.slice(before.length), partial };
    return { text: this.#library.decode([id], options), partial };
  }

  // Whether a token's first byte is the middle of a UTF-8 character.
  #continuesCharacter(id) {
    const bytes = tokenBytes(this.#surface, this.#library.id_to_token(id) ?? '');
    return bytes !== null && bytes.length > 0 && (bytes[0] & 0xc0) === 0x80;
  }

  idToToken(id) {
    this.#checkId(id, 'id');
    return this.#library.id_to_token(id);
  }

  tokenToId(token) {
    if (typeof token !== 'string') {
      throw attnlensError('invalid_argument', 'token', `must be a string, got ${describe(token)}`);
    }
    return this.#library.token_to_id(token);
  }

  #checkIds(ids) {
    if (!Array.isArray(ids) && !ArrayBuffer.isView(ids)) {
      throw attnlensError(
        'invalid_argument',
        'ids',
        `must be an array of token ids, got ${describe(ids)}`,
      );
    }
    const list = Array.from(ids);
    list.forEach((id, i) => this.#checkId(id, `ids[${i}]`));
    return list;
  }

  #checkId(id, name) {
    if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
      throw attnlensError(
        'out_of_range',
        name,
        `must be a token id between 0 and ${this.vocabSize - 1}, got ${describe(id)}`,
      );
    }
  }
}

const CONTEXT_WINDOW = 16;

// The unknown token's text: BPE and WordPiece name it, Unigram gives its index.
function unknownToken(model) {
  if (model.unk_token != null) return model.unk_token;
  const entry = Number.isInteger(model.unk_id) ? model.vocab?.[model.unk_id] : null;
  return Array.isArray(entry) ? entry[0] : null;
}
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function isWholeUtf8(bytes) {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function checkEncode(text, options) {
  if (typeof text !== 'string') {
    throw attnlensError('invalid_argument', 'text', `must be a string, got ${describe(text)}`);
  }
  const checked = optionsObject(options, ENCODE_OPTIONS);
  optional(checked.pair, 'pair', 'string');
  optional(checked.addSpecialTokens, 'addSpecialTokens', 'boolean');
  return checked;
}

// Each role's token from tokenizer_config.json (a string or an AddedToken object), else the
// usual name where the vocabulary has it.
function findSpecialTokens(library, config) {
  const special = {};
  for (const role of SPECIAL_ROLES) {
    const configured = config[`${role}_token`];
    const names = configured
      ? [typeof configured === 'string' ? configured : configured.content]
      : USUAL_TEXT[role];
    for (const text of names) {
      const id = typeof text === 'string' ? library.token_to_id(text) : undefined;
      if (id !== undefined) {
        special[role] = { id, text };
        break;
      }
    }
  }
  return special;
}
