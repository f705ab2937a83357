// The demo's whole state, and its round trip through the URL: every setting that changes what
// is drawn is in the link, so a shared link reproduces the view. Defaults are left out of the
// URL to keep links short; the settings go in the query string, or in the fragment once they are
// long (share-link.js), and both are read. Unknown or malformed values fall back to defaults,
// and readLink() lists them, so the page can say which part of a link it could not use.
import { readChoice, readIntegerIn } from '../src/argument-checks.js';
import { LANGUAGES } from '../src/i18n/translate.js';
import { fragmentParams, placeParams, readParams } from '../src/share-link.js';
import { DEFAULT_SCALE, SCALE_NAMES } from '../src/views/colormap.js';
import { formatMask, maskForMode, parseMask } from '../src/mask-notation.js';
import { validateRevision } from '../src/models/files/hub.js';
import { validateHubSource } from '../src/models/files/llama2c-names.js';
import { WEIGHT_DTYPES } from '../src/models/model-block.js';
import {
  DEFAULT_GRANULARITY,
  DEFAULT_HEAD_DIM,
  DEFAULT_HEADS,
  DEFAULT_SCORE,
  DEFAULT_TEMPERATURE,
  DEFAULT_VIEW,
  GRANULARITIES,
  MAX_PAGE_HEADS,
  SCORES,
  VIEWS,
} from '../src/vocabulary.js';
import { EXAMPLES } from './examples.js';

export const TEMPERATURE_RANGE = [0.1, 10];
// Slider steps from the lowest temperature to the highest: 20 a decade, so every arrow key press
// changes the value shown (0.10, 0.11, 0.13, ... 1.0, 1.1, ... 10) and 1 is a step of its own.
export const TEMPERATURE_STEPS = 40;
// The head sizes d_k the page offers; d_model = heads x d_k (at most 1024, the text path's widest).
export const HEAD_DIMS = [2, 4, 8, 16, 32, 64, 128];
// The views a real model adds: every layer x head, one layer's heads overlaid as lines, and
// where one token looks in every head.
export const MODEL_VIEWS = ['model', 'overlay', 'focus', 'rollout', 'sinks'];
// Layers and heads a link may name before the model is loaded (then clamped to the model's).
const MAX_LINK_LAYERS = 256;

// The example the page opens on: the Chinese sentence for a reader whose language is Chinese.
const defaultExample = (language) => (language === 'zh' ? EXAMPLES[1] : EXAMPLES[0]);
export function defaultText(language) {
  return defaultExample(language).text;
}

// `language` is the page's language (the URL's lang, else the browser's); it picks the default
// sentence.
export function defaultState(language = 'en') {
  return {
    mode: 'self',
    text: defaultText(language),
    // Cross-attention pairs the text with its translation (examples.js).
    source: defaultExample(language).source,
    heads: DEFAULT_HEADS,
    head: 0,
    dk: DEFAULT_HEAD_DIM,
    mask: 'global',
    compare: '',
    score: DEFAULT_SCORE,
    temperature: DEFAULT_TEMPERATURE,
    granularity: DEFAULT_GRANULARITY,
    view: DEFAULT_VIEW,
    query: -1,
    key: -1,
    scale: DEFAULT_SCALE,
    range: 'max',
    orientation: 'auto',
    lang: '',
    backend: 'auto',
    // A real model (model/session.js): '' for the untrained layer, a Hub id, or 'files' (picked
    // files: never in the link). The rest applies to a real model only.
    model: '',
    revision: '',
    dtype: 'f32',
    layer: 0,
    surgery: '', // a mask notation replacing the model's own masks, '' for none
    surgeryLayer: -1, // the layer it applies to, -1 for all
    words: false, // views over words instead of the model's tokens
    pair: '', // BERT: a second sentence
    block: false, // with a pair: only the block of the first sentence's rows, second's columns
    overlay: '', // the head view's heads, 1-based "1,3,4" ('' for the first four)
    second: '', // "Compare two models": the second model's Hub id ('' for none)
  };
}

const ENUMS = {
  mode: ['self', 'cross'],
  score: SCORES,
  granularity: GRANULARITIES,
  view: [...VIEWS, ...MODEL_VIEWS],
  scale: SCALE_NAMES,
  range: ['max', 'unit'],
  orientation: ['auto', 'vertical', 'horizontal'],
  lang: LANGUAGES,
  backend: ['auto', 'wasm', 'webgpu'],
};

