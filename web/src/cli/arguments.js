// Command-line arguments of `attnlens` -> options for analyze()/analyzePair() and for display.
// Every mistake raises UsageError, which the CLI turns into a usage message and exit code 2.

import { parseArgs } from 'node:util';
import { COLOR_MODES } from './heatmap.js';
import { DEFAULT_WIDTH, twoColumns, wrapWords } from './layout.js';
import { MASK_PART_NAMES, maskOptions, parseMask } from '../mask-notation.js';
import { MAX_HEADS, MAX_MODEL_DIM, MAX_SEED } from '../text/limits.js';
import {
  DEFAULT_GRANULARITY,
  DEFAULT_HEAD_DIM,
  DEFAULT_HEADS,
  DEFAULT_SCORE,
  DEFAULT_SEED,
  DEFAULT_TEMPERATURE,
  GRANULARITIES,
  SCORES,
} from '../vocabulary.js';

export class UsageError extends Error {
  constructor(message) {
    super(message);
    this.name = 'UsageError';
  }
}

// "a (default) | b | c" for a flag's choices.
const choices = (names, fallback) =>
  names.map((name) => (name === fallback ? `${name} (default)` : name)).join(' | ');

// The flags and mask notations of the usage text, in two aligned columns.
const FLAG_HELP = [
  ['--mask SPEC', 'which keys each query may see; repeat to combine (all must hold):'],
  ['--score NAME', choices(SCORES, DEFAULT_SCORE)],
  [
    '--temperature T',
    `softmax temperature, > 0 (default ${DEFAULT_TEMPERATURE}; low sharpens, high flattens)`,
  ],
  ['--softcap C', 'cap the scores smoothly at +-C: C * tanh(score / C) (Gemma 2)'],
  ['--alibi', "ALiBi: subtract slope x distance from each head's scores"],
  ['--heads H', `number of heads (default ${DEFAULT_HEADS})`],
  ['--head I|all', 'head to show, from 0 (default all)'],
  [
    '--head-dim D',
    `dimensions per head (default ${DEFAULT_HEAD_DIM}; model width = heads x head-dim)`,
  ],
  ['--granularity G', choices(GRANULARITIES, DEFAULT_GRANULARITY)],
  ['--locale TAG', "locale for word breaking, e.g. zh or ja (default: the runtime's)"],
  ['--seed N', `seed of embeddings and weights, 0..${MAX_SEED} (default ${DEFAULT_SEED})`],
  ['--share-qk', 'use one projection for queries and keys (similar tokens attend)'],
  ['--source "text"', "cross-attention: the text's tokens attend to this text's tokens"],
  ['--color MODE', 'truecolor | 256 | none (default: from the terminal; NO_COLOR honoured)'],
  ['--json', 'print the numbers (tokens, weights and scores per head, settings) as JSON'],
  ['-h, --help', 'this message'],
  ['-v, --version', 'the package version'],
];
const MASK_HELP = [
  ['global', 'no restriction (default)'],
  ['causal', 'only earlier keys and itself'],
  ['local:W', 'keys at most W positions away'],
  ['dilated:W:D', 'every D-th key, at most W steps of D away'],
  ['strided:S', 'Sparse Transformer strided pattern, stride S'],
  ['fixed:S:C', 'Sparse Transformer fixed pattern, block S, C summary keys'],
  ['global-tokens:0,3', 'these positions see and are seen by all'],
  ['topk:K', 'each query keeps its K highest-scoring keys'],
  ['lsh:B:R:S', "hashed: keys sharing a query's bucket (B buckets, R rounds, seed S)"],
];
// Within DEFAULT_WIDTH columns (80), whatever the terminal.
export const USAGE = [
  'Usage: attnlens [options] "text"',
  '',
  ...wrapWords(
    'Tokenizes the text, runs one seeded, untrained multi-head attention layer over it ' +
      '(WebAssembly) and prints the tokens and a heatmap of the attention weights (rows: ' +
      'queries, columns: keys).',
    DEFAULT_WIDTH,
  ),
  '',
  'Options:',
  ...twoColumns(FLAG_HELP.slice(0, 1), { indent: 2, nameWidth: 19 }),
  ...twoColumns(MASK_HELP, { indent: 4, nameWidth: 21 }),
  ...twoColumns(FLAG_HELP.slice(1), { indent: 2, nameWidth: 19 }),
  '',
  'Example:',
  `  attnlens "The animal didn't cross the street because it was too tired" \\`,
  '    --mask causal --heads 4 --head 2',
].join('\n');

const OPTIONS = {
  mask: { type: 'string', multiple: true },
  score: { type: 'string' },
  temperature: { type: 'string' },
  softcap: { type: 'string' },
  alibi: { type: 'boolean' },
  heads: { type: 'string' },
  head: { type: 'string' },
  'head-dim': { type: 'string' },
  granularity: { type: 'string' },
  locale: { type: 'string' },
  seed: { type: 'string' },
  'share-qk': { type: 'boolean' },
  source: { type: 'string' },
  color: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
};

const NON_NEGATIVE_INTEGER = /^\d+$/;
const POSITIVE_DECIMAL = /^\+?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

