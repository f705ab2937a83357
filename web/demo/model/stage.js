// The views a real model adds to the stage: the model view (every layer x head, labelled), the
// head view (one layer's heads overlaid as lines, each in its colour) and token focus (where one
// token looks in every layer and head). Each click on a head opens it in the matrix view.
import { el, tokenLabel } from '../../src/views/dom.js';
import { FocusTable } from '../../src/views/focus-table.js';
import { LineView } from '../../src/views/lineview.js';
import { ModelGrid } from '../../src/views/model-grid.js';
import { rovingTabindex } from '../../src/views/roving.js';
import { t } from '../i18n.js';
import { shownHead } from './view.js';
import { focusedQuery } from '../selection.js';

// Okabe-Ito: eight colours told apart with every common colour-vision deficiency.
export const HEAD_COLOURS = [
  '#0072b2',
  '#e69f00',
  '#009e73',
  '#cc79a7',
  '#d55e00',
  '#56b4e9',
  '#7a6a00',
  '#000000',
];
const DEFAULT_OVERLAY = 4;

/** The distinct special tokens of a run ('[CLS]', '[SEP]'; '<s>'), in order. */
export function specialNames(result) {
  const names = (result?.tokens ?? []).filter((t) => t.special).map((t) => t.text);
  return [...new Set(names)];
}

/**
 * The head label's words: 'previous token', 'induction', the text's special tokens when they
 * are one or two ('[CLS]/[SEP]', '<s>'; else 'special tokens'), or '—' for none.
 */
export function labelName(label, specials = []) {
  if (label === 'special' && specials.length > 0 && specials.length <= 2) return specials.join('/');
  return label ? t(`headLabel:${label}`) : t('headLabelNone');
}

/** A head's label on this text with the measure behind it, for hover and screen readers. */
export function labelMeasure(label, measures, specials = []) {
  if (!label) return t('headLabelNoneHint');
  return t(`headLabelHint:${label}`, {
    value: (measures[label] ?? 0).toFixed(2),
    tokens: specials.length ? specials.join(' ') : t('headLabel:special'),
  });
}

/** The label a head shows: its job on the probe when it earns one, else its label here. */
export const shownLabel = (labels, score) => score?.label ?? labels.label;

/**
 * The measures behind a head's label: its scores on the model's probe (score; null while they
 * are measured, probeError when that failed), then its label on this text and why.
 */
export function headMeasuresText({ label, measures }, score, { probeError, specials } = {}) {
  let probe = t('headProbePending');
  if (score) {
    probe = t('headProbeScores', {
      induction: (score.induction ?? 0).toFixed(2),
      previous: score.previousToken.toFixed(2),
      sink: (score.sink ?? 0).toFixed(2),
    });
  } else if (probeError) {
    probe = t('headProbeFailed', { message: probeError.message });
  }
  const text = t('headOnText', {
    label: labelName(label, specials),
    measure: labelMeasure(label, measures, specials),
  });
  return `${probe} · ${text}`;
}

/** What the model grid says of a head, for hover, focus and screen readers. */
export function describeHead(layer, head, labels, score, context = {}) {
  const name = t('layerHeadN', { layer: layer + 1, head: head + 1 });
  const shown = labelName(shownLabel(labels, score), context.specials);
  return `${name}: ${shown} · ${headMeasuresText(labels, score, context)}`;
}

/**
 * What a pixel of a model-grid thumbnail stands for (ModelGrid's region): its queries and keys,
 * as 1-based token positions, and the strongest visible weight among them with its two tokens.
 */
export function describeRegion(layer, head, region, rows) {
  const span = ([first, last]) => (first === last ? `${first + 1}` : `${first + 1}–${last + 1}`);
  const name = t('layerHeadN', { layer: layer + 1, head: head + 1 });
  if (region.weight === null) {
    return t('modelRegionMasked', { name, queries: span(region.queries), keys: span(region.keys) });
  }
  return t('modelRegion', {
    name,
    queries: span(region.queries),
    keys: span(region.keys),
    weight: region.weight.toFixed(2),
    query: tokenLabel(rows[region.query]?.text ?? ''),
    queryAt: region.query + 1,
    key: tokenLabel(rows[region.key]?.text ?? ''),
    keyAt: region.key + 1,
  });
}

/** The heads the head view overlays (0-based): the state's list, else the first few. */
export function overlayHeads(state, heads) {
  const picked = state.overlay
    ? state.overlay
        .split(',')
        .map((n) => Number(n) - 1)
        .filter((h) => h < heads)
    : [];
  return picked.length
    ? picked
    : Array.from({ length: Math.min(DEFAULT_OVERLAY, heads) }, (_, h) => h);
}

export class ModelStage {
  constructor(elements, { update, getState }) {
    this.e = elements;
    this.update = update;
    this.getState = getState;
    // the last render's, for the grid's words
    this.context = { probeError: null, specials: [], rows: [] };
    const open = (layer, head) => update({ layer, head, view: 'matrix' });
    this.grid = new ModelGrid(elements.modelGrid, {
      onSelect: open,
      strings: {
        layer: (l) => t('layerN', { n: l + 1 }),
        label: (name) => labelName(name, this.context.specials),
        describe: (l, h, labels, score) => describeHead(l, h, labels, score, this.context),
        region: (l, h, region) => describeRegion(l, h, region, this.context.rows),
      },
    });
    this.focus = new FocusTable(elements.focusTable, {
      onSelect: open,
      strings: {
        caption: (query) => t('focusCaption', { query }),
        layer: (l) => t('layerN', { n: l + 1 }),
        head: (h) => String(h + 1),
        cell: (l, h, key, weight) => t('focusCell', { layer: l + 1, head: h + 1, key, weight }),
      },
    });
    this.lines = new LineView(elements.overlayLines, {
      onSelect: (row) => update({ query: row, key: -1 }),
    });
    rovingTabindex(elements.overlayHeads, { selector: 'button' });
    this.lazy = new Map(); // the on-demand views' modules: a promise, then the module
    this.lastRender = null;
  }

