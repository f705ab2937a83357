// <attn-lens>: attention on a piece of text, for blog posts and docs. One module script loads it:
//
//   <script type="module" src=".../widget/attnlens-widget.js"></script>
//   <attn-lens text="我爱自然语言处理" mask="local:2" heads="2"></attn-lens>
//
// Attributes: text; source (switches to cross-attention: text attends to source); mask (see
// src/mask-notation.js: "causal", "local:2", "strided:3+tokens:0", ...); score ("scaled-dot",
// "dot", "cosine", "additive"); temperature; heads; head (1-based, the head shown); view
// ("matrix", "lines", "heads"); granularity ("word", "char", "subword"); language ("en", "zh");
// colors ("viridis", "cividis"); demo (URL of the attnlens demo page: adds an "open in attnlens"
// link with the same settings). Changing any of them re-renders. In the heads view a click on a
// head opens it as a matrix, with a button back to all heads. With a source, only the masks that
// apply between two texts are used (maskForMode: an alignment window, key padding).
//
// Real models: snapshot="attention.json" draws a snapshot exported from the demo (no model, no
// compute); model="roneneldan/TinyStories-1M" (+ revision) shows "Load model (size)" and runs the
// model on `text` only after that click; model="stories260K", the trained model attnlens carries,
// runs at once (no download); `layer` and `head` (1-based) pick what is shown (widget-models.js,
// loaded only for these). With a vision model (ViT, DeiT, DINO, DINOv2), image="cat.jpg" is the
// picture it runs on after the click: each head's class-token attention over it, with layer,
// head and opacity controls, or the class token's rollout across the layers (view="rollout"),
// and a classifier's top labels, exportable as a snapshot that snapshot= draws again
// (widget-picture.js, loaded only for pictures).
//
// Every widget on a page shares one engine (one wasm instance), and each computes only once it
// scrolls near the viewport. Styles live in a shadow root; the host element decides the width.
// No eval, no inline script, no innerHTML: it runs under `script-src 'self' 'wasm-unsafe-eval'`,
// and text is only ever set as text.
import { readChoice, readClampedInteger } from '../src/argument-checks.js';
import { languageFor, translate } from '../src/i18n/translate.js';
import { analyze, analyzePair, createAttention, entropy, tokenize } from '../src/index.js';
import { keptKeys } from '../src/interpret/kept-keys.js';
import { DEFAULT_SCALE, SCALE_NAMES } from '../src/views/colormap.js';
import { el, formatWeight, tokenLabel } from '../src/views/dom.js';
import { HeadsGrid, sharedMax } from '../src/views/heads-grid.js';
import { Heatmap } from '../src/views/heatmap.js';
import { LineView } from '../src/views/lineview.js';
import { maskForMode, maskOptions, parseMask, formatMask } from '../src/mask-notation.js';
import { placeParams } from '../src/share-link.js';
import { visibleMax } from '../src/views/matrix-paint.js';
import { renderWeightsTable } from '../src/views/weights-table.js';
import {
  DEFAULT_GRANULARITY,
  DEFAULT_HEAD_DIM,
  DEFAULT_SCORE,
  DEFAULT_SEED,
  DEFAULT_TEMPERATURE,
  DEFAULT_VIEW,
  GRANULARITIES,
  GRAPHIC_VIEWS,
  MAX_PAGE_HEADS,
  SCORES,
} from '../src/vocabulary.js';
import { WIDGET_CSS } from './widget-style.js';

let enginePromise = null;
// The one engine every <attn-lens> on the page uses.
export function sharedEngine() {
  enginePromise ??= createAttention().catch((error) => {
    enginePromise = null;
    throw error;
  });
  return enginePromise;
}

// The `demo` attribute as a URL when it is http(s), or what a relative URL gives on this page
// (its own scheme, e.g. file: for a saved page); null for anything else, javascript: above all,
// however it is spelt (the URL parser drops tabs, newlines and leading control characters).
function demoUrl(demo) {
  let url;
  try {
    url = new URL(demo, document.baseURI);
  } catch {
    return null;
  }
  const pageScheme = new URL(document.baseURI).protocol;
  const allowed = ['http:', 'https:', pageScheme];
  return allowed.includes(url.protocol) && url.protocol !== 'javascript:' ? url : null;
}

