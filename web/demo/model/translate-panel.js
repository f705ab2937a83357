// The Translate mode: a Marian model's translation of the page's text, token by token as the
// compute thread streams it (translate-compute.js), with the cross-attention alignment drawn as
// it grows: a matrix (target rows x source columns) and lines (source above, translation below,
// each line as strong as the weight), for one decoder layer and head or averaged, and each head's
// share of attention on the source word a dictionary of the example says it translates.
// Loaded by model/page.js only when an encoder-decoder model is loaded.
import { el } from '../../src/views/dom.js';
import { Heatmap } from '../../src/views/heatmap.js';
import { LineView } from '../../src/views/lineview.js';
import { t } from '../i18n.js';
import { crossMatrix, dictionaryPairs, headAlignment, targetTokens } from './alignment.js';
import { alignmentExports, translationSnapshot } from './translate-export.js';
import { catalogEntry } from './catalog.js';

// A head "aligns" when most of a dictionary word's attention lands on the word it translates.
export const ALIGNING_SHARE = 0.5;
const LANE = 'model-translate';
// translate()'s cross-attention surgeries (src/models/translate.js), with the strings naming them.
const CROSS_MASKS = [
  ['full', 'translateMaskFull'],
  ['last', 'translateMaskLast'],
  ['mean', 'translateMaskMean'],
  ['local:2', 'translateMaskLocal'],
];
// Greedy (each token stays once it comes) or the model's own beam search (config.json's
// num_beams): its leading beam streams, and a token may be replaced when another beam overtakes.
const DECODINGS = [
  ['greedy', 'translateDecodeGreedy'],
  ['beams', 'translateDecodeBeams'],
];

export class TranslatePanel {
  // client: the ComputeClient; getState(): the page's state; host: the section drawn into.
  // getInfo(): the loaded model's info.
  constructor(host, { client, getState, getInfo }) {
    this.host = host;
    this.client = client;
    this.getState = getState;
    this.getInfo = getInfo;
    this.run = null; // { key, text, source, steps, done, error, decoderLayers, heads }
    this.layer = -1; // -1: averaged over the decoder's layers
    this.head = -1; // -1: averaged over heads
    this.crossMask = 'full';
    this.decoding = 'greedy';
    // The last translation with full attention: { text, decoding, translation }.
    this.reference = null;
    this.serial = 0;
    this.#build();
  }

  #build() {
    const bar = (...children) => el('div', { class: 'translate-bar' }, ...children);
    this.title = el('h2', { id: 'translate-title' });
    this.hint = el('p', { class: 'hint' });
    this.runButton = el('button', {
      type: 'button',
      id: 'translate-run',
      onclick: () => this.start(),
    });
    this.stopButton = el('button', {
      type: 'button',
      id: 'translate-stop',
      onclick: () => this.client.cancel(LANE),
    });
    this.layerLabel = el('label', { for: 'translate-layer' });
    this.layerSelect = el('select', {
      id: 'translate-layer',
      onchange: () => this.#pick(Number(this.layerSelect.value), this.head),
    });
    this.headLabel = el('label', { for: 'translate-head' });
    this.headSelect = el('select', {
      id: 'translate-head',
      onchange: () => this.#pick(this.layer, Number(this.headSelect.value)),
    });
    const snapshot = () => (snapshot.ready() ? this.#snapshot() : null);
    snapshot.ready = () => Boolean(this.run?.done && this.run.encoderAttention && this.getInfo());
    this.maskLabel = el('label', { for: 'translate-cross-mask' });
    this.maskSelect = el('select', {
      id: 'translate-cross-mask',
      onchange: () => {
        this.crossMask = this.maskSelect.value;
        this.start();
      },
    });
    this.decodingLabel = el('label', { for: 'translate-decoding' });
    this.decodingSelect = el('select', {
      id: 'translate-decoding',
      onchange: () => {
        this.decoding = this.decodingSelect.value;
        this.start();
      },
    });
    this.compare = el('p', { class: 'translate-compare', id: 'translate-compare' });
    this.exports = alignmentExports(() => this.figure(), snapshot);
    this.output = el('p', { class: 'translate-output', id: 'translate-output' });
    this.status = el('p', { class: 'translate-status', id: 'translate-status', role: 'status' });
    this.matrixCaption = el('figcaption');
    this.matrixHost = el('div', { id: 'translate-matrix' });
    this.linesCaption = el('figcaption');
    this.linesHost = el('div', { id: 'translate-lines' });
    this.linesHint = el('p', { class: 'translate-lines-hint', id: 'translate-lines-hint' });
    this.headsTitle = el('h3', { id: 'translate-heads-title' });
    this.headsHint = el('p', { class: 'hint' });
    this.headsHost = el('div', { id: 'translate-heads', class: 'translate-heads' });
    this.views = el(
      'div',
      { class: 'translate-views' },
      el('figure', { class: 'translate-figure' }, this.matrixCaption, this.matrixHost),
      el(
        'figure',
        { class: 'translate-figure' },
        this.linesCaption,
        this.linesHost,
        this.linesHint,
      ),
    );
    this.host.replaceChildren(
      this.title,
      this.hint,
      bar(
        this.runButton,
        this.stopButton,
        this.layerLabel,
        this.layerSelect,
        this.headLabel,
        this.headSelect,
        this.maskLabel,
        this.maskSelect,
        this.decodingLabel,
        this.decodingSelect,
        ...this.exports.buttons,
      ),
      this.output,
      this.compare,
      this.status,
      this.views,
      el(
        'section',
        { class: 'translate-heads-card', 'aria-labelledby': 'translate-heads-title' },
        this.headsTitle,
        this.headsHint,
        this.headsHost,
      ),
    );
    this.matrix = new Heatmap(this.matrixHost, {
      label: 'alignment',
      roleDescription: 'heatmap',
    });
    this.lines = new LineView(this.linesHost, {});
  }

