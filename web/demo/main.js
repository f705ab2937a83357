// The demo page: holds the state, asks the compute thread for results, and hands them to the
// views. Text input is debounced and every request is latest-wins, so typing stays smooth while
// the wasm engine works in a worker.
import { cssGradient } from '../src/views/colormap.js';
import { el, formatWeight, shortLabel, tokenLabel } from '../src/views/dom.js';
import {
  downloadBlob,
  matrixPNG,
  matrixSVG,
  svgElementToString,
  svgStringToPNG,
} from '../src/views/export.js';
import { HeadsGrid } from '../src/views/heads-grid.js';
import { Heatmap } from '../src/views/heatmap.js';
import { LineView } from '../src/views/lineview.js';
import { parseMask } from '../src/mask-notation.js';
import { DEFAULT_THEME, visibleMax } from '../src/views/matrix-paint.js';
import { renderWeightsTable } from '../src/views/weights-table.js';
import { DEFAULT_SEED, GRAPHIC_VIEWS } from '../src/vocabulary.js';
import { ComputeClient } from './compute-client.js';
import { Controls } from './controls.js';
import { CostPanel, BENCH_LENGTH } from './cost.js';
import { defaultQuery } from './default-focus.js';
import { EXAMPLES } from './examples.js';
import { ExplainPanel } from './explain.js';
import {
  detectLanguage,
  language,
  scoreName,
  setLanguage,
  t,
  tNodes,
  translateDocument,
} from './i18n.js';
import { IDEAS } from './ideas.js';
import { searchFromState, stateFromSearch } from './state.js';

const TEXT_DEBOUNCE_MS = 140;
const URL_DEBOUNCE_MS = 300;
// Past this many cells the full numbers table is built only while the Numbers view is open;
// otherwise the background copy for screen readers holds the focused query's row (the heatmap
// announces any cell as the arrow keys reach it).
const BACKGROUND_TABLE_CELLS = 4096;
// Fields whose change needs a new computation; the rest only redraw.
const COMPUTED = [
  'mode',
  'text',
  'source',
  'heads',
  'mask',
  'compare',
  'score',
  'temperature',
  'granularity',
  'backend',
];

const $ = (id) => document.getElementById(id);

let state = stateFromSearch(location.search);
let result = null;
let computeTimer = 0;
let urlTimer = 0;
let pendingQueryText = null;
const client = new ComputeClient();

setLanguage(state.lang || detectLanguage());
translateDocument();

