// The probe behind Model.headScores(): the test interpretability tools run on a model's heads
// (Olsson et al. 2022; TransformerLens): a sequence of random tokens the model never saw, twice
// in a row, wrapped in the special tokens its tokenizer puts around any text (BOS; [CLS] and
// [SEP]). The tokens are drawn, seeded, from the model's own vocabulary: ordinary tokens only,
// distinct within a probe (so each token of the second copy has one first occurrence). The
// scores themselves are interpret/head-scores.js', the trainer's own.

import { integer, optionsObject, rangeError } from '../argument-checks.js';
import { headScores, labelOfScores } from '../interpret/head-scores.js';
import { mulberry32 } from '../text/hash.js';

/** The options Model.headScores() accepts. */
export const HEAD_SCORE_OPTIONS = Object.freeze(['length', 'probes', 'seed']);
// TransformerLens' induction probe repeats 50 tokens; a few probes average out the draw.
const DEFAULT_LENGTH = 50;
const DEFAULT_PROBES = 4;
const DEFAULT_SEED = 1;
const MAX_PROBES = 64;
// Each candidate token is decoded and encoded again; past this many (or 8 for each token the
// probes need, when that is more) the vocabulary is refused, so a tokenizer with few ordinary
// tokens ends in an error rather than a long search.
const MAX_CHECKED = 8192;
const CHECKS_PER_TOKEN = 8;

/**
 * A token the tokenizer gives back for its own text: it decodes to whole characters, and that
 * text encodes to this one token, which is not special. Byte pieces (<0x0A>, a lone UTF-8 byte
 * of byte-level BPE), special and unknown tokens, and pieces no text produces are not.
 */
function isOrdinary(tokenizer, id) {
  const text = tokenizer.decode([id]);
  if (text === '' || text.includes('\uFFFD')) return false;
  const { tokens } = tokenizer.encode(text, { addSpecialTokens: false });
  return (
    tokens.length === 1 &&
    tokens[0].id === id &&
    !tokens[0].special &&
    id !== tokenizer.special.unk?.id
  );
}

/** The special tokens the tokenizer puts before and after any text (its post-processor's). */
function wrapping(tokenizer) {
  const { tokens } = tokenizer.encode('a');
  const content = tokens.findIndex((token) => !token.special);
  if (content < 0) throw rangeError('tokenizer', 'gives no ordinary token for the text "a"');
  let end = tokens.length;
  while (end > content && tokens[end - 1].special) end -= 1;
  return {
    before: tokens.slice(0, content).map((token) => token.id),
    after: tokens.slice(end).map((token) => token.id),
  };
}

// headScores' options, checked: the repeated sequence must fit the model's positions twice over.
function checkOptions(options, maxPositions, wrap) {
  const raw = optionsObject(options, 'options', HEAD_SCORE_OPTIONS);
  const longest = Math.floor((maxPositions - wrap) / 2);
  if (longest < 2) {
    throw rangeError(
      'length',
      `the model's ${maxPositions} positions leave no room for a sequence repeated twice`,
    );
  }
  return {
    length:
      raw.length === undefined
        ? Math.min(DEFAULT_LENGTH, longest)
        : integer(raw.length, 'length', 2, longest),
    probes:
      raw.probes === undefined ? DEFAULT_PROBES : integer(raw.probes, 'probes', 1, MAX_PROBES),
    seed: raw.seed === undefined ? DEFAULT_SEED : integer(raw.seed, 'seed', 0, 2 ** 32 - 1),
  };
}

/**
 * The probes for a model: { ids: Int32Array[], special: boolean[], length, probes, seed }.
 * @param {object} tokenizer the model's (tokenizer.js)
 * @param {object} options headScores()'s, unchecked
 * @param {{ vocab: number, maxPositions: number }} model the rows of its embedding, positions
 */
export function probeSequences(tokenizer, options, { vocab, maxPositions }) {
  const range = Math.min(vocab, tokenizer.vocabSize);
  const ordinary = new Map(); // id -> isOrdinary
  let checked = 0;
  const check = (id) => {
    if (!ordinary.has(id)) {
      checked += 1;
      ordinary.set(id, isOrdinary(tokenizer, id));
    }
    return ordinary.get(id);
  };
  const { before, after } = wrapping(tokenizer);
  const opts = checkOptions(options, maxPositions, before.length + after.length);
  const budget = Math.max(MAX_CHECKED, CHECKS_PER_TOKEN * opts.length * opts.probes);
  const random = mulberry32(opts.seed);
  const ids = [];
  for (let p = 0; p < opts.probes; p++) {
    // A partial Fisher-Yates shuffle of the vocabulary, taken until `length` ordinary tokens.
    const pool = Int32Array.from({ length: range }, (_, i) => i);
    const drawn = [];
    for (let left = range; left > 0 && drawn.length < opts.length; left--) {
      const pick = Math.floor((random() / 2 ** 32) * left);
      const id = pool[pick];
      pool[pick] = pool[left - 1];
      if (checked >= budget && !ordinary.has(id)) break;
      if (check(id)) drawn.push(id);
    }
    if (drawn.length < opts.length) {
      throw rangeError(
        'length',
        `the vocabulary gave ${drawn.length} ordinary tokens of the ${opts.length} a probe ` +
          `needs (${checked} tokens checked)`,
      );
    }
    ids.push(Int32Array.from([...before, ...drawn, ...drawn, ...after]));
  }
  const n = before.length + 2 * opts.length + after.length;
  const special = Array.from({ length: n }, (_, i) => i < before.length || i >= n - after.length);
  return { ids, special, ...opts };
}

/**
 * The scores of every probe (headScores()' lists, one per probe) averaged head by head, each
 * labelled from its averages.
 */
export function averageScores(perProbe) {
  const count = perProbe.length;
  return perProbe[0].map(({ layer, head }, index) => {
    const mean = (name) => {
      const values = perProbe.map((scores) => scores[index][name]);
      return values.some((value) => value === null)
        ? null
        : values.reduce((sum, value) => sum + value, 0) / count;
    };
    const scores = {
      layer,
      head,
      entropy: mean('entropy'),
      previousToken: mean('previousToken'),
      induction: mean('induction'),
      sink: mean('sink'),
    };
    return { ...scores, label: labelOfScores(scores) };
  });
}

/** Scores one model's heads: `forward(ids)` gives the attention [layers, heads, N, N]. */
export function scoreProbes(probe, forward, { layers, heads, causal }) {
  const perProbe = probe.ids.map((ids) =>
    headScores(forward(ids), ids, layers, heads, { causal, special: probe.special }),
  );
  return averageScores(perProbe);
}