// Flag values arrive as text: these parse them, in the (value, name) order of argument-checks.js,
// and word their mistakes as usage errors.
function integerFlag(text, flag, min, max) {
  if (!NON_NEGATIVE_INTEGER.test(text) || Number(text) < min || Number(text) > max) {
    throw new UsageError(`${flag}: expected an integer from ${min} to ${max}, got '${text}'`);
  }
  return Number(text);
}

function positiveFlag(text, flag) {
  const value = Number(text);
  if (!POSITIVE_DECIMAL.test(text) || !(value > 0) || !Number.isFinite(value)) {
    throw new UsageError(`${flag}: expected a positive number, got '${text}'`);
  }
  return value;
}

function choiceFlag(text, flag, allowed) {
  if (!allowed.includes(text)) {
    throw new UsageError(`${flag}: expected one of ${allowed.join(', ')}, got '${text}'`);
  }
  return text;
}

// The engine options of one --mask SPEC, in the demo's mask notation (global-tokens: spells
// tokens:). Sizes are not fitted to the text: the engine reports a window or a global token that
// does not fit, and the CLI shows that as a usage error.
function maskFlag(spec) {
  const names = spec
    .split('+')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => part.split(':')[0].toLowerCase());
  if (!names.length || names.some((name) => !MASK_PART_NAMES.includes(name))) {
    throw new UsageError(
      `--mask: unknown mask '${spec}' (global, causal, local:W, dilated:W:D, ` +
        'strided:S, fixed:S:C, global-tokens:I,J, topk:K, lsh:B:R:S)',
    );
  }
  try {
    return maskOptions(parseMask(spec));
  } catch (error) {
    if (error.parameter !== 'mask') throw error;
    throw new UsageError(`--mask ${error.message.slice('mask: '.length)}`);
  }
}

// The restrictions the --mask flags may set once over all of them, and what messages call them.
const ONE_OF_EACH = [
  ['window', 'local or dilated window'],
  ['sparse', 'sparse pattern'],
  ['topK', 'topk'],
  ['lsh', 'lsh'],
];

/**
 * Every --mask SPEC, all of which must hold: one window and one sparse pattern may be combined
 * (the engine intersects them), global tokens add up.
 */
function maskFlags(specs) {
  const options = {};
  for (const spec of specs) {
    const { globalTokens, ...restrictions } = maskFlag(spec);
    for (const [key, what] of ONE_OF_EACH) {
      if (restrictions[key] !== undefined && options[key] !== undefined) {
        throw new UsageError(`--mask ${spec}: only one ${what} can be given`);
      }
    }
    Object.assign(options, restrictions);
    if (globalTokens) options.globalTokens = [...(options.globalTokens ?? []), ...globalTokens];
  }
  return options;
}

/**
 * Parses argv (without node and the script).
 * @returns {{ help?: true, version?: true } | { text: string, source?: string,
 *   head: number | 'all', json: boolean, color?: string, masks: string[], options: object }}
 */
export function parseCommandLine(argv) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error.message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  if (values.version) return { version: true };
  if (positionals.length === 0) throw new UsageError('missing the text to analyze');
  // Unquoted words arrive as several arguments: read them as one text.
  const text = positionals.join(' ');

  const options = {};
  if (values.heads !== undefined)
    options.heads = integerFlag(values.heads, '--heads', 1, MAX_HEADS);
  if (values['head-dim'] !== undefined)
    options.headDim = integerFlag(values['head-dim'], '--head-dim', 1, MAX_MODEL_DIM);
  if (values.seed !== undefined) options.seed = integerFlag(values.seed, '--seed', 0, MAX_SEED);
  if (values.score !== undefined) options.score = choiceFlag(values.score, '--score', SCORES);
  if (values.granularity !== undefined) {
    options.granularity = choiceFlag(values.granularity, '--granularity', GRANULARITIES);
  }
  if (values.locale !== undefined) options.locale = values.locale;
  if (values['share-qk']) options.shareQueryKey = true;
  if (values.temperature !== undefined) {
    options.temperature = positiveFlag(values.temperature, '--temperature');
  }
  if (values.softcap !== undefined) options.softcap = positiveFlag(values.softcap, '--softcap');
  if (values.alibi) options.alibi = true;
  const masks = values.mask ?? [];
  Object.assign(options, maskFlags(masks));

  const heads = options.heads ?? DEFAULT_HEADS;
  let head = 'all';
  if (values.head !== undefined && values.head !== 'all') {
    head = integerFlag(values.head, '--head', 0, heads - 1);
  }
  const color =
    values.color === undefined ? undefined : choiceFlag(values.color, '--color', COLOR_MODES);

  return {
    text,
    source: values.source,
    head,
    json: Boolean(values.json),
    color,
    masks: masks.length ? masks : ['global'],
    options,
  };
}

/** The colour mode for a stream when --color is not given (NO_COLOR / FORCE_COLOR conventions). */
export function detectColorMode(env, stream) {
  if (env.NO_COLOR) return 'none';
  if (env.FORCE_COLOR !== undefined) {
    if (env.FORCE_COLOR === '0' || env.FORCE_COLOR === 'false') return 'none';
    return env.FORCE_COLOR === '3' ? 'truecolor' : '256';
  }
  if (!stream.isTTY || env.TERM === 'dumb') return 'none';
  return /^(truecolor|24bit)$/i.test(env.COLORTERM ?? '') ? 'truecolor' : '256';
}
