// The regular expressions a tokenizer.json carries ({ "Regex": "..." } in Split pre-tokenizers,
// Replace normalizers and decoders, anywhere in their Sequences) run on every text the page is
// given, in the browser's backtracking engine, with no budget. A hostile file can make one take
// exponential time ('(a+)+$' on 'aaaa...!'): such patterns are refused when the tokenizer loads,
// naming the pattern and where it is in the file.
//
// What is refused: backreferences and subroutine calls, and a group repeated more than once
// ('*', '+', '{2,}', ...) that holds a quantifier or an alternation (star height above one, or an
// ambiguous choice under a repeat: '(a|a)*'), the shapes that backtrack exponentially. Real
// tokenizers (GPT-2, Llama 3, Qwen2, ...) quantify character classes, never such groups.

import { attnlensError } from '../errors.js';

const FILE = 'tokenizer.json';
// The pipeline parts that hold patterns; the model's vocabulary and merges hold none.
const PARTS = ['normalizer', 'pre_tokenizer', 'post_processor', 'decoder'];
// More objects than any real pipeline has: a file that nests deeper is not a tokenizer.
const MAX_NODES = 100000;
const MAX_PATTERN_LENGTH = 10000;

/** Refuses (a TypeError naming the pattern and its path) any Regex pattern that can blow up. */
export function checkTokenizerPatterns(json) {
  const pending = PARTS.filter((part) => json[part] != null).map((part) => [json[part], part]);
  let visited = 0;
  while (pending.length) {
    const [node, path] = pending.pop();
    if (node === null || typeof node !== 'object') continue;
    if (++visited > MAX_NODES) {
      throw attnlensError('invalid_argument', FILE, `its pipeline has over ${MAX_NODES} parts`);
    }
    if (Array.isArray(node)) {
      node.forEach((child, i) => pending.push([child, `${path}[${i}]`]));
      continue;
    }
    for (const key of Object.keys(node)) {
      const child = node[key];
      const where = `${path}.${key}`;
      if (key === 'Regex') {
        if (typeof child !== 'string') {
          throw attnlensError('invalid_argument', FILE, `${where} is not a string`);
        }
        const problem = patternProblem(child);
        if (problem) {
          throw attnlensError(
            'invalid_argument',
            FILE,
            `pattern ${JSON.stringify(child)} at ${where} is refused: ${problem}`,
            { pattern: child, path: where },
          );
        }
      } else {
        pending.push([child, where]);
      }
    }
  }
}

/**
 * Why `pattern` could take exponential time, or null. A small scan of the pattern's syntax:
 * escapes and character classes are skipped over, groups are tracked on a stack.
 */
export function patternProblem(pattern) {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return `it is longer than ${MAX_PATTERN_LENGTH} characters`;
  }
  // Each open group: does it hold a quantifier, an alternation? `last` describes the atom just
  // closed or read, which a following quantifier applies to.
  const groups = [{ quantified: false, alternation: false, start: 0 }];
  let last = null;
  for (let i = 0; i < pattern.length;) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (/[1-9]/.test(next) || next === 'k' || next === 'g') {
        return `it has a backreference or subroutine call ('\\${next}')`;
      }
      i += escapeLength(pattern, i);
      last = { group: null };
    } else if (c === '[') {
      i = classEnd(pattern, i);
      last = { group: null };
    } else if (c === '(') {
      groups.push({ quantified: false, alternation: false, start: i });
      i += groupPrefixLength(pattern, i);
      last = null;
    } else if (c === ')') {
      if (groups.length === 1) {
        // Unbalanced: RegExp refuses it, unless the library rewrote the pattern (BLOOM's class
        // with brackets inside); scanning goes on as if it were a literal.
        last = { group: null };
        i++;
        continue;
      }
      const group = groups.pop();
      const parent = groups.at(-1);
      parent.quantified ||= group.quantified;
      parent.alternation ||= group.alternation;
      last = { group, end: i + 1 };
      i++;
    } else if (c === '|') {
      groups.at(-1).alternation = true;
      last = null;
      i++;
    } else if (
      c === '*' ||
      c === '+' ||
      c === '?' ||
      (c === '{' && /^\{\d*,?\d*\}/.test(pattern.slice(i)))
    ) {
      const [length, repeats] = quantifier(pattern, i);
      if (repeats && last?.group && (last.group.quantified || last.group.alternation)) {
        const text = pattern.slice(last.group.start, i + length);
        return (
          `the repeated group '${text.slice(0, 80)}' holds ` +
          (last.group.quantified ? 'a quantifier (nested quantifiers)' : 'an alternation') +
          ', which can backtrack exponentially'
        );
      }
      groups.at(-1).quantified = true;
      i += length;
      // A lazy or possessive mark belongs to the quantifier.
      if (pattern[i] === '?' || pattern[i] === '+') i++;
      last = null;
    } else {
      last = { group: null };
      i++;
    }
  }
  return null;
}

// '\d', '\p{L}', '\x41', '\u{1F600}', '\u0041': how many characters the escape at `i` spans.
function escapeLength(pattern, i) {
  const next = pattern[i + 1];
  if ((next === 'p' || next === 'P' || next === 'u' || next === 'x') && pattern[i + 2] === '{') {
    const close = pattern.indexOf('}', i + 3);
    return close < 0 ? 2 : close - i + 1;
  }
  if (next === 'u') return 6;
  if (next === 'x') return 4;
  return 2;
}

// The index after the character class starting at `i` ('[...]', escapes inside skipped).
function classEnd(pattern, i) {
  let j = i + 1;
  if (pattern[j] === '^') j++;
  if (pattern[j] === ']') j++; // a leading ']' is a literal
  while (j < pattern.length && pattern[j] !== ']') {
    j += pattern[j] === '\\' ? escapeLength(pattern, j) : 1;
  }
  return j + 1;
}

// '(' , '(?:', '(?=', '(?!', '(?<=', '(?<!', '(?<name>', '(?i:' ...: the length of the opening.
function groupPrefixLength(pattern, i) {
  if (pattern[i + 1] !== '?') return 1;
  const match = /^\(\?(?:<[=!]|<[A-Za-z_][A-Za-z0-9_]*>|[=!:>]|[imsx-]+:)/.exec(
    pattern.slice(i, i + 40),
  );
  return match ? match[0].length : 2;
}

// [length, repeats more than once] of the quantifier at `i`.
function quantifier(pattern, i) {
  const c = pattern[i];
  if (c === '?') return [1, false];
  if (c === '*' || c === '+') return [1, true];
  const [text, min, comma, max] = /^\{(\d*)(,?)(\d*)\}/.exec(pattern.slice(i));
  const upper = comma ? (max === '' ? Infinity : Number(max)) : Number(min);
  return [text.length, upper > 1];
}
