// What a trainer learns from: the built-in sample texts, and repeated random token sequences,
// the classic setting in which induction heads form (a head that, at a token seen before,
// attends to the token that followed it last time, and so predicts it).
//
// Random sequences are drawn in integer arithmetic (text/hash.js), so a seed gives the same
// sequences in every engine; each sample has its own stream (seed, index), so batches do not
// depend on how a run was paused or which thread asks.

import { describe } from '../errors.js';
import {
  integer,
  integerOption,
  optionsObject,
  rangeError,
  typeError,
} from '../argument-checks.js';
import { hashString, mulberry32 } from '../text/hash.js';

/**
 * Two paragraphs written for the "Watch it learn" page: the same idea, in English and in
 * Chinese, with the repetition a small model can pick up on.
 */
export const SAMPLE_TEXTS = Object.freeze({
  en:
    'A small model reads the same sentences again and again. At first it looks everywhere at ' +
    'once, and every word is a guess. Then it notices that a word tends to follow the word ' +
    'before it, and it starts to look back one step. Later it notices that when a phrase comes ' +
    'back, the word that came next last time comes next again, and it learns to look for the ' +
    'earlier copy and read what followed. Its attention sharpens from a blur into a few clear ' +
    'lines. A small model reads the same sentences again and again, and each time it looks a ' +
    'little more carefully.',
  zh:
    '一个小模型一遍又一遍地读同样的句子。起初它什么都看，每个字都是猜的。后来它发现一' +
    '个字常常跟在前一个字后面，于是开始往回看一步。再后来它发现，一句话再次出现时，上' +
    '次跟在后面的字这次还会出现，于是它学会去找前面的那一遍，读出后面跟着的是什么。它' +
    '的注意力从一片模糊变成几条清楚的线。一个小模型一遍又一遍地读同样的句子，每读一遍' +
    '，就看得更仔细一点。',
});

const SEQUENCE_OPTIONS = ['length', 'repeats', 'vocabularySize', 'seed'];

/** Random sequences; see repeatedRandomSequences(). */
export class RepeatedSequences {
  constructor({ minLength, maxLength, repeats, vocabularySize, seed }) {
    this.kind = 'repeated-random';
    this.minLength = minLength;
    this.maxLength = maxLength;
    this.repeats = repeats;
    this.vocabularySize = vocabularySize; // null: every id of the trainer's vocabulary
    this.seed = seed;
    Object.freeze(this);
  }

  /** The tokens each row needs: the longest sequence, repeated. */
  get minimumRow() {
    return this.maxLength * this.repeats;
  }

  /**
   * Sample `index` as `rowLength` token ids drawn from [0, vocabularySize) (or the first
   * `vocabularySize` ids): a random sequence of a random length in [minLength, maxLength], repeated
   * `repeats` times, at a random offset among random tokens.
   */
  sample(index, rowLength, vocabularySize) {
    const next = mulberry32(hashString(`sequence/${index}`, this.seed));
    const ids = Math.min(this.vocabularySize ?? vocabularySize, vocabularySize);
    const draw = (n) => Math.floor((next() / 4294967296) * n);
    const length = this.minLength + draw(this.maxLength - this.minLength + 1);
    const row = new Int32Array(rowLength);
    for (let i = 0; i < rowLength; i++) row[i] = draw(ids);
    const start = draw(rowLength - length * this.repeats + 1);
    for (let i = 0; i < length; i++) {
      for (let r = 0; r < this.repeats; r++) row[start + r * length + i] = row[start + i];
    }
    return row;
  }

  /** A plain description, for the trainer's worker (structured clone keeps no class). */
  toJSON() {
    const { minLength, maxLength, repeats, vocabularySize, seed } = this;
    return { kind: this.kind, minLength, maxLength, repeats, vocabularySize, seed };
  }
}

/**
 * Repeated random token sequences:
 *   length      tokens per sequence: a number, or { min, max } to draw each one's (default
 *               { min: 8, max: 16 }: a varying length, so a model cannot find the copy by
 *               position alone and has to match tokens)
 *   repeats     copies of each sequence in a row (default 2)
 *   vocabularySize  draw only the first n token ids (default: every id of the trainer's
 *               vocabulary)
 *   seed        an integer (default 1)
 */
export function repeatedRandomSequences(options) {
  const opts = optionsObject(options, 'options', SEQUENCE_OPTIONS);
  let minLength = 8,
    maxLength = 16;
  if (typeof opts.length === 'number') {
    minLength = maxLength = integer(opts.length, 'length', 1, 4096);
  } else if (opts.length !== undefined) {
    if (opts.length === null || typeof opts.length !== 'object') {
      throw typeError('length', `must be a number or { min, max }, got ${describe(opts.length)}`);
    }
    const range = optionsObject(opts.length, 'length', ['min', 'max']);
    minLength = integer(range.min, 'length.min', 1, 4096);
    maxLength = integer(range.max, 'length.max', 1, 4096);
    if (maxLength < minLength) {
      throw rangeError(
        'length.max',
        `must be at least length.min (${minLength}), got ${maxLength}`,
      );
    }
  }
  return new RepeatedSequences({
    minLength,
    maxLength,
    repeats: integerOption(opts.repeats, 'repeats', { min: 2, max: 64, fallback: 2 }),
    vocabularySize: integerOption(opts.vocabularySize, 'vocabularySize', {
      min: 1,
      max: 2 ** 20,
      fallback: null,
    }),
    seed: integerOption(opts.seed, 'seed', { min: 0, max: 2 ** 32 - 1, fallback: 1 }),
  });
}
