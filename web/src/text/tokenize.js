// Text -> tokens with Intl.Segmenter, so every script the browser's ICU knows is handled the same
// way (dictionary-based word breaks for Chinese, Japanese and Thai; grapheme clusters for emoji).
//
// Word and char boundaries come from the JavaScript engine's ICU data, so a browser with a
// different ICU version may cut CJK text differently; everything downstream (embeddings, weights)
// is a deterministic function of the tokens.

import { MAX_TEXT_LENGTH, MAX_TOKENS } from './limits.js';
import { subwordSpans } from './subword.js';
import { oneOf, optionsObject, rangeError, typeError } from '../argument-checks.js';
import { describe } from '../errors.js';
import { DEFAULT_GRANULARITY, GRANULARITIES } from '../vocabulary.js';

/** @typedef {{ text: string, start: number, end: number }} Token */

const WHITESPACE_ONLY = /^\s+$/u;

// Creating a Segmenter loads ICU data: reuse one per (granularity, locale), the most recently
// used SEGMENTER_CACHE_LIMIT of them (a page cycling through locales must not grow it forever).
export const SEGMENTER_CACHE_LIMIT = 16;
const segmenterCache = new Map();

/** How many Segmenters are kept now (for tests of the bound). */
export const segmenterCacheSize = () => segmenterCache.size;

// The locale option as the list of canonical tags Intl uses ([] for the runtime's default):
// a string, an Intl.Locale, or an array of them, each element read once.
function canonicalLocales(locale) {
  if (locale === undefined) return [];
  const isTag = (x) => typeof x === 'string' || x instanceof Intl.Locale;
  let tags;
  if (isTag(locale)) {
    tags = [locale];
  } else if (Array.isArray(locale)) {
    tags = Array.from({ length: locale.length }, (_, i) => locale[i]);
    const bad = tags.findIndex((x) => !isTag(x));
    if (bad >= 0) {
      throw typeError(
        'locale',
        `locale[${bad}] must be a string or an Intl.Locale, got ${describe(tags[bad])}`,
      );
    }
  } else {
    throw typeError('locale', `must be a string or an array of strings, got ${describe(locale)}`);
  }
  return tags.flatMap((tag) => {
    try {
      return Intl.getCanonicalLocales(tag);
    } catch (error) {
      // Intl throws a RangeError for a malformed tag, without saying which.
      throw rangeError(
        'locale',
        `${describe(String(tag))} is not a language tag (${error.message})`,
      );
    }
  });
}

function segmenterFor(icuGranularity, locale) {
  if (typeof Intl.Segmenter !== 'function') {
    throw new Error(
      'tokenize: this JavaScript engine lacks Intl.Segmenter (needs Chrome/Edge 87+, ' +
        'Safari 14.1+, Firefox 125+ or Node 16+)',
    );
  }
  const locales = canonicalLocales(locale);
  const key = `${icuGranularity}|${locales.join(',')}`;
  let segmenter = segmenterCache.get(key);
  if (segmenter) {
    segmenterCache.delete(key); // re-inserted below: the Map's order is the order of use
  } else {
    segmenter = new Intl.Segmenter(locales, { granularity: icuGranularity });
    if (segmenterCache.size >= SEGMENTER_CACHE_LIMIT) {
      segmenterCache.delete(segmenterCache.keys().next().value);
    }
  }
  segmenterCache.set(key, segmenter);
  return segmenter;
}

const TOKENIZE_OPTIONS = ['granularity', 'locale'];

function checkArguments(text, options) {
  if (typeof text !== 'string') {
    throw typeError('text', `must be a string, got ${describe(text)}`);
  }
  const opts = optionsObject(options, 'options', TOKENIZE_OPTIONS);
  const granularity = oneOf(opts.granularity, 'granularity', GRANULARITIES, DEFAULT_GRANULARITY);
  if (text.length > MAX_TEXT_LENGTH) {
    throw rangeError(
      'text',
      `${text.length} characters exceed the cap of ${MAX_TEXT_LENGTH} ` +
        '(MAX_TEXT_LENGTH, counted in UTF-16 code units); shorten the text',
    );
  }
  return { granularity, locale: opts.locale };
}

/**
 * Splits text into tokens whose offsets index the original string:
 * `text.slice(token.start, token.end) === token.text` (UTF-16 offsets, as String#slice uses).
 *
 * - 'word': the segments of Intl.Segmenter's word granularity that are not whitespace: words,
 *   numbers, CJK words (我爱自然语言处理 -> 我 / 爱 / 自然 / 语言 / 处理), and each
 *   punctuation mark, symbol and emoji as its own token.
 * - 'char': grapheme clusters that are not whitespace, so an emoji with skin tone or ZWJ sequence
 *   (👨‍👩‍👧) and a letter with combining accents each stay one token.
 * - 'subword': word tokens, with word-like ones split further by the rule in subword.js (English
 *   affixes and clitics, CJK words into characters, very long words into chunks).
 *
 * @param {string} text at most MAX_TEXT_LENGTH UTF-16 code units
 * @param {{ granularity?: 'word' | 'char' | 'subword', locale?: string | string[] }} [options]
 * @returns {Token[]} at most MAX_TOKENS tokens
 * @throws {TypeError} text is not a string, or an option has the wrong type
 * @throws {RangeError} unknown granularity, bad locale, or text over a cap (the message names it)
 */
export function tokenize(text, options) {
  const { granularity, locale } = checkArguments(text, options);
  const segmenter = segmenterFor(granularity === 'char' ? 'grapheme' : 'word', locale);

  const tokens = [];
  const push = (start, end) => tokens.push({ text: text.slice(start, end), start, end });
  for (const { segment, index, isWordLike } of segmenter.segment(text)) {
    if (WHITESPACE_ONLY.test(segment)) continue;
    if (granularity === 'subword' && isWordLike) {
      for (const [start, end] of subwordSpans(segment)) push(index + start, index + end);
    } else {
      push(index, index + segment.length);
    }
  }

  if (tokens.length > MAX_TOKENS) {
    throw rangeError(
      'text',
      `${tokens.length} ${granularity} tokens exceed the cap of ` +
        `${MAX_TOKENS} (MAX_TOKENS); shorten the text` +
        (granularity === 'word' ? '' : " or use granularity 'word'"),
    );
  }
  return tokens;
}
