// The demo's whole state, and its round trip through the URL: every setting that changes what
// is drawn is in the link, so a shared link reproduces the view. Defaults are left out of the
// URL to keep links short; the settings go in the query string, or in the fragment once they are
// long (share-link.js), and both are read. Unknown or malformed values fall back to defaults,
// and readLink() lists them, so the page can say which part of a link it could not use.
import { readChoice, readIntegerIn } from '../src/argument-checks.js';
import { fragmentParams, placeParams, readParams } from '../src/share-link.js';
import { LANGUAGES } from '../src/i18n/translate.js';
import { DEFAULT_SCALE, SCALE_NAMES } from '../src/views/colormap.js';
import { formatMask, parseMask } from '../src/mask-notation.js';
import {
  DEFAULT_GRANULARITY,
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

export function defaultState() {
  return {
    mode: 'self',
    text: EXAMPLES[0].text,
    source: EXAMPLES[3].source,
    heads: DEFAULT_HEADS,
    head: 0,
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
  };
}

const ENUMS = {
  mode: ['self', 'cross'],
  score: SCORES,
  granularity: GRANULARITIES,
  view: VIEWS,
  scale: SCALE_NAMES,
  range: ['max', 'unit'],
  orientation: ['auto', 'vertical', 'horizontal'],
  lang: LANGUAGES,
  backend: ['auto', 'wasm', 'webgpu'],
};

// URL parameter name for each state field.
const PARAMS = {
  mode: 'mode',
  text: 'text',
  source: 'source',
  heads: 'heads',
  head: 'head',
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
};

function validMask(text) {
  try {
    return formatMask(parseMask(text));
  } catch {
    return null;
  }
}

const PARAM_NAMES = Object.values(PARAMS);

/**
 * The state a link describes ("?text=...&mask=causal", or the same in its fragment), starting
 * from the defaults. `problems` lists each parameter whose value could not be used, as
 * { param, value }; the state has that setting's default instead. `fromFragment`: the settings
 * came from the fragment.
 */
export function readLink(search, hash = '') {
  const state = defaultState();
  const problems = [];
  const params = readParams(search, hash, PARAM_NAMES);
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
  use('head', (text) => {
    const head = readIntegerIn(text, 1, state.heads);
    return head === null ? null : head - 1;
  });
  use('query', (text) => readIntegerIn(text, 0, 1e6));
  use('key', (text) => readIntegerIn(text, 0, 1e6));
  use('mask', validMask);
  use('compare', (text) => (text === '' ? '' : validMask(text)));
  use('temperature', (text) => {
    const t = Number(text);
    return text.trim() !== '' && t >= TEMPERATURE_RANGE[0] && t <= TEMPERATURE_RANGE[1] ? t : null;
  });
  return { state, problems, fromFragment };
}

/** readLink()'s state alone. */
export function stateFromSearch(search, hash = '') {
  return readLink(search, hash).state;
}

/**
 * The link of a state, as { search, hash } for the page's address: the settings in the query
 * string, or in the fragment (and an empty query) when they are long (share-link.js).
 */
export function linkFromState(state) {
  return placeParams(new URLSearchParams(searchFromState(state)));
}

/**
 * The page's address for a state, without its path: linkFromState()'s query and fragment, and
 * `currentHash` kept when it is an anchor (such as "#stage") and the settings leave the fragment
 * free.
 */
export function addressFromState(state, currentHash = '') {
  const { search, hash } = linkFromState(state);
  const anchor = fragmentParams(currentHash, PARAM_NAMES) ? '' : currentHash;
  return `${search}${hash || anchor}`;
}

export function searchFromState(state) {
  const defaults = defaultState();
  const params = new URLSearchParams();
  for (const [field, name] of Object.entries(PARAMS)) {
    let value = state[field];
    if (field === 'head') value = state.head + 1;
    if (field === 'head' ? state.head === defaults.head : value === defaults[field]) continue;
    if (field === 'source' && state.mode !== 'cross') continue;
    if ((field === 'query' || field === 'key') && value < 0) continue;
    params.set(name, String(value));
  }
  const search = params.toString();
  return search ? `?${search}` : '';
}

// Temperature slider position (0..1000) <-> value on a log scale from 0.1 to 10.
export function temperatureFromSlider(position) {
  const [lo, hi] = TEMPERATURE_RANGE;
  const value = lo * (hi / lo) ** (position / 1000);
  return Number(value.toPrecision(value < 1 ? 2 : 3));
}

export function sliderFromTemperature(value) {
  const [lo, hi] = TEMPERATURE_RANGE;
  return Math.round((Math.log(value / lo) / Math.log(hi / lo)) * 1000);
}
