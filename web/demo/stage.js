// The stage: the view tabs and their tools, and the views of one head's weights (one or two
// heatmaps, the line view, the grid of heads) with their caption and colour legend.
import { cssGradient } from '../src/views/colormap.js';
import { el, formatWeight, tokenLabel } from '../src/views/dom.js';
import { HeadsGrid, sharedMax } from '../src/views/heads-grid.js';
import { Heatmap } from '../src/views/heatmap.js';
import { LineView } from '../src/views/lineview.js';
import { markTabStop, rovingTabindex } from '../src/views/roving.js';
import { visibleMax } from '../src/views/matrix-paint.js';
import { GRAPHIC_VIEWS } from '../src/vocabulary.js';
import { scoreName, t, tNodes } from './i18n.js';
import { headMask } from '../src/interpret/kept-keys.js';
import { currentHead } from './selection.js';
import { MODEL_VIEWS } from './state.js';

export class Stage {
  // update(patch) applies a state patch; getState() and getResult() return what is current.
  constructor(elements, { update, getState, getResult }) {
    this.elements = elements;
    this.getState = getState;
    this.getResult = getResult;
    this.heatmapA = new Heatmap(elements.heatmapA, {
      onSelect: (row, col) => update({ query: row, key: col }),
      describe: (row, col) => this.#describeCell(row, col, false),
    });
    this.heatmapB = new Heatmap(elements.heatmapB, {
      onSelect: (row, col) => update({ query: row, key: col }),
      describe: (row, col) => this.#describeCell(row, col, true),
    });
    this.lineView = new LineView(elements.lines, {
      onSelect: (row) => update({ query: row, key: -1 }),
    });
    this.headsGrid = new HeadsGrid(elements.headsGrid, {
      onSelect: (head) => update({ head, view: 'matrix' }),
      headLabel: (h) => t('headN', { n: h + 1 }),
    });
    this.#bindTools(update);
  }

