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

// Creating a Segmenter loads ICU data; reuse one per (granularity, locale).
const segmenterCache = new Map();

function segmenterFor(icuGranularity, locale) {
  if (typeof Intl.Segmenter !== 'function') {
    throw new Error(
      'tokenize: this JavaScript engine lacks Intl.Segmenter (needs Chrome/Edge 87+, ' +
        'Safari 14.1+, Firefox 125+ or Node 16+)',
    );
  }
  const key = `${icuGranularity}|${JSON.stringify(locale ?? null)}`;
  let segmenter = segmenterCache.get(key);
  if (!segmenter) {
    try {
      segmenter = new Intl.Segmenter(locale, { granularity: icuGranularity });
    } catch (error) {
      // Intl throws a RangeError for a malformed tag and a TypeError for a wrong type.
      throw (error instanceof RangeError ? rangeError : typeError)('locale', error.message);
    }
    segmenterCache.set(key, segmenter);
  }
  return segmenter;
}

function checkArguments(text, options) {
  if (typeof text !== 'string') {
    throw typeError('text', `must be a string, got ${describe(text)}`);
  }
  const granularity = oneOf(
    optionsObject(options, 'options').granularity,
    'granularity',
    GRANULARITIES,
    DEFAULT_GRANULARITY,
  );
  if (text.length > MAX_TEXT_LENGTH) {
    throw rangeError(
      'text',
      `${text.length} characters exceed the cap of ${MAX_TEXT_LENGTH} ` +
        '(MAX_TEXT_LENGTH, counted in UTF-16 code units); shorten the text',
    );
  }
  return granularity;
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
  const granularity = checkArguments(text, options);
  const segmenter = segmenterFor(granularity === 'char' ? 'grapheme' : 'word', options?.locale);

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
