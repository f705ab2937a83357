// createTokenizer({ json, config }): a model's own tokenizer (tokenizer.json +
// tokenizer_config.json) through @huggingface/tokenizers, Hugging Face's JavaScript
// implementation, with what a view of attention needs on top: each token's UTF-16 span in the
// text it came from, and which tokens are special.
//
// The library returns ids and token strings but no offsets, so offsets are recovered by
// aligning the tokens with the text (token-offsets.js): the text goes through the tokenizer's
// own normalizer piece by piece (so every normalized byte knows the original characters it came
// from), and each token's bytes are found in order in that normalized text.

import { Tokenizer } from '@huggingface/tokenizers';
import { attnlensError, describe } from '../errors.js';
import { optional, optionsObject } from './files/options.js';
import { checkTokenizerPatterns } from './tokenizer-patterns.js';
import { alignTokens, createSurface, normalizeWithMap, trimsOffsets } from './token-offsets.js';

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
  #addedById;
  #specialIds;
  #trim;

  #files;

  constructor(library, json, config, files) {
    this.#library = library;
    this.#files = files;
    this.#surface = createSurface(json);
    this.#trim = trimsOffsets(json);
    this.#addedById = new Map();
    this.#specialIds = new Set();
    for (const token of library.get_added_tokens_decoder().values()) {
      this.#addedById.set(token.id, token);
      // The unknown token stands for text that is there, so it is not marked special.
      if (token.special && token.content !== json.model.unk_token) this.#specialIds.add(token.id);
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
    const content = segments.map((segment) => {
      const own = library.encode(segment, { add_special_tokens: false });
      const spans = alignTokens(segment, own.ids, own.tokens, {
        normalized: normalizeWithMap(segment, library.normalizer),
        surface: this.#surface,
        added: this.#addedById,
        trim: this.#trim,
      });
      return own.tokens.map((token, i) => ({ token, id: own.ids[i], ...spans[i] }));
    });

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
    if (!Array.isArray(ids) && !ArrayBuffer.isView(ids)) {
      throw attnlensError(
        'invalid_argument',
        'ids',
        `must be an array of token ids, got ${describe(ids)}`,
      );
    }
    const list = Array.from(ids);
    list.forEach((id, i) => this.#checkId(id, `ids[${i}]`));
    if (list.length === 0) return '';
    return this.#library.decode(list, { skip_special_tokens: skipSpecialTokens });
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