let styleSheet = null;
function adoptStyles(root) {
  if (
    'adoptedStyleSheets' in root &&
    typeof CSSStyleSheet === 'function' &&
    'replaceSync' in CSSStyleSheet.prototype
  ) {
    styleSheet ??= new CSSStyleSheet();
    if (!styleSheet.cssRules.length) styleSheet.replaceSync(WIDGET_CSS);
    root.adoptedStyleSheets = [styleSheet];
  } else {
    root.append(el('style', { text: WIDGET_CSS }));
  }
}

// Pages that load many widgets observe them all with one IntersectionObserver.
let visibilityObserver = null;
function observeVisibility(widget) {
  if (typeof IntersectionObserver !== 'function') {
    widget.becameVisible();
    return;
  }
  visibilityObserver ??= new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (entry.isIntersecting) {
          visibilityObserver.unobserve(entry.target);
          entry.target.becameVisible();
        }
      }
    },
    { rootMargin: '200px 0px' },
  );
  visibilityObserver.observe(widget);
}

// Importing the module where there is no DOM (server-side rendering, Node) defines nothing and
// throws nothing: the class extends a placeholder there, and no element is registered.
const ElementBase = globalThis.HTMLElement ?? class {};

export class AttnLensElement extends ElementBase {
  static observedAttributes = [
    'text',
    'source',
    'mask',
    'score',
    'temperature',
    'heads',
    'head',
    'view',
    'granularity',
    'language',
    'colors',
    'demo',
    'snapshot',
    'model',
    'revision',
    'layer',
    'image',
  ];

  #visible = false;
  #scheduled = false;
  #generation = 0;
  #result = null;
  #view = null;
  #parts = null;
  #openedHead = -1; // in the heads view: the head opened as a matrix, -1 for the grid
  #warnedDemo = null; // the refused `demo` value already warned about
  #lens = null; // a snapshot, or a real model's run in the snapshot's form
  #lenses = null; // widget-models.js, once an element needed it
  #panelsFor = null; // the snapshot whose ablation and logit lens the panels show
  #loader = null; // its LensLoader: what this element shows, and whether Load was pressed
  #shownLayer = -1; // the layer the reader picked in the header, -1 for the `layer` attribute

  connectedCallback() {
    if (!this.shadowRoot) this.#build();
    this.dataset.state ??= 'waiting';
    if (!this.#visible) observeVisibility(this);
  }

  disconnectedCallback() {
    visibilityObserver?.unobserve(this);
  }

  attributeChangedCallback(name, oldValue, newValue) {
    if (oldValue === newValue || !this.#visible) return;
    this.#openedHead = -1;
    if (name === 'layer') this.#shownLayer = -1;
    this.#schedule();
  }

  // Called once the element is near the viewport: from then on it computes.
  becameVisible() {
    this.#visible = true;
    this.#schedule();
  }

  // The `language` attribute, else the nearest lang="" around the element.
  #language() {
    return languageFor(
      this.getAttribute('language') ?? this.closest('[lang]')?.getAttribute('lang'),
    );
  }

  #t(key, values) {
    return translate(this.#language(), key, values);
  }

  #build() {
    const root = this.attachShadow({ mode: 'open' });
    adoptStyles(root);
    const parts = {
      header: el('div', { class: 'header', part: 'header' }),
      view: el('div', { class: 'view', part: 'view' }),
      status: el('p', { class: 'status', role: 'status' }),
      table: el('table', { class: 'sr-only' }),
      panels: el('div', { class: 'panels', part: 'panels', hidden: true }),
      footer: el('div', { class: 'footer', part: 'footer' }),
    };
    root.append(
      el(
        'div',
        { class: 'frame' },
        parts.header,
        parts.status,
        parts.view,
        parts.panels,
        parts.table,
        parts.footer,
      ),
    );
    this.#parts = parts;
  }