// Settings a reset leaves alone: how the reader likes to see the page, and which model it runs.
const PREFERENCES = [
  'lang',
  'backend',
  'scale',
  'range',
  'orientation',
  'model',
  'revision',
  'dtype',
  'second',
];

// The default state with the reader's preferences kept: what Reset and every "Things to try"
// card start from, so no setting of an earlier card or example carries over.
export function resetState(state, language) {
  const reset = defaultState(language);
  for (const field of PREFERENCES) reset[field] = state[field];
  return reset;
}

// URL parameter name for each state field.
const PARAMS = {
  mode: 'mode',
  text: 'text',
  source: 'source',
  heads: 'heads',
  head: 'head',
  dk: 'dk',
  mask: 'mask',
  compare: 'compare',
  score: 'score',
  temperature: 't',
  granularity: 'tokens',
  view: 'view',
  query: 'q',
  key: 'k',
  scale: 'colors',
  range: 'range',
  orientation: 'layout',
  lang: 'lang',
  backend: 'backend',
  model: 'model',
  second: 'second',
  revision: 'rev',
  dtype: 'dtype',
  layer: 'layer',
  surgery: 'surgery',
  surgeryLayer: 'surgeryLayer',
  words: 'words',
  pair: 'pair',
  block: 'block',
  overlay: 'overlay',
};

// A mask the text page can draw, or null. A picture's window (patch:K) needs a patch grid, which
// a text has not: the Picture mode keeps its surgery in its own control.
function validMask(text) {
  try {
    const mask = parseMask(text);
    return mask.pattern === 'patch' ? null : formatMask(mask);
  } catch {
    return null;
  }
}

const PARAM_NAMES = Object.values(PARAMS);

// `check(text)` returns text or throws (hub.js's validators): the text, or null.
function valid(check, text) {
  try {
    return check(text);
  } catch {
    return null;
  }
}

// A Hub model id or a llama2.c checkpoint in a Hub repo (picked files cannot travel in a link).
const validModelId = (text) => (text === '' ? '' : valid(validateHubSource, text));

const readFlag = (text) => ({ 1: true, 0: false })[text] ?? null;

// A 1-based index in a link, as the 0-based one the state keeps.
function oneBased(text, max) {
  const value = readIntegerIn(text, 1, max);
  return value === null ? null : value - 1;
}

/**
 * The state a link describes ("?text=...&mask=causal", or the same in its fragment), starting
 * from the defaults of `language` (the page's language when the link names none). `problems`
 * lists each parameter whose value could not be used, as { param, value }; the state has that
 * setting's default instead. `fromFragment`: the settings came from the fragment. A mask that
 * does not apply to the mode (causal between two texts) is reduced to what does (maskForMode).
 */
export function readLink(search, hash = '', language = 'en') {
  const params = readParams(search, hash, PARAM_NAMES);
  const state = defaultState(readChoice(params.get(PARAMS.lang), LANGUAGES, language));
  const problems = [];
  const fromFragment = fragmentParams(hash, PARAM_NAMES) !== null;
  // read(text) -> the value, or null when unusable (reported, the default kept).
  const use = (field, read) => {
    const given = params.get(PARAMS[field]);
    if (given === null) return;
    const value = read(given);
    if (value === null) problems.push({ param: PARAMS[field], value: given });
    else state[field] = value;
  };
  for (const [field, allowed] of Object.entries(ENUMS)) {
    use(field, (text) => readChoice(text, allowed, null));
  }
  use('text', (text) => text);
  use('source', (text) => text);
  use('heads', (text) => readIntegerIn(text, 1, MAX_PAGE_HEADS));
  use('model', validModelId);
  use('second', (text) => (state.model ? validModelId(text) : null));
  use('revision', (text) => (state.model ? valid(validateRevision, text) : null));
  use('dtype', (text) => readChoice(text, WEIGHT_DTYPES, null));
  // A real model's heads are known once it loads: a link may name any, clamped then.
  use('head', (text) => {
    const head = readIntegerIn(text, 1, state.model ? MAX_LINK_LAYERS : state.heads);
    return head === null ? null : head - 1;
  });
  use('layer', (text) => oneBased(text, MAX_LINK_LAYERS));
  use('surgery', (text) => (text === '' ? '' : validMask(text)));
  use('surgeryLayer', (text) => oneBased(text, MAX_LINK_LAYERS));
  use('words', readFlag);
  use('block', readFlag);
  use('pair', (text) => text);
  use('overlay', (text) =>
    /^\d{1,3}(,\d{1,3}){0,31}$/.test(text) && !text.split(',').includes('0') ? text : null,
  );
  use('query', (text) => readIntegerIn(text, 0, 1e6));
  use('key', (text) => readIntegerIn(text, 0, 1e6));
  use('dk', (text) => HEAD_DIMS.find((d) => String(d) === text) ?? null);
  use('mask', validMask);
  use('compare', (text) => (text === '' ? '' : validMask(text)));
  use('temperature', (text) => {
    const t = Number(text);
    return text.trim() !== '' && t >= TEMPERATURE_RANGE[0] && t <= TEMPERATURE_RANGE[1] ? t : null;
  });
  state.mask = maskInMode(state.mask, state.mode);
  if (state.compare) state.compare = maskInMode(state.compare, state.mode);
  return { state, problems, fromFragment };
}

