// The demo's whole state, and its round trip through the URL query string: every setting that
// changes what is drawn is in the link, so a shared link reproduces the view. Defaults are left
// out of the URL to keep links short; unknown or malformed values fall back to defaults.
import { readChoice, readIntegerIn } from '../src/argument-checks.js';
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

// Reads the state from a query string ("?text=...&mask=causal"), starting from the defaults.
export function stateFromSearch(search) {
  const state = defaultState();
  const params = new URLSearchParams(search);
  const get = (field) => params.get(PARAMS[field]);
  for (const [field, allowed] of Object.entries(ENUMS)) {
    state[field] = readChoice(get(field), allowed, state[field]);
  }
  if (get('text') !== null) state.text = get('text');
  if (get('source') !== null) state.source = get('source');
  state.heads = readIntegerIn(get('heads'), 1, MAX_PAGE_HEADS) ?? state.heads;
  state.head = readIntegerIn(get('head'), 1, state.heads) !== null ? Number(get('head')) - 1 : 0;
  state.query = readIntegerIn(get('query'), 0, 1e6) ?? -1;
  state.key = readIntegerIn(get('key'), 0, 1e6) ?? -1;
  if (get('mask') !== null) state.mask = validMask(get('mask')) ?? state.mask;
  if (get('compare')) state.compare = validMask(get('compare')) ?? '';
  const temperature = Number(get('temperature'));
  if (
    get('temperature') !== null &&
    temperature >= TEMPERATURE_RANGE[0] &&
    temperature <= TEMPERATURE_RANGE[1]
  ) {
    state.temperature = temperature;
  }
  return state;
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