  // The rollout and sinks views load their code the first time they open, so the page that
  // never shows them never fetches it; once loaded, the view draws with the latest render's data.
  #lazyModule(name, load) {
    const entry = this.lazy.get(name);
    if (entry && !(entry instanceof Promise)) return entry;
    if (!entry) {
      const loading = load().then((module) => {
        this.lazy.set(name, module);
        if (this.lastRender) this.render(this.getState(), ...this.lastRender);
      });
      this.lazy.set(name, loading);
    }
    return null;
  }

  // probe: the model's head scores on its probe (ModelSession.headScores: { heads } or
  // { error }), null while they are measured.
  render(state, result, info, view, probe = null) {
    this.lastRender = [result, info, view, probe];
    this.context = {
      probeError: probe?.error ?? null,
      specials: specialNames(result),
      rows: result.rows,
    };
    const { layer, head } = shownHead(state, info);
    const n = result.rows.length;
    const run = result.surgery ?? result.own;
    if (state.view === 'model') {
      this.grid.setData({
        layers: info.layers,
        heads: info.heads,
        n,
        attention: run.attention,
        visible: run.visible,
        labels: run.labels,
        scores: probe?.heads ?? null,
        selected: { layer, head },
        scale: state.scale,
      });
    }
    if (state.view === 'focus') {
      this.focus.setData({
        layers: info.layers,
        heads: info.heads,
        n,
        attention: run.attention,
        query: focusedQuery(state, { empty: false, rowTokens: result.rows }),
        tokens: result.rows,
        selected: { layer, head },
        scale: state.scale,
      });
    }
    if (state.view === 'overlay') this.#renderOverlay(state, result, info, view, probe);
    if (state.view === 'rollout') {
      const module = this.#lazyModule('rollout', () => import('./rollout-view.js'));
      module?.renderRolloutView(this.e.rolloutView, {
        run,
        rows: result.rows,
        info,
        words: result.words,
        position: focusedQuery(state, { empty: false, rowTokens: result.rows }),
      });
    }
    if (state.view === 'sinks') {
      const module = this.#lazyModule('sinks', () => import('./sinks-plot.js'));
      module?.renderSinksPlot(this.e.sinksPlot, {
        run,
        rows: result.rows,
        info,
        words: result.words,
        onSelect: (layer, head) => this.update({ layer, head, view: 'matrix' }),
      });
    }
  }

  #renderOverlay(state, result, info, view, probe) {
    const { layer } = shownHead(state, info);
    const shown = overlayHeads(state, info.heads);
    const size = result.rows.length ** 2;
    const run = result.surgery ?? result.own;
    const toggles = Array.from({ length: info.heads }, (_, h) => {
      const on = shown.includes(h);
      const swatch = el('span', { class: 'overlay-swatch', 'aria-hidden': 'true' });
      swatch.style.background = on
        ? HEAD_COLOURS[shown.indexOf(h) % HEAD_COLOURS.length]
        : 'transparent';
      return el(
        'button',
        {
          type: 'button',
          class: 'chip-button overlay-head',
          'aria-pressed': String(on),
          dataset: { head: h },
          title: labelName(
            shownLabel(run.labels[layer][h], probe?.heads?.[layer * info.heads + h]),
            this.context.specials,
          ),
          onclick: () => {
            const next = on ? shown.filter((x) => x !== h) : [...shown, h].sort((a, b) => a - b);
            this.update({ overlay: next.map((x) => x + 1).join(',') });
          },
        },
        swatch,
        t('headN', { n: h + 1 }),
      );
    });
    const focused = this.e.overlayHeads.contains(document.activeElement)
      ? document.activeElement.dataset.head
      : null;
    this.e.overlayHeads.replaceChildren(...toggles);
    if (focused !== null) this.e.overlayHeads.querySelector(`[data-head="${focused}"]`)?.focus();
    const mask = run.visible.subarray(layer * size, (layer + 1) * size);
    const overlay = shown.map((h, i) => ({
      weights: run.attention.subarray(
        (layer * info.heads + h) * size,
        (layer * info.heads + h + 1) * size,
      ),
      mask,
      color: HEAD_COLOURS[i % HEAD_COLOURS.length],
    }));
    this.lines.options.label = t('overlayLabel', { layer: layer + 1 });
    this.lines.options.strings = { queries: t('queries'), keys: t('keys') };
    const rows = result.rows.length;
    this.lines.locked =
      state.query >= 0 && state.query < rows ? { side: 'query', index: state.query } : null;
    this.lines.setData({
      rowTokens: result.rows,
      colTokens: result.rows,
      weights: overlay[0]?.weights ?? view.heads[0].weights,
      mask,
      overlay,
      scale: state.scale,
      range: [0, 1],
      orientation: state.orientation,
    });
  }
}
