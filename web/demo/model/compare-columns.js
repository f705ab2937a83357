// The two columns of "Compare two models": for each model its title (name and size), its own
// tokens, its layer x head grid and its predictions, side by side (stacked at phone width).
// Choosing a head in one grid selects the same layer and head in the other when it has it.
import { el, formatBytes, tokenLabel } from '../../src/views/dom.js';
import { ModelGrid } from '../../src/views/model-grid.js';
import { t } from '../i18n.js';
import { renderPredictions } from '../predictions-panel.js';
import { describeRegion, labelMeasure, labelName, specialNames } from './stage.js';

// The words under a head: its label on this text and the measure behind it (no probe scores:
// the comparison is about this text).
function describeHead(layer, head, labels, specials) {
  const name = t('layerHeadN', { layer: layer + 1, head: head + 1 });
  const label = labelName(labels.label, specials);
  return `${name}: ${label} · ${labelMeasure(labels.label, labels.measures, specials)}`;
}

/** '3.7M' parameters, as the picker writes them. */
function formatCount(n) {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

/** A model's name and size, the title of its column. */
export function columnTitle(name, info) {
  return t('compareColumnTitle', {
    name,
    type: info.modelType,
    layers: info.layers,
    heads: info.heads,
    parameters: formatCount(info.parameters),
    memory: formatBytes(info.bytes),
  });
}

export class CompareColumns {
  // host: the element both columns go in.
  constructor(host) {
    this.host = host;
    this.selected = { layer: 0, head: 0 };
    this.columns = [0, 1].map((side) => {
      const title = el('h3', { class: 'compare-title' });
      const tokens = el('ol', { class: 'compare-tokens' });
      const gridHost = el('div', { class: 'compare-grid' });
      const missing = el('p', { class: 'hint compare-missing', role: 'status' });
      const predictions = el('div', { class: 'compare-predictions' });
      const root = el(
        'section',
        { class: 'compare-column', dataset: { side: String(side) } },
        title,
        tokens,
        missing,
        gridHost,
        el('h4', { text: t('comparePredictions') }),
        predictions,
      );
      const grid = new ModelGrid(gridHost, {
        onSelect: (layer, head) => this.#select(layer, head),
        strings: {
          layer: (l) => t('layerN', { n: l + 1 }),
          label: (label) => labelName(label, this.columns[side].specials),
          describe: (l, h, labels) => describeHead(l, h, labels, this.columns[side].specials),
          region: (l, h, region) => describeRegion(l, h, region, this.columns[side].rows),
        },
      });
      return { root, title, tokens, gridHost, missing, predictions, grid, specials: [], rows: [] };
    });
    this.note = el('p', { class: 'compare-tokens-note', role: 'status' });
    host.replaceChildren(
      this.note,
      el(
        'div',
        { class: 'compare-columns' },
        this.columns.map((column) => column.root),
      ),
    );
    this.data = null;
  }

  // data: { models: [{ name, info, run }, { name, info, run }], scale }
  setData(data) {
    this.data = data;
    const [a, b] = data.models;
    const differ =
      a.run.tokens.length !== b.run.tokens.length ||
      a.run.tokens.some((token, i) => token.text !== b.run.tokens[i].text);
    this.note.dataset.differ = String(differ);
    this.note.textContent = differ
      ? t('compareTokensDiffer', {
          first: a.name,
          second: b.name,
          a: a.run.tokens.length,
          b: b.run.tokens.length,
        })
      : t('compareTokensSame', { n: a.run.tokens.length });
    data.models.forEach((model, side) => this.#renderColumn(side, model));
  }

  #select(layer, head) {
    this.selected = { layer, head };
    if (this.data) this.setData(this.data);
  }

  #renderColumn(side, { name, info, run }) {
    const column = this.columns[side];
    column.specials = specialNames(run);
    column.rows = run.tokens;
    column.title.textContent = columnTitle(name, info);
    column.tokens.setAttribute('aria-label', t('compareTokensLabel', { name }));
    column.tokens.replaceChildren(
      ...run.tokens.map((token) =>
        el('li', { class: token.special ? 'is-special' : '', text: tokenLabel(token.text) }),
      ),
    );
    const { layer, head } = this.selected;
    const has = layer < info.layers && head < info.heads;
    column.missing.textContent = has
      ? ''
      : t('compareHeadMissing', { layer: layer + 1, head: head + 1, name });
    column.grid.setData({
      layers: info.layers,
      heads: info.heads,
      n: run.tokens.length,
      attention: run.own.attention,
      visible: run.own.visible,
      labels: run.own.labels,
      scores: null,
      selected: has ? this.selected : { layer: -1, head: -1 },
      scale: this.data.scale,
    });
    renderPredictions(column.predictions, { surgery: '' }, run, info);
  }

  destroy() {
    for (const column of this.columns) column.grid.destroy();
    this.host.replaceChildren();
  }
}
