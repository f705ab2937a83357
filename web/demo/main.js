// The demo page's controller: holds the state, asks the compute thread for results, and hands
// both to the panels (composer, token strip, settings, stage, numbers table, explain, cost).
// Text input is debounced and every request is latest-wins, so typing stays smooth while the
// wasm engine works in a worker.
import { parseMask } from '../src/mask-notation.js';
import { DEFAULT_SEED } from '../src/vocabulary.js';
import { ComputeClient } from './compute-client.js';
import { Composer } from './composer.js';
import { Controls } from './controls.js';
import { BENCH_LENGTH, CostPanel } from './cost.js';
import { elements } from './elements.js';
import { ExplainPanel } from './explain.js';
import { bindExports } from './exports.js';
import { detectLanguage, language, setLanguage, t, translateDocument } from './i18n.js';
import { LearnPanel } from './learn/learn-panel.js';
import { renderNumbersTable } from './numbers-table.js';
import { renderPrimer } from './primer.js';
import { currentHead, focusedQuery } from './selection.js';
import { Stage } from './stage.js';
import { HEAD_DIMS, addressFromState, readLink, resetState } from './state.js';
import { TokenStrip } from './token-strip.js';
import { ModelPage } from './model/page.js';

const TEXT_DEBOUNCE_MS = 140;
const URL_DEBOUNCE_MS = 300;
// Fields whose change needs a new computation; the rest only redraw.
const COMPUTED = [
  'mode',
  'text',
  'source',
  'heads',
  'dk',
  'mask',
  'compare',
  'score',
  'temperature',
  'granularity',
  'backend',
];

const link = readLink(location.search, location.hash, detectLanguage());
// A picture's snapshot named by the address (?snapshot=picture.json) opens in a Picture panel of
// its own, drawn with no model and no compute (model/page.js), and stays in the address while
// that panel is open.
const snapshotAddress = new URLSearchParams(location.search).get('snapshot');
let state = link.state;
// What the link asked for that could not be used: shown until the reader changes a setting.
let linkProblems = link.problems;
let result = null;
let spread = null; // the score spread at every d_k (scoreSpread in compute-core.js)
let spreadKey = '';
let computeTimer = 0;
let urlTimer = 0;
let pendingQueryText = null;
const client = new ComputeClient();
const getState = () => state;
// What the views show: the untrained layer's result, or the shown layer of a real model.
const getResult = () => (state.model ? modelPage.viewResult() : result);

setLanguage(state.lang || detectLanguage());
translateDocument();
document.body.dataset.language = language();

const controls = new Controls(elements, { update, getState });
const composer = new Composer(elements, { update, getState });
const tokenStrip = new TokenStrip(elements.tokenStrip, { update, getState });
const stage = new Stage(elements, { update, getState, getResult });
const explain = new ExplainPanel(elements.explainBody, { onPickKey: (key) => update({ key }) });
// A real model's side of the page (model/page.js): picker, views, predictions, explain.
const modelPage = new ModelPage(elements, {
  client,
  update,
  getState,
  explain,
  tokenStrip,
  stage,
  controls,
  composer,
  computePlayground: () => scheduleCompute(0),
  // The model trained in "Watch it learn", which "Compare two models" may put beside this one.
  trainedModel: () => learn.trainedModel(),
});
const learn = new LearnPanel(elements.learn);
const cost = new CostPanel(elements.costBody, {
  runBenchmark: async () => ({
    ...(await client.request('bench', 'benchmark', {
      heads: state.heads,
      headDim: state.dk,
      length: BENCH_LENGTH,
      mask: parseMask(state.mask),
      temperature: state.temperature,
      backend: state.backend,
    })),
    mask: state.mask,
  }),
});

// ---------- state ----------