  #pick(layer, head) {
    this.layer = layer;
    this.head = head;
    this.render();
  }

  /** Translates the page's text with the loaded model `key`; the previous translation stops. */
  async start(key = this.key) {
    const state = this.getState();
    this.key = key;
    if (!key || !state.text.trim()) {
      this.run = null;
      this.render();
      return;
    }
    const serial = ++this.serial;
    this.client.cancel(LANE);
    this.run = { key, text: state.text, source: [], steps: [], done: false, error: null };
    this.render();
    try {
      const result = await this.client.request(
        LANE,
        'modelTranslate',
        { key, text: state.text, crossMask: this.crossMask, decoding: this.decoding },
        {
          onProgress: ({ step, index, source, decoderLayers, heads }) => {
            if (serial !== this.serial) return;
            Object.assign(this.run, { source, decoderLayers, heads });
            // A beam that overtook the leader replaces the tokens from `index` on.
            this.run.steps.length = index;
            this.run.steps.push(step);
            document.body.dataset.translateSteps = String(this.run.steps.length);
            this.render();
          },
        },
      );
      if (serial !== this.serial || !result) return;
      const decoding = this.decoding;
      Object.assign(this.run, result, { done: true, crossMask: this.crossMask, decoding });
      if (this.crossMask === 'full') {
        this.reference = { text: this.run.text, decoding, translation: result.translation };
      }
    } catch (error) {
      if (serial !== this.serial) return;
      this.run.error = error;
    }
    document.body.dataset.translations = String(
      Number(document.body.dataset.translations ?? 0) + 1,
    );
    this.render();
  }

  /** Stops listening (the reader left the model): a translation under way is cancelled. */
  stop() {
    this.serial++;
    this.client.cancel(LANE);
    this.run = null;
  }

  #dims() {
    const { decoderLayers, heads, source } = this.run;
    return { decoderLayers, heads, n: source.length };
  }

  /** The shown alignment as the exports draw it, or null before the first token. */
  figure() {
    const run = this.run;
    if (!run?.steps.length) return null;
    const weights = crossMatrix(run.steps, { ...this.#dims(), layer: this.layer, head: this.head });
    return {
      rowTokens: targetTokens(run.steps),
      colTokens: run.source,
      weights,
      scale: this.getState().scale,
      title: `attnlens · ${this.getState().model} · ${t('translateAlignment')}`,
      subtitle: this.#shownName(),
      model: this.getState().model,
      source: run.text,
      translation: run.steps
        .filter((s) => !s.special)
        .map((s) => s.text)
        .join(''),
      layer: this.layer,
      head: this.head,
    };
  }

  #snapshot() {
    const state = this.getState();
    const hub = state.model !== 'files';
    return translationSnapshot(this.run, this.getInfo(), {
      id: hub ? state.model : null,
      revision: hub ? state.revision || 'main' : null,
    });
  }

  #shownName() {
    const layer = this.layer < 0 ? t('translateAllLayers') : t('layerN', { n: this.layer + 1 });
    const head = this.head < 0 ? t('translateAllHeads') : t('headN', { n: this.head + 1 });
    return `${layer} · ${head}`;
  }

  render() {
    this.title.textContent = t('translateTitle');
    this.hint.textContent = t('translateHint');
    this.runButton.textContent = t('translateRun');
    this.stopButton.textContent = t('translateStop');
    this.layerLabel.textContent = t('translateLayer');
    this.headLabel.textContent = t('translateHead');
    this.matrixCaption.textContent = t('translateMatrixCaption');
    this.linesCaption.textContent = t('translateLinesCaption');
    this.headsTitle.textContent = t('translateHeadsTitle');
    this.exports.render();
    const run = this.run;
    const going = Boolean(run && !run.done && !run.error);
    this.stopButton.disabled = !going;
    this.host.setAttribute('aria-busy', String(going));
    this.#renderSelects();
    this.maskLabel.textContent = t('translateCrossMask');
    const options = CROSS_MASKS.map(([value, key]) => el('option', { value, text: t(key) }));
    this.maskSelect.replaceChildren(...options);
    this.maskSelect.value = this.crossMask;
    this.decodingLabel.textContent = t('translateDecoding');
    this.decodingSelect.replaceChildren(
      ...DECODINGS.map(([value, key]) => el('option', { value, text: t(key) })),
    );
    this.decodingSelect.value = this.decoding;
    // With a surgery, the translation with full attention beside it: what the surgery changed.
    const reference = this.reference;
    const compared =
      this.crossMask !== 'full' &&
      reference?.text === run?.text &&
      reference?.decoding === this.decoding;
    this.compare.hidden = !compared;
    this.compare.textContent = compared
      ? t('translateCompare', { text: reference.translation })
      : '';
    this.output.textContent = run
      ? run.steps
          .filter((s) => !s.special)
          .map((s) => s.text)
          .join('')
      : '';
    this.status.textContent = this.#statusText(run, going);
    const figure = this.figure();
    this.matrixHost.hidden = !figure;
    this.linesHost.hidden = !figure;
    if (!figure) {
      this.headsHost.replaceChildren();
      this.headsHint.textContent = '';
      return;
    }
    // The heatmap reads its label once: the shown head's name is set on its canvas.
    const label = `${t('translateMatrixCaption')} · ${this.#shownName()}`;
    this.matrix.canvas.setAttribute('aria-label', label);
    // The page's colour range: 0 - 1, or 0 - the largest weight shown (the default).
    const range = this.getState().range === 'unit' ? [0, 1] : undefined;
    this.matrix.setData({ ...figure, mask: null, range });
    this.lines.options.label = `${t('translateLinesCaption')} · ${this.#shownName()}`;
    this.lines.options.strings = { queries: t('translateSource'), keys: t('translateTarget') };
    this.lines.setData({
      rowTokens: figure.colTokens,
      colTokens: figure.rowTokens,
      weights: transpose(figure.weights, figure.rowTokens.length, figure.colTokens.length),
      mask: null,
      scale: figure.scale,
      range,
      orientation: 'horizontal',
    });
    this.#fitLines();
    this.#renderHeads(figure);
  }

  // Lines wider than half the card take its whole width, under the matrix; wider still, they
  // scroll sideways (a visible bar, a hint, and the keyboard's arrows once the strip has focus),
  // so no token of a long translation is cut off.
  #fitLines() {
    const needed = Number(this.linesHost.querySelector('svg')?.getAttribute('width') ?? 0);
    const half = this.views.clientWidth / 2;
    this.views.classList.toggle('is-stacked', needed > half);
    const scroller = this.lines.scroller;
    const scrolls = scroller.scrollWidth > scroller.clientWidth + 1;
    this.linesHint.hidden = !scrolls;
    this.linesHint.textContent = scrolls ? t('translateLinesScroll') : '';
    if (scrolls) {
      scroller.tabIndex = 0;
      scroller.setAttribute('role', 'region');
      scroller.setAttribute('aria-label', t('translateLinesCaption'));
    } else {
      scroller.removeAttribute('tabindex');
      scroller.removeAttribute('role');
      scroller.removeAttribute('aria-label');
    }
  }

  #statusText(run, going) {
    if (!run) return t('translateIdle');
    if (run.error) {
      return run.error.name === 'AbortError'
        ? t('translateStopped', { n: run.steps.length })
        : t('modelRunFailed', { message: run.error.message });
    }
    if (going) return t('translateGoing', { n: run.steps.length });
    if (run.beams > 1) return t('translateDoneBeams', { n: run.steps.length, beams: run.beams });
    return t('translateDone', { n: run.steps.length });
  }

  #renderSelects() {
    const dims = this.run?.decoderLayers ? this.#dims() : null;
    const fill = (select, count, all, name, value) => {
      const options = [el('option', { value: -1, text: all })];
      for (let i = 0; i < count; i++) options.push(el('option', { value: i, text: name(i) }));
      select.replaceChildren(...options);
      select.value = String(value);
    };
    fill(
      this.layerSelect,
      dims?.decoderLayers ?? 0,
      t('translateAllLayers'),
      (l) => t('layerN', { n: l + 1 }),
      this.layer,
    );
    fill(
      this.headSelect,
      dims?.heads ?? 0,
      t('translateAllHeads'),
      (h) => t('headN', { n: h + 1 }),
      this.head,
    );
  }

  // Every decoder head with its alignment share on the dictionary's words; a click shows it.
  #renderHeads(figure) {
    const run = this.run;
    const dims = this.#dims();
    const dictionary = catalogEntry(this.getState().model)?.dictionary;
    const pairs = dictionaryPairs(dictionary, {
      sourceText: run.text,
      source: run.source,
      translation: figure.translation,
      target: figure.rowTokens,
    });
    const shares = pairs.length ? headAlignment(run.steps, pairs, dims) : null;
    this.headsHint.textContent = shares
      ? t('translateHeadsHint', {
          pairs: pairs.map((p) => `${p.source} → ${p.target}`).join(', '),
          share: ALIGNING_SHARE.toFixed(1),
        })
      : t('translateHeadsNoDictionary');
    const focused = this.headsHost.contains(document.activeElement)
      ? document.activeElement.dataset.lh
      : null;
    const rows = [];
    for (let l = 0; l < dims.decoderLayers; l++) {
      const buttons = [];
      for (let h = 0; h < dims.heads; h++) {
        const share = shares?.[l * dims.heads + h];
        const aligns = share !== undefined && share >= ALIGNING_SHARE;
        const label = share === undefined ? '' : ` · ${share.toFixed(2)}`;
        buttons.push(
          el(
            'button',
            {
              type: 'button',
              class: `chip-button translate-head${aligns ? ' is-aligning' : ''}`,
              'aria-pressed': String(this.layer === l && this.head === h),
              dataset: { lh: `${l}:${h}` },
              title:
                share === undefined ? '' : t('translateShareTitle', { share: share.toFixed(2) }),
              onclick: () => this.#pick(l, h),
            },
            `${t('headN', { n: h + 1 })}${label}${aligns ? ` · ${t('translateAligns')}` : ''}`,
          ),
        );
      }
      rows.push(
        el(
          'div',
          { class: 'translate-head-row', role: 'group', 'aria-label': t('layerN', { n: l + 1 }) },
          el('span', { class: 'translate-head-layer', text: t('layerN', { n: l + 1 }) }),
          ...buttons,
        ),
      );
    }
    this.headsHost.replaceChildren(...rows);
    if (focused) this.headsHost.querySelector(`[data-lh="${focused}"]`)?.focus();
  }
}

function transpose(weights, rows, cols) {
  const out = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++)
    for (let j = 0; j < cols; j++) out[j * rows + i] = weights[i * cols + j];
  return out;
}