  #bindTools(update) {
    for (const tab of this.elements.viewTabs) {
      tab.addEventListener('click', () => update({ view: tab.dataset.view }));
      tab.addEventListener('keydown', (event) => {
        const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
        if (!step) return;
        event.preventDefault();
        // The tabs of the other mode are hidden: the arrows move over the shown ones.
        const tabs = this.elements.viewTabs.filter((t) => !t.hidden);
        const next = tabs[(tabs.indexOf(tab) + step + tabs.length) % tabs.length];
        next.focus();
        update({ view: next.dataset.view });
      });
    }
    // The toolbar is one tab stop; arrow keys move along its buttons (the layout picker of the
    // line view keeps its own stop: its arrow keys choose an option).
    const tools = this.elements.viewTools;
    rovingTabindex(tools, { selector: 'button', keys: 'horizontal' });
    markTabStop([...tools.querySelectorAll('button')], 0);
    const heatmaps = [this.heatmapA, this.heatmapB];
    this.elements.zoomIn.addEventListener('click', () => heatmaps.forEach((h) => h.zoomBy(1.25)));
    this.elements.zoomOut.addEventListener('click', () => heatmaps.forEach((h) => h.zoomBy(0.8)));
    this.elements.zoomReset.addEventListener('click', () => heatmaps.forEach((h) => h.setZoom(1)));
  }

  // The selected tab, the panel it shows and the tools that belong to it.
  renderChrome(state) {
    const e = this.elements;
    const real = state.model !== '';
    for (const tab of e.viewTabs) {
      const selected = tab.dataset.view === state.view;
      tab.setAttribute('aria-selected', String(selected));
      tab.tabIndex = selected ? 0 : -1;
      tab.hidden = real ? tab.dataset.view === 'heads' : MODEL_VIEWS.includes(tab.dataset.view);
    }
    for (const view of [...GRAPHIC_VIEWS, ...MODEL_VIEWS])
      e.panels[view].hidden = state.view !== view;
    // The numbers table stays in the accessibility tree under every view (screen readers read it);
    // only the Numbers tab shows it on screen.
    e.panels.numbers.classList.toggle('is-background', state.view !== 'numbers');
    e.panels.numbers.setAttribute('aria-hidden', 'false');
    e.zoomTools.hidden = state.view !== 'matrix';
    // A hidden button cannot be the toolbar's tab stop: the first shown one takes it over.
    const buttons = [...e.viewTools.querySelectorAll('button')];
    const shown = buttons.filter((b) => !b.closest('[hidden]'));
    if (!shown.some((b) => b.tabIndex === 0)) markTabStop(buttons, buttons.indexOf(shown[0]));
    e.legendHelp.hidden = state.view !== 'matrix'; // its keys are the heatmap's
    e.lineTools.hidden = state.view !== 'lines';
    // Rollout, flow and sinks draw no masked cells.
    e.legendMasked.hidden = ['rollout', 'sinks'].includes(state.view);
  }

  // The legend under a real model's own views: the model view draws each thumbnail to its own
  // largest weight; token focus colours weights from 0 to 1; the head view colours heads.
  renderModelLegend(state) {
    const e = this.elements;
    const ownMax = state.view === 'model';
    // The head view colours heads; rollout, flow and sinks draw shares with their own numbers.
    const noScale = ['overlay', 'rollout', 'sinks'].includes(state.view);
    e.legendBar.hidden = noScale;
    e.legendLo.hidden = noScale;
    e.legendHi.hidden = noScale;
    e.legendBar.style.background = cssGradient(state.scale);
    e.legendLo.textContent = '0';
    e.legendHi.textContent = ownMax ? t('legendOwnMax') : '1.00';
    e.legendHi.dataset.value = ownMax ? '' : '1';
    maskedLegend(false);
  }

  renderEmpty() {
    this.elements.viewCaption.textContent = t('emptyText');
  }

  // Draws the view the state selects for head `head`, with `query` the row being explained.
  render(state, result, { head, query }) {
    const e = this.elements;
    const rows = result.rowTokens.length;
    const cols = result.colTokens.length;
    const compare = result.compare;
    const top = state.range === 'unit' ? 1 : viewMax(state.view, result, head) || 1;
    const common = {
      rowTokens: result.rowTokens,
      colTokens: result.colTokens,
      scale: state.scale,
      range: [0, top],
    };
    this.#renderCaption(state, result, head);

    e.matrixPair.classList.toggle('comparing', Boolean(compare));
    e.compareFigure.hidden = !compare;
    // A real model's layer: its own mask beside the reader's surgery ("before" and "after").
    const maskA = result.maskLabel ?? state.mask;
    const maskB = compare?.maskLabel ?? state.compare;
    const beforeAfter = (key, mask) =>
      result.model
        ? [t(key), ' ', el('code', { text: mask })]
        : [t('maskCaption'), ' ', el('code', { text: mask })];
    e.matrixCaptionA.replaceChildren(...beforeAfter('surgeryBefore', maskA));
    e.matrixCaptionA.hidden = !compare;
    for (const heatmap of [this.heatmapA, this.heatmapB]) {
      heatmap.canvas.setAttribute('aria-roledescription', t('heatmapRole'));
    }
    this.heatmapA.canvas.setAttribute(
      'aria-label',
      compare ? t('heatmapLabelMask', { mask: maskA }) : t('heatmapLabel'),
    );
    this.heatmapA.setLockedRow(query);
    if (state.view === 'matrix') {
      this.heatmapA.setData({
        ...common,
        weights: result.heads[head].weights,
        mask: headMask(result, head),
        leftOut: result.heads[head].leftOut,
        rowStats: rowStats(result.heads, head, cols),
        colStats: colStats(result.heads, head),
      });
      if (compare) {
        e.matrixCaptionB.replaceChildren(...beforeAfter('surgeryAfter', maskB));
        this.heatmapB.canvas.setAttribute('aria-label', t('heatmapLabelMask', { mask: maskB }));
        this.heatmapB.setLockedRow(query);
        this.heatmapB.setData({
          ...common,
          weights: compare.heads[head].weights,
          mask: headMask(compare, head),
          leftOut: compare.heads[head].leftOut,
          rowStats: rowStats(compare.heads, head, cols),
          colStats: colStats(compare.heads, head),
        });
      }
    }
    if (state.view === 'lines') {
      const lineView = this.lineView;
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
        mask: headMask(result, head),
        orientation: state.orientation,
      });
    }
    if (state.view === 'heads') {
      this.headsGrid.setData({
        heads: result.heads.map((h, i) => ({ weights: h.weights, mask: headMask(result, i) })),
        rowTokens: result.rowTokens,
        colTokens: result.colTokens,
        range: [0, top],
        scale: state.scale,
        selected: head,
        entropies: result.heads.map((h) => h.entropy.reduce((a, b) => a + b, 0) / rows),
      });
    }
    for (const part of [e.legendBar, e.legendLo, e.legendHi]) part.hidden = false;
    e.legendBar.style.background = cssGradient(state.scale);
    maskedLegend(Boolean(result.heads[head].leftOut || compare?.heads[head].leftOut));
    e.legendLo.textContent = '0';
    e.legendHi.textContent = top.toFixed(2);
    e.legendHi.dataset.value = String(top);
  }

  #renderCaption(state, result, head) {
    if (result.model) {
      this.elements.viewCaption.replaceChildren(
        tNodes(result.block ? 'captionModelBlock' : 'captionModel', {
          layer: result.layer + 1,
          head: head + 1,
          heads: result.heads.length,
          mask: result.maskLabel,
          n: result.rowTokens.length,
          unit: t(state.words ? 'unitWords' : 'unitTokens'),
          surgery: result.compare ? result.compare.maskLabel : t('surgeryNone'),
        }),
      );
      return;
    }
    const values = {
      head: head + 1,
      heads: result.heads.length,
      score: scoreName(state.score),
      t: state.temperature.toFixed(2),
    };
    const rows = result.rowTokens.length;
    const cols = result.colTokens.length;
    this.elements.viewCaption.replaceChildren(
      state.mode === 'cross'
        ? tNodes('captionCross', { nt: rows, ns: cols, ...values, mask: state.mask })
        : tNodes('captionSelf', { n: rows, ...values, mask: state.mask }),
    );
  }

  // What a screen reader hears for a heatmap cell.
  #describeCell(row, col, compared) {
    const result = this.getResult();
    const source = compared ? result.compare : result;
    const i = row * result.colTokens.length + col;
    const head = currentHead(this.getState(), result);
    const weights = source.heads[head].weights;
    const value = headMask(source, head)[i]
      ? formatWeight(weights[i])
      : t(source.heads[head].leftOut?.[i] ? 'leftOutWord' : 'maskedWord');
    return `${withPieces(result.rowTokens[row])} → ${withPieces(result.colTokens[col])}: ${value}`;
  }
}