function update(patch, { immediate = false } = {}) {
  const changed = Object.keys(patch).filter((k) => patch[k] !== state[k]);
  if (!changed.length) return;
  state = { ...state, ...patch };
  if (linkProblems.length && changed.some((k) => k !== 'lang')) linkProblems = [];
  if (changed.includes('lang')) {
    setLanguage(state.lang);
    translateDocument();
    document.body.dataset.language = language();
    renderPrimer(elements.primer, tryIdea);
    learn.relabel();
  }
  scheduleUrl();
  if (state.model || changed.includes('model')) {
    modelPage.changed(changed, immediate);
    return;
  }
  controls.sync(state, result);
  if (changed.some((k) => COMPUTED.includes(k))) {
    const typing = changed.includes('text') || changed.includes('source');
    scheduleCompute(typing && !immediate ? TEXT_DEBOUNCE_MS : 0);
  } else {
    render();
  }
}

function writeUrl() {
  clearTimeout(urlTimer);
  let address = addressFromState(state, location.hash, language());
  if (snapshotAddress && modelPage.showsPictureSnapshot()) {
    const at = address.indexOf('#');
    const params = new URLSearchParams(at < 0 ? address : address.slice(0, at));
    params.set('snapshot', snapshotAddress);
    address = `?${params}${at < 0 ? '' : address.slice(at)}`;
  }
  history.replaceState(null, '', `${location.pathname}${address}`);
}

function scheduleUrl() {
  clearTimeout(urlTimer);
  urlTimer = setTimeout(writeUrl, URL_DEBOUNCE_MS);
}

function scheduleCompute(delay) {
  clearTimeout(computeTimer);
  composer.clearError();
  computeTimer = setTimeout(compute, delay);
}

async function compute() {
  if (state.model) return; // a real model computes through modelPage
  const params = {
    mode: state.mode,
    text: state.text,
    source: state.source,
    heads: state.heads,
    headDim: state.dk,
    seed: DEFAULT_SEED,
    granularity: state.granularity,
    score: state.score,
    temperature: state.temperature,
    mask: parseMask(state.mask),
    compare: state.compare ? parseMask(state.compare) : null,
    backend: state.backend,
  };
  let next;
  try {
    next = await client.request('view', 'view', params);
  } catch (error) {
    composer.showError(error);
    return;
  }
  if (!next) return; // superseded by a newer request
  result = next;
  if (pendingQueryText !== null && !result.empty) {
    const index = result.rowTokens.findIndex(
      (token) => token.text.toLowerCase() === pendingQueryText,
    );
    if (index >= 0) state = { ...state, query: index, key: -1 };
    pendingQueryText = null;
    scheduleUrl();
  }
  document.body.dataset.computed = String(Number(document.body.dataset.computed ?? 0) + 1);
  controls.sync(state, result);
  render();
  measureSpread(params);
}

// The spread of raw scores at every d_k depends on the texts and heads only: measured again
// when those change, after the view it belongs to is on screen.
async function measureSpread({ mode, text, source, heads, seed, granularity, backend }) {
  const params = { mode, text, source: mode === 'cross' ? source : '', heads, seed, granularity };
  const key = JSON.stringify(params);
  if (key === spreadKey) return;
  spreadKey = key;
  spread = null;
  let next;
  try {
    next = await client.request('spread', 'spread', { ...params, backend, headDims: HEAD_DIMS });
  } catch {
    spreadKey = ''; // shown as not measured; a later view asks again
    return;
  }
  if (!next || key !== spreadKey) return;
  spread = next;
  document.body.dataset.spread = String(Number(document.body.dataset.spread ?? 0) + 1);
  render();
}

// The backend picker offers WebGPU only where the compute thread finds an adapter; a link that
// asks for WebGPU elsewhere falls back to auto.
async function offerBackends() {
  let detected = { available: false };
  try {
    ({ webgpu: detected } = await client.request('capabilities', 'capabilities', {}));
  } catch {
    // Detection failing is the same as no WebGPU.
  }
  controls.offerWebGpu(detected);
  document.body.dataset.webgpu = detected.available ? 'available' : 'unavailable';
  if (!detected.available && state.backend === 'webgpu') update({ backend: 'auto' });
}

// ---------- rendering ----------