/** readLink()'s state alone. */
export function stateFromSearch(search, hash = '', language = 'en') {
  return readLink(search, hash, language).state;
}

/**
 * The link of a state, as { search, hash } for the page's address: the settings in the query
 * string, or in the fragment (and an empty query) when they are long (share-link.js). Settings
 * equal to the defaults of `language` are left out.
 */
export function linkFromState(state, language = 'en') {
  return placeParams(new URLSearchParams(searchFromState(state, language)));
}

/**
 * The page's address for a state, without its path: linkFromState()'s query and fragment, and
 * `currentHash` kept when it is an anchor (such as "#stage") and the settings leave the fragment
 * free.
 */
export function addressFromState(state, currentHash = '', language = 'en') {
  const { search, hash } = linkFromState(state, language);
  const anchor = fragmentParams(currentHash, PARAM_NAMES) ? '' : currentHash;
  return `${search}${hash || anchor}`;
}

// The mask text `text` reduced to what applies in `mode` ('self' or 'cross').
export function maskInMode(text, mode) {
  return formatMask(maskForMode(parseMask(text), mode));
}

// The query string of `state`, leaving out what equals the defaults of `language`.
export function searchFromState(state, language = 'en') {
  const defaults = defaultState(language);
  const params = new URLSearchParams();
  for (const [field, name] of Object.entries(PARAMS)) {
    let value = state[field];
    if (['head', 'layer', 'surgeryLayer'].includes(field)) value = state[field] + 1;
    if (state[field] === defaults[field]) continue;
    if (field === 'source' && state.mode !== 'cross') continue;
    if ((field === 'query' || field === 'key') && value < 0) continue;
    if (field === 'model' && value === 'files') continue;
    if (MODEL_FIELDS.includes(field) && !realModel(state)) continue;
    if (field === 'words' || field === 'block') value = value ? 1 : 0;
    params.set(name, String(value));
  }
  const search = params.toString();
  return search ? `?${search}` : '';
}

// The settings that belong to a real model: left out of the link of the untrained layer.
const MODEL_FIELDS = [
  'revision',
  'dtype',
  'layer',
  'surgery',
  'surgeryLayer',
  'words',
  'pair',
  'block',
  'overlay',
  'second',
];
const realModel = (state) => state.model !== '' && state.model !== 'files';

// Temperature slider position (0..TEMPERATURE_STEPS) <-> value on a log scale from 0.1 to 10,
// rounded to two significant digits.
export function temperatureFromSlider(position) {
  const [lo, hi] = TEMPERATURE_RANGE;
  return Number((lo * (hi / lo) ** (position / TEMPERATURE_STEPS)).toPrecision(2));
}

export function sliderFromTemperature(value) {
  const [lo, hi] = TEMPERATURE_RANGE;
  return Math.round((Math.log(value / lo) / Math.log(hi / lo)) * TEMPERATURE_STEPS);
}

// Slider position (0..HEAD_DIMS.length - 1) <-> d_k.
export function headDimFromSlider(position) {
  return HEAD_DIMS[Math.max(0, Math.min(HEAD_DIMS.length - 1, position))];
}

export function sliderFromHeadDim(dk) {
  return Math.max(0, HEAD_DIMS.indexOf(dk));
}