// Top-k and LSH hatch what they leave out like masked cells: the legend says so.
function maskedLegend(selects) {
  const legend = document.querySelector('.legend-masked [data-i18n]');
  if (!legend) return;
  legend.dataset.i18n = selects ? 'maskedLegendSelection' : 'maskedLegend';
  legend.textContent = t(legend.dataset.i18n);
}

// A token's label, with the model's pieces it stands for when the views show words.
function withPieces(token) {
  const label = tokenLabel(token.text);
  return token.pieces?.length > 1
    ? `${label} (${token.pieces.map(tokenLabel).join(' · ')})`
    : label;
}

// The top of the colour range each view draws with, so the legend shows what the view shows:
// the matrix and its comparison share one range, the line view draws one head, and the grid of
// heads shares one range over every head.
function viewMax(view, result, head) {
  if (view === 'heads') {
    return sharedMax(result.heads.map((h, i) => ({ ...h, mask: headMask(result, i) })));
  }
  const own = visibleMax(result.heads[head].weights, headMask(result, head));
  if (view === 'lines' || !result.compare) return own;
  return Math.max(
    own,
    visibleMax(result.compare.heads[head].weights, headMask(result.compare, head)),
  );
}

// The entropy column beside a heatmap.
function rowStats(heads, head, cols) {
  return { values: heads[head].entropy, max: Math.log2(cols), label: t('entropyColumn') };
}

// The strip of column means under a heatmap: a key every query favours is a bright cell there.
function colStats(heads, head) {
  return { values: heads[head].columnMeans, label: t('columnMeanRow') };
}