// Where the engine runs, in the page's language.
function whereName() {
  return client.where === 'worker' ? t('whereWorker') : t('whereMainThread');
}

function renderMasthead() {
  const badge = elements.engineBadge;
  // An empty text has no run and so no backend: the badge keeps the last one it showed.
  if (result && !result.empty) {
    badge.dataset.state = 'ready';
    badge.textContent = t('engineReady', { backend: result.backend, where: whereName() });
  }
  for (const button of elements.languageButtons) {
    button.setAttribute('aria-pressed', String(button.dataset.lang === language()));
  }
}

function render() {
  renderMasthead();
  composer.showLinkProblems(linkProblems);
  if (state.model) {
    modelPage.render();
    return;
  }
  modelPage.showPlayground();
  stage.renderChrome(state);
  composer.render(state);
  tokenStrip.render(state, result);
  if (!result) return;
  elements.stage.classList.toggle('is-empty', result.empty);
  if (result.empty) {
    composer.showEmpty();
    stage.renderEmpty();
    elements.weightsTable.replaceChildren();
    controls.showEntropy(result, 0);
    explain.render(result, state);
    cost.render(result, state, whereName());
    return;
  }
  const head = currentHead(state, result);
  const query = focusedQuery(state, result);
  composer.showCounts(state, result);
  stage.render(state, result, { head, query });
  renderNumbersTable(elements.weightsTable, state, result, { head, query });
  controls.showEntropy(result, head);
  explain.render(result, { ...state, head, query }, spread);
  cost.render(result, state, whereName());
}

// ---------- wiring ----------

// A "Things to try" card: every setting it depends on (the defaults, then its own), and the query
// it is about once the result is in.
// A card's "Open in a real model" picks the model and shows the card's view there; nothing
// downloads until the reader presses Load (a model already in the cache loads at once).
function tryIdea(idea, real = false) {
  const { queryText, ...patch } = real ? idea.real : { model: '', ...idea.patch };
  if (real) {
    modelPage.focusQueryText(queryText ?? null);
    update({ ...resetState(state, language()), ...patch }, { immediate: true });
  } else {
    pendingQueryText = queryText ?? null;
    update({ ...resetState(state, language()), ...patch }, { immediate: true });
    if (pendingQueryText !== null) scheduleCompute(0);
  }
  elements.stage.focus({ preventScroll: true });
  elements.stage.scrollIntoView({
    behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth',
    block: 'start',
  });
}

renderPrimer(elements.primer, tryIdea);
elements.resetButton.addEventListener('click', () =>
  update(resetState(state, language()), { immediate: true }),
);
for (const button of elements.languageButtons) {
  button.addEventListener('click', () => update({ lang: button.dataset.lang }));
}
bindExports(elements, {
  getState,
  getResult,
  getLineView: () => {
    const lines = state.view === 'overlay' ? modelPage.stage.lines : stage.lineView;
    return { lineSvg: lines.svg, lineRange: lines.data?.range };
  },
  writeUrl,
});
// A link pasted into the address bar of an open demo changes only the fragment when its settings
// are long (state.js): read it as a new link.
addEventListener('hashchange', () => {
  const next = readLink(location.search, location.hash, detectLanguage());
  if (!next.fromFragment) return;
  update(next.state, { immediate: true });
  linkProblems = next.problems;
  render();
});
if (matchMedia('(max-width: 900px)').matches) elements.controlsDetails.open = false;
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', render);

controls.sync(state, null);
render();
if (state.model) modelPage.changed(['model'], true);
if (snapshotAddress) modelPage.openPictureSnapshot(snapshotAddress);
// The address in its own form from the start: without the values it could not use, and with a
// long old-style ?query moved into the fragment.
scheduleUrl();
client.ready.then(
  () => {
    document.body.dataset.engine = client.where;
    offerBackends();
  },
  () => {
    elements.engineBadge.dataset.state = 'error';
    elements.engineBadge.textContent = t('engineError');
  },
);
compute();