const controls = new Controls({ update, getState: () => state });
const heatmapA = new Heatmap($('heatmap-a'), {
  onSelect: (row, col) => update({ query: row, key: col }),
  describe: (row, col) => describeCell(row, col, false),
});
const heatmapB = new Heatmap($('heatmap-b'), {
  onSelect: (row, col) => update({ query: row, key: col }),
  describe: (row, col) => describeCell(row, col, true),
});
const lineView = new LineView($('lines'), { onSelect: (row) => update({ query: row, key: -1 }) });
const headsGrid = new HeadsGrid($('heads-grid'), {
  onSelect: (head) => update({ head, view: 'matrix' }),
  headLabel: (h) => t('headN', { n: h + 1 }),
});
const explain = new ExplainPanel($('explain-body'), { onPickKey: (key) => update({ key }) });
const cost = new CostPanel($('cost-body'), {
  runBenchmark: async () => ({
    ...(await client.request('bench', 'benchmark', {
      heads: state.heads,
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
  if (changed.includes('lang')) {
    setLanguage(state.lang);
    translateDocument();
  }
  controls.sync(state, result);
  scheduleUrl();
  if (changed.some((k) => COMPUTED.includes(k))) {
    const typing = changed.includes('text') || changed.includes('source');
    scheduleCompute(typing && !immediate ? TEXT_DEBOUNCE_MS : 0);
  } else {
    render();
  }
}

function scheduleUrl() {
  clearTimeout(urlTimer);
  urlTimer = setTimeout(() => {
    history.replaceState(null, '', `${location.pathname}${searchFromState(state)}${location.hash}`);
  }, URL_DEBOUNCE_MS);
}

function scheduleCompute(delay) {
  clearTimeout(computeTimer);
  $('status-line').classList.remove('is-error');
  computeTimer = setTimeout(compute, delay);
}

async function compute() {
  const params = {
    mode: state.mode,
    text: state.text,
    source: state.source,
    heads: state.heads,
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
    showError(error);
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

function showError(error) {
  const line = $('status-line');
  line.classList.add('is-error');
  line.textContent = t('errorPrefix', { message: error.message });
}

// ---------- rendering ----------

function currentHead() {
  return Math.min(state.head, result.heads.length - 1);
}

// The query row being explained: the reader's pick (state.query, also in the URL), else the
// default for this text; -1 only when there is nothing to explain.
function focusedQuery() {
  if (!result || result.empty) return -1;
  const rows = result.rowTokens.length;
  return state.query >= 0 && state.query < rows
    ? state.query
    : defaultQuery(result.rowTokens, state);
}

function describeCell(row, col, compared) {
  const source = compared ? result.compare : result;
  const cols = result.colTokens.length;
  const i = row * cols + col;
  const weights = source.heads[currentHead()].weights;
  const value = source.mask[i] ? formatWeight(weights[i]) : t('maskedWord');
  return `${tokenLabel(result.rowTokens[row].text)} → ${tokenLabel(result.colTokens[col].text)}: ${value}`;
}

function rowStats(heads) {
  return {
    values: heads[currentHead()].entropy,
    max: Math.log2(result.colTokens.length),
    label: t('entropyColumn'),
  };
}

function render() {
  renderViewChrome();
  $('engine-badge').dataset.state = result ? 'ready' : $('engine-badge').dataset.state;
  if (result)
    $('engine-badge').textContent = t('engineReady', {
      backend: result.backend,
      where: client.where === 'worker' ? 'worker' : 'main thread',
    });
  renderTokenStrip();
  if (!result) return;
  $('stage').classList.toggle('is-empty', result.empty);
  if (result.empty) {
    $('status-line').textContent = t('emptyText');
    $('view-caption').textContent = t('emptyText');
    $('weights-table').replaceChildren();
    explain.render(result, state);
    cost.render(result, state, client.where);
    return;
  }
  const head = currentHead();
  const rows = result.rowTokens.length;
  const cols = result.colTokens.length;
  const query = focusedQuery();
  const compare = result.compare;
  const top =
    state.range === 'unit'
      ? 1
      : Math.max(
          visibleMax(result.heads[head].weights, result.mask),
          compare ? visibleMax(compare.heads[head].weights, compare.mask) : 0,
        ) || 1;
  const common = {
    rowTokens: result.rowTokens,
    colTokens: result.colTokens,
    scale: state.scale,
    range: [0, top],
  };

  $('status-line').textContent = `${
    state.mode === 'cross'
      ? t('tokensCountCross', { nt: rows, ns: cols })
      : t('tokensCount', { n: rows })
  } · ${t('clickTokenHint')}`;
  $('view-caption').replaceChildren(
    state.mode === 'cross'
      ? tNodes('captionCross', {
          nt: rows,
          ns: cols,
          head: head + 1,
          heads: result.heads.length,
          score: scoreName(state.score),
          t: state.temperature.toFixed(2),
        })
      : tNodes('captionSelf', {
          n: rows,
          head: head + 1,
          heads: result.heads.length,
          score: scoreName(state.score),
          t: state.temperature.toFixed(2),
          mask: state.mask,
        }),
  );

  const pair = $('matrix-pair');
  pair.classList.toggle('comparing', Boolean(compare));
  $('compare-figure').hidden = !compare;
  $('matrix-caption-a').replaceChildren(t('maskCaption'), ' ', el('code', { text: state.mask }));
  $('matrix-caption-a').hidden = !compare;
  heatmapA.canvas.setAttribute('aria-label', t('heatmapLabel'));
  heatmapA.canvas.setAttribute('aria-roledescription', t('heatmapRole'));
  heatmapA.setLockedRow(query);
  if (state.view === 'matrix') {
    heatmapA.setData({
      ...common,
      weights: result.heads[head].weights,
      mask: result.mask,
      rowStats: rowStats(result.heads),
    });
    if (compare) {
      $('matrix-caption-b').replaceChildren(
        t('maskCaption'),
        ' ',
        el('code', { text: state.compare }),
      );
      heatmapB.canvas.setAttribute('aria-label', t('heatmapLabel'));
      heatmapB.setLockedRow(query);
      heatmapB.setData({
        ...common,
        weights: compare.heads[head].weights,
        mask: compare.mask,
        rowStats: rowStats(compare.heads),
      });
    }
  }
  if (state.view === 'lines') {
    lineView.options.label = t('linesLabel');
    lineView.options.strings = {
      queries: state.mode === 'cross' ? t('targetQueries') : t('queries'),
      keys: state.mode === 'cross' ? t('sourceKeys') : t('keys'),
    };
    // Only a query the reader picked filters the lines; the default one leaves the overview.
    lineView.locked =
      state.query >= 0 && state.query < rows ? { side: 'query', index: state.query } : null;
    lineView.setData({
      ...common,
      weights: result.heads[head].weights,
      mask: result.mask,
      orientation: state.orientation,
    });
  }
  if (state.view === 'heads') {
    headsGrid.setData({
      heads: result.heads.map((h) => ({ weights: h.weights, mask: result.mask })),
      rows,
      cols,
      scale: state.scale,
      selected: head,
      entropies: result.heads.map((h) => h.entropy.reduce((a, b) => a + b, 0) / rows),
    });
  }
  renderTable(head, query);
  renderLegend(top);
  renderEntropy(head);
  explain.render(result, { ...state, head, query });
  cost.render(result, state, client.where);
}

function renderTable(head, query) {
  const rows = result.rowTokens.length;
  const cols = result.colTokens.length;
  const table = $('weights-table');
  const data = {
    rowTokens: result.rowTokens,
    colTokens: result.colTokens,
    weights: result.heads[head].weights,
    mask: result.mask,
    caption: t('tableCaption', { head: head + 1 }),
    corner: t('tableCorner'),
    masked: t('maskedWord'),
    focusRow: query,
  };
  if (rows * cols > BACKGROUND_TABLE_CELLS && state.view !== 'numbers') {
    const row = Math.max(0, query);
    renderWeightsTable(table, {
      ...data,
      rowTokens: [result.rowTokens[row]],
      focusRow: 0,
      weights: data.weights.subarray(row * cols, (row + 1) * cols),
      mask: data.mask.subarray(row * cols, (row + 1) * cols),
      caption: `${t('tableCaption', { head: head + 1 })} ${t('tablePartial', { n: row + 1 })}`,
    });
    return;
  }
  renderWeightsTable(table, data);
}

function renderLegend(top) {
  $('legend-bar').style.background = cssGradient(state.scale);
  $('legend-lo').textContent = '0';
  $('legend-hi').textContent = top.toFixed(2);
}

function renderEntropy(head) {
  const values = [];
  const cols = result.colTokens.length;
  result.heads[head].entropy.forEach((h, r) => {
    let visible = false;
    for (let c = 0; c < cols && !visible; c++) visible = result.mask[r * cols + c] !== 0;
    if (visible) values.push(h);
  });
  if (!values.length) {
    $('entropy-readout').textContent = '';
    return;
  }
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  $('entropy-readout').replaceChildren(
    ...tNodes('entropyReadout', {
      mean: mean.toFixed(2),
      min: Math.min(...values).toFixed(2),
      max: Math.max(...values).toFixed(2),
      n: cols,
      uniform: Math.log2(cols).toFixed(2),
    }).childNodes,
  );
}

function renderViewChrome() {
  for (const tab of document.querySelectorAll('#view-tabs [role="tab"]')) {
    const selected = tab.dataset.view === state.view;
    tab.setAttribute('aria-selected', String(selected));
    tab.tabIndex = selected ? 0 : -1;
  }
  for (const view of GRAPHIC_VIEWS) $(`panel-${view}`).hidden = state.view !== view;
  // The numbers table stays in the accessibility tree under every view (screen readers read it);
  // only the Numbers tab shows it on screen.
  $('panel-numbers').classList.toggle('is-background', state.view !== 'numbers');
  $('panel-numbers').setAttribute('aria-hidden', 'false');
  $('zoom-tools').hidden = state.view !== 'matrix';
  $('legend-help').hidden = state.view !== 'matrix'; // its keys are the heatmap's
  $('line-tools').hidden = state.view !== 'lines';
  for (const button of document.querySelectorAll('.lang-switch button')) {
    button.setAttribute('aria-pressed', String(button.dataset.lang === language()));
  }
  $('source-field').hidden = state.mode !== 'cross';
  $('texts').classList.toggle('cross', state.mode === 'cross');
  $('text-label').textContent = state.mode === 'cross' ? t('targetLabel') : t('textLabel');
  $('text-hint').textContent = state.mode === 'cross' ? t('targetHint') : t('textHint');
  if ($('main-text').value !== state.text) $('main-text').value = state.text;
  if ($('source-text').value !== state.source) $('source-text').value = state.source;
  for (const button of $('examples').querySelectorAll('button')) {
    const example = EXAMPLES.find((e) => e.id === button.dataset.example);
    button.textContent = t(example.label);
    const active =
      example.mode === state.mode &&
      example.text === state.text &&
      (example.mode !== 'cross' || example.source === state.source);
    button.setAttribute('aria-pressed', String(active));
  }
}

function tokenChip(token, index, { pressed, global, onclick }) {
  return el(
    'button',
    {
      type: 'button',
      class: `token-chip${global ? ' is-global' : ''}`,
      'aria-pressed': String(pressed),
      onclick,
      title: tokenLabel(token.text),
    },
    shortLabel(token.text, 16),
    el('sub', { text: String(index + 1) }),
  );
}

function renderTokenStrip() {
  const strip = $('token-strip');
  if (!result || result.empty) {
    strip.replaceChildren();
    return;
  }
  const globals = new Set(parseMask(state.mask).globalTokens);
  const query = focusedQuery();
  const queries = result.rowTokens.map((token, i) =>
    tokenChip(token, i, {
      pressed: i === query,
      global: state.mode === 'self' && globals.has(i),
      onclick: () => update({ query: i }),
    }),
  );
  if (state.mode === 'self') {
    strip.className = 'token-strip';
    strip.replaceChildren(...queries);
    return;
  }
  const keys = result.colTokens.map((token, i) =>
    tokenChip(token, i, {
      pressed: i === state.key,
      global: globals.has(i),
      onclick: () => update({ key: i === state.key ? -1 : i }),
    }),
  );
  strip.className = 'token-strip cross-strip';
  strip.replaceChildren(
    el('span', { class: 'strip-label', text: t('targetQueries') }),
    el('div', { class: 'strip-row' }, queries),
    el('span', { class: 'strip-label', text: t('sourceKeys') }),
    el('div', { class: 'strip-row' }, keys),
  );
}

// ---------- exports ----------

function figure() {
  const head = currentHead();
  // Exports use the light palette whatever the page shows: they end up in documents and slides.
  const theme = DEFAULT_THEME;
  const top = state.range === 'unit' ? 1 : visibleMax(result.heads[head].weights, result.mask) || 1;
  return {
    rowTokens: result.rowTokens,
    colTokens: result.colTokens,
    weights: result.heads[head].weights,
    mask: result.mask,
    scale: state.scale,
    range: [0, top],
    theme,
    title: `attnlens · ${state.mode === 'cross' ? t('modeCross') : t('modeSelf')} · ${t('headN', { n: head + 1 })}`,
    subtitle: `${scoreName(state.score)} · T = ${state.temperature.toFixed(2)} · mask ${state.mask} · ${result.backend}`,
  };
}

function fileBase() {
  return `attnlens-${state.mode}-head${currentHead() + 1}`;
}

async function exportPNG() {
  if (!result || result.empty) return;
  if (state.view === 'lines' && lineView.svg) {
    const svg = svgElementToString(lineView.svg, DEFAULT_THEME.background);
    downloadBlob(
      await svgStringToPNG(
        svg,
        lineView.svg.width.baseVal.value,
        lineView.svg.height.baseVal.value,
      ),
      `${fileBase()}-lines.png`,
    );
    return;
  }
  downloadBlob(await matrixPNG(figure()), `${fileBase()}.png`);
}

function exportSVG() {
  if (!result || result.empty) return;
  const text =
    state.view === 'lines' && lineView.svg
      ? svgElementToString(lineView.svg, DEFAULT_THEME.background)
      : matrixSVG(figure());
  downloadBlob(
    new Blob([text], { type: 'image/svg+xml' }),
    `${fileBase()}${state.view === 'lines' ? '-lines' : ''}.svg`,
  );
}

function exportJSON() {
  if (!result || result.empty) return;
  const cols = result.colTokens.length;
  const matrix = (flat) =>
    result.rowTokens.map((_, r) => Array.from(flat.subarray(r * cols, (r + 1) * cols)));
  const payload = {
    generator: 'attnlens demo',
    link: location.href,
    settings: {
      mode: state.mode,
      text: state.text,
      source: state.mode === 'cross' ? state.source : undefined,
      heads: state.heads,
      headDim: result.headDim,
      seed: DEFAULT_SEED,
      mask: state.mask,
      compare: state.compare || undefined,
      score: state.score,
      temperature: state.temperature,
      granularity: state.granularity,
    },
    backend: result.backend,
    timing: { engineMs: result.timing.engineMs, totalMs: result.timing.totalMs },
    queryTokens: result.rowTokens,
    keyTokens: result.colTokens,
    mask: matrix(result.mask),
    heads: result.heads.map((h) => ({
      weights: matrix(h.weights),
      scores: matrix(h.scores),
      entropy: Array.from(h.entropy),
    })),
  };
  downloadBlob(
    new Blob([JSON.stringify(payload, null, 1)], { type: 'application/json' }),
    `${fileBase()}.json`,
  );
}

async function copyLink() {
  clearTimeout(urlTimer);
  history.replaceState(null, '', `${location.pathname}${searchFromState(state)}${location.hash}`);
  const button = $('copy-link');
  try {
    await navigator.clipboard.writeText(location.href);
    button.textContent = t('linkCopied');
  } catch {
    button.textContent = t('linkInAddressBar');
  }
  setTimeout(() => {
    button.textContent = t('copyLink');
  }, 1800);
}

// ---------- wiring ----------

function wire() {
  $('main-text').addEventListener('input', (event) => update({ text: event.target.value }));
  $('source-text').addEventListener('input', (event) => update({ source: event.target.value }));
  $('examples').replaceChildren(
    ...EXAMPLES.map((example) =>
      el(
        'button',
        {
          type: 'button',
          dataset: { example: example.id },
          'aria-pressed': 'false',
          onclick: () =>
            update(
              {
                mode: example.mode,
                text: example.text,
                source: example.source ?? state.source,
                granularity: example.granularity ?? state.granularity,
                query: -1,
                key: -1,
              },
              { immediate: true },
            ),
        },
        t(example.label),
      ),
    ),
  );
  $('primer').replaceChildren(
    ...IDEAS.map((idea) =>
      el(
        'article',
        { class: 'idea' },
        el('h3', { dataset: { i18n: idea.title }, text: t(idea.title) }),
        el('p', { dataset: { i18n: idea.text }, text: t(idea.text) }),
        el('button', {
          type: 'button',
          dataset: { i18n: 'tryIt' },
          text: t('tryIt'),
          onclick: () => {
            const { queryText, ...patch } = idea.patch;
            pendingQueryText = queryText ?? null;
            update({ ...patch, query: -1, key: -1 }, { immediate: true });
            if (pendingQueryText !== null) scheduleCompute(0);
            $('stage').focus({ preventScroll: true });
            $('stage').scrollIntoView({
              behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth',
              block: 'start',
            });
          },
        }),
      ),
    ),
  );
  const tabs = [...document.querySelectorAll('#view-tabs [role="tab"]')];
  for (const tab of tabs) {
    tab.addEventListener('click', () => update({ view: tab.dataset.view }));
    tab.addEventListener('keydown', (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      event.preventDefault();
      const next = tabs[(tabs.indexOf(tab) + step + tabs.length) % tabs.length];
      next.focus();
      update({ view: next.dataset.view });
    });
  }
  for (const button of document.querySelectorAll('.lang-switch button')) {
    button.addEventListener('click', () => update({ lang: button.dataset.lang }));
  }
  $('zoom-in').addEventListener('click', () => {
    heatmapA.zoomBy(1.25);
    heatmapB.zoomBy(1.25);
  });
  $('zoom-out').addEventListener('click', () => {
    heatmapA.zoomBy(0.8);
    heatmapB.zoomBy(0.8);
  });
  $('zoom-reset').addEventListener('click', () => {
    heatmapA.setZoom(1);
    heatmapB.setZoom(1);
  });
  $('export-png').addEventListener('click', exportPNG);
  $('export-svg').addEventListener('click', exportSVG);
  $('export-json').addEventListener('click', exportJSON);
  $('copy-link').addEventListener('click', copyLink);
  if (matchMedia('(max-width: 900px)').matches) $('controls-details').open = false;
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', render);
}

wire();
controls.sync(state, null);
render();
client.ready.then(
  () => {
    document.body.dataset.engine = client.where;
    offerBackends();
  },
  () => {
    $('engine-badge').dataset.state = 'error';
    $('engine-badge').textContent = t('engineError');
  },
);
compute();