  // Several attribute changes in one task become one computation.
  #schedule() {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.#compute();
    });
  }

  #settings() {
    const heads = readClampedInteger(this.getAttribute('heads'), 1, MAX_PAGE_HEADS, 2);
    const temperature = Number(this.getAttribute('temperature') ?? DEFAULT_TEMPERATURE);
    const source = this.getAttribute('source');
    return {
      text: this.getAttribute('text') ?? this.textContent.trim(),
      source,
      mask: maskForMode(
        parseMask(this.getAttribute('mask') ?? 'global'),
        source === null ? 'self' : 'cross',
      ),
      score: readChoice(this.getAttribute('score'), SCORES, DEFAULT_SCORE),
      temperature:
        Number.isFinite(temperature) && temperature > 0 ? temperature : DEFAULT_TEMPERATURE,
      heads,
      head: readClampedInteger(this.getAttribute('head'), 1, heads, 1) - 1,
      view: readChoice(this.getAttribute('view'), GRAPHIC_VIEWS, DEFAULT_VIEW),
      granularity: readChoice(this.getAttribute('granularity'), GRANULARITIES, DEFAULT_GRANULARITY),
      scale: readChoice(this.getAttribute('colors'), SCALE_NAMES, DEFAULT_SCALE),
    };
  }

  async #compute() {
    const generation = ++this.#generation;
    const parts = this.#parts;
    if (this.hasAttribute('snapshot') || this.hasAttribute('model')) {
      this.#computeLens(generation);
      return;
    }
    parts.status.textContent = this.#t('widgetLoading');
    this.dataset.state = 'computing';
    try {
      const settings = this.#settings();
      const attn = await sharedEngine();
      const options = {
        heads: settings.heads,
        headDim: DEFAULT_HEAD_DIM,
        seed: DEFAULT_SEED,
        granularity: settings.granularity,
        score: settings.score,
        temperature: settings.temperature,
        attention: attn,
      };
      const cross = settings.source !== null;
      // Mask sizes are clamped to the token counts (a window wider than the text is the text).
      const rows = tokenize(settings.text, { granularity: settings.granularity }).length;
      const cols = cross
        ? tokenize(settings.source, { granularity: settings.granularity }).length
        : rows;
      const masked = { ...options, ...maskOptions(settings.mask, rows, cols) };
      const result = cross
        ? await analyzePair(settings.source, settings.text, masked)
        : await analyze(settings.text, masked);
      if (generation !== this.#generation) return;
      const rowTokens = cross ? result.targetTokens : result.tokens;
      const colTokens = cross ? result.sourceTokens : result.tokens;
      // Top-k and LSH: each head's own keys, those they left out hatched and named.
      const selection = keptKeys({
        mask: result.heads[0].mask,
        heads: result.heads,
        q: result.q,
        k: result.k,
        rows: rowTokens.length,
        cols: colTokens.length,
        headDim: DEFAULT_HEAD_DIM,
        selection: settings.mask,
      });
      const heads = result.heads.map((h, i) =>
        selection
          ? { ...h, mask: selection.heads[i].kept, leftOut: selection.heads[i].leftOut }
          : h,
      );
      this.#result = { ...result, heads, rowTokens, colTokens, settings, cross };
      this.#render();
      this.dataset.state = 'ready';
      this.dataset.renders = String(Number(this.dataset.renders ?? 0) + 1);
      this.dispatchEvent(
        new CustomEvent('attn-lens-render', {
          bubbles: true,
          composed: true,
          detail: {
            queries: rowTokens.map((t) => t.text),
            keys: colTokens.map((t) => t.text),
            backend: result.backend,
          },
        }),
      );
    } catch (error) {
      if (generation !== this.#generation) return;
      this.dataset.state = 'error';
      parts.status.textContent = this.#t('widgetError', { message: error.message });
      parts.view.replaceChildren();
      parts.header.replaceChildren();
      this.#view?.destroy?.();
      this.#view = null;
    }
  }

  // A snapshot (read, no compute) or a real model (after the reader's click).
  async #computeLens(generation) {
    const parts = this.#parts;
    const t = (key, values) => this.#t(key, values);
    this.dataset.state = 'computing';
    try {
      this.#lenses ??= await import('./widget-models.js');
      this.#loader ??= new this.#lenses.LensLoader(parts, {
        t,
        engine: sharedEngine,
        onLoadClick: () => this.#schedule(),
      });
      const lens = await this.#loader.lensFor(this, () => generation === this.#generation);
      if (generation !== this.#generation) return;
      if (!lens) {
        this.#view?.destroy?.();
        this.#view = null;
        this.dataset.state = 'waiting-load';
        return;
      }
      this.#lens = lens;
      if (lens.picture) {
        await this.#showPicture(lens, generation);
        return;
      }
      this.#result = this.#lenses.lensResult(lens, {
        layer: this.#shownLayer >= 0 ? String(this.#shownLayer + 1) : this.getAttribute('layer'),
        head: this.getAttribute('head'),
        settings: this.#settings(),
        t,
      });
      this.#render();
      this.dataset.state = 'ready';
      this.dataset.renders = String(Number(this.dataset.renders ?? 0) + 1);
    } catch (error) {
      if (generation !== this.#generation) return;
      this.dataset.state = 'error';
      const model = this.getAttribute('model');
      if (this.#lenses && model !== null && this.getAttribute('snapshot') === null) {
        // A model that did not load: what happened, in words, and a way to try again.
        this.#view?.destroy?.();
        this.#view = null;
        this.#lenses.showFailure(parts, error, { model, t, onRetry: () => this.#schedule() });
        return;
      }
      parts.status.textContent = this.#t('widgetError', { message: error.message });
      parts.view.replaceChildren();
      parts.header.replaceChildren();
    }
  }

  // A vision model's picture or a picture snapshot (widget-picture.js, loaded only for these).
  async #showPicture(lens, generation) {
    const { PictureView } = await import('./widget-picture.js');
    if (generation !== this.#generation) return;
    if (this.#view?.kind !== 'picture') {
      this.#view?.destroy?.();
      this.#view = new PictureView(this.#parts, this.shadowRoot, {
        t: (key, values) => this.#t(key, values),
      });
    }
    const attributes = {
      layer: this.getAttribute('layer'),
      head: this.getAttribute('head'),
      view: this.getAttribute('view'),
    };
    await this.#view.show(lens, attributes);
    if (generation !== this.#generation) return;
    this.dataset.state = 'ready';
    this.dataset.renders = String(Number(this.dataset.renders ?? 0) + 1);
  }

  #render() {
    const { rowTokens, colTokens, heads, settings, cross, backend } = this.#result;
    const parts = this.#parts;
    const opened = settings.view === 'heads' && this.#openedHead >= 0;
    const head = opened ? this.#openedHead : Math.min(settings.head, heads.length - 1);
    const view = opened ? 'matrix' : settings.view;
    const weights = heads[head].weights;
    const mask = heads[head].mask;
    const top = visibleMax(weights, mask) || 1;
    parts.status.textContent = '';
    const rows = rowTokens.length;
    const lens = this.#result.lens;
    const headNumber = (h) => (lens ? lens.indices[h] + 1 : h + 1);
    parts.header.replaceChildren(
      ...[
        ...(lens
          ? this.#lenses.lensHeader(this.#result, head, {
              t: (key, values) => this.#t(key, values),
              onLayer: (layer) => {
                this.#shownLayer = layer;
                this.#openedHead = -1;
                this.#schedule();
              },
            })
          : [
              el('span', {
                class: 'count',
                text: cross
                  ? this.#t('widgetTokensCross', { nt: rows, ns: colTokens.length })
                  : this.#t(rows === 1 ? 'tokensCountOne' : 'tokensCount', { n: rows }),
              }),
              el('code', { text: formatMask(settings.mask) }),
              el('span', {
                text: `${this.#t(`score:${settings.score}`)} · T = ${settings.temperature}`,
              }),
              heads.length > 1
                ? el('span', { text: this.#t('widgetHeadOf', { n: head + 1, of: heads.length }) })
                : null,
            ]),
        opened
          ? el(
              'button',
              {
                type: 'button',
                class: 'back',
                onclick: () => {
                  this.#openedHead = -1;
                  this.#render();
                  this.#parts.view.querySelector(`[data-head="${head}"]`)?.focus();
                },
              },
              this.#t('widgetAllHeads'),
            )
          : null,
      ].filter(Boolean),
    );

    const leftOut = heads[head].leftOut;
    const range = [0, top];
    const data = { rowTokens, colTokens, weights, mask, leftOut, scale: settings.scale, range };
    if (this.#view?.kind !== view) {
      this.#view?.destroy?.();
      const host = el('div', { class: `view-${view}` });
      parts.view.replaceChildren(host);
      if (view === 'matrix') {
        this.#view = new Heatmap(host, {
          label: this.#t('widgetHeatmapLabel'),
          roleDescription: this.#t('heatmapRole'),
          describe: (r, c) => this.#describe(r, c),
        });
      } else if (view === 'lines') {
        this.#view = new LineView(host, { label: this.#t('widgetLinesLabel') });
      } else {
        this.#view = new HeadsGrid(host, {
          onSelect: (h) => {
            this.#openedHead = h;
            this.#render();
            this.#view.canvas?.focus();
          },
          headLabel: (h) => this.#t('headN', { n: headNumber(h) }),
        });
      }
      this.#view.kind = view;
    }
    if (view === 'matrix') {
      this.#view.canvas.setAttribute('aria-label', this.#t('widgetHeatmapLabel'));
      this.#view.canvas.setAttribute('aria-roledescription', this.#t('heatmapRole'));
      const cols = colTokens.length;
      const rowEntropy = Array.from({ length: rows }, (_, r) =>
        entropy(weights.subarray(r * cols, (r + 1) * cols)),
      );
      this.#view.setData({
        ...data,
        rowStats:
          this.clientWidth > 420
            ? { values: rowEntropy, max: Math.log2(cols), label: this.#t('entropyColumn') }
            : undefined,
      });
    } else if (view === 'lines') {
      this.#view.options.strings = {
        queries: cross ? this.#t('widgetTarget') : this.#t('queries'),
        keys: cross ? this.#t('widgetSource') : this.#t('keys'),
      };
      this.#view.setData(data);
    } else {
      const all = heads.map((h) => ({ weights: h.weights, mask: h.mask }));
      this.#view.setData({
        heads: all,
        rowTokens,
        colTokens,
        range: [0, sharedMax(all) || 1],
        scale: settings.scale,
        selected: head,
      });
    }
    renderWeightsTable(parts.table, {
      rowTokens,
      colTokens,
      weights,
      mask,
      leftOut,
      caption: this.#t('widgetTableCaption', { n: headNumber(head) }),
      corner: this.#t('tableCorner'),
      masked: this.#t('maskedWord'),
      leftOutWord: this.#t('leftOutWord'),
    });
    this.#renderPanels();
    const demo = this.#demoLink(this.getAttribute('demo'), settings);
    parts.footer.replaceChildren(
      ...[
        demo
          ? el('a', {
              href: demo,
              target: '_blank',
              rel: 'noopener',
              text: `${this.#t('widgetOpen')} ↗`,
            })
          : null,
        el('span', { class: 'backend', text: `attnlens · ${backend}` }),
      ].filter(Boolean),
    );
  }

  // A snapshot's ablation and logit lens, under the view: drawn once per snapshot (a layer or
  // head change keeps them, and the lens's focused cell; another language draws them again).
  #renderPanels() {
    const lens = this.#result.lens ? this.#lens : null;
    const language = this.#language();
    if (this.#panelsFor?.lens === lens && this.#panelsFor.language === language) return;
    const drawing = { lens, language };
    this.#panelsFor = drawing;
    const host = this.#parts.panels;
    if (!lens?.ablation && !lens?.logitLens) {
      host.replaceChildren();
      host.hidden = true;
      return;
    }
    const t = (key, values) => this.#t(key, values);
    import('./widget-panels.js').then(({ renderSnapshotPanels }) => {
      if (this.#panelsFor !== drawing) return;
      renderSnapshotPanels(host, lens, { t, root: this.shadowRoot });
    });
  }

  #describe(row, col) {
    const { rowTokens, colTokens, heads, settings } = this.#result;
    const shown = this.#openedHead >= 0 ? this.#openedHead : settings.head;
    const head = heads[Math.min(shown, heads.length - 1)];
    const i = row * colTokens.length + col;
    const value = head.mask[i]
      ? formatWeight(head.weights[i])
      : this.#t(head.leftOut?.[i] ? 'leftOutWord' : 'maskedWord');
    return `${tokenLabel(rowTokens[row].text)} → ${tokenLabel(colTokens[col].text)}: ${value}`;
  }

  // The same view in the full demo, when the page names where the demo is (attribute `demo`):
  // an http(s) or relative URL; anything else (javascript:, data:, ...) gives no link and a
  // warning. Long settings go in the fragment (share-link.js).
  #demoLink(demo, settings) {
    if (demo === null || demo === '') return null;
    const url = demoUrl(demo);
    if (url === null) {
      if (this.#warnedDemo !== demo) {
        this.#warnedDemo = demo;
        console.warn(
          `attn-lens: demo=${JSON.stringify(demo)} is not an http(s) or relative URL; ` +
            'the "open in attnlens" link is left out',
        );
      }
      return null;
    }
    const params = url.searchParams;
    if (this.#result.lens) {
      const lensUrl = this.#lenses.lensDemoLink(url, this.#lens, this.#result);
      return lensUrl && lensUrl.href;
    }
    params.set('text', settings.text);
    if (settings.source !== null) {
      params.set('mode', 'cross');
      params.set('source', settings.source);
    }
    params.set('mask', formatMask(settings.mask));
    params.set('score', settings.score);
    params.set('t', String(settings.temperature));
    params.set('heads', String(settings.heads));
    params.set('head', String(settings.head + 1));
    params.set('tokens', settings.granularity);
    params.set('view', settings.view);
    const { search, hash } = placeParams(params);
    url.search = search;
    url.hash = hash;
    return url.href;
  }
}

if (globalThis.customElements && !customElements.get('attn-lens')) {
  customElements.define('attn-lens', AttnLensElement);
}
