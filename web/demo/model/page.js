// The page in real-model mode: what changes when the reader picks a model, loads it, types,
// changes a mask or a layer, and how each result reaches the panels. The playground's own flow
// (../main.js) is untouched; main.js hands over to this while state.model is set.
import { el } from '../../src/views/dom.js';
import { t } from '../i18n.js';
import { ModelControls } from './controls.js';
import { ModelPicker } from './picker.js';
import { ModelSession } from './session.js';
import { ModelStage } from './stage.js';
import { explainView, layerView, shownHead } from './view.js';
import { renderNumbersTable } from '../numbers-table.js';
import { renderPredictions } from '../predictions-panel.js';
import { focusedQuery } from '../selection.js';
import { downloadSnapshot } from '../snapshot-export.js';
import { MODEL_VIEWS } from '../state.js';

const TEXT_DEBOUNCE_MS = 200;
// Changes that need the model to run again, and those that choose another model.
const RUN_FIELDS = ['text', 'pair', 'surgery', 'surgeryLayer', 'words'];
const SOURCE_FIELDS = ['model', 'revision', 'dtype'];

// An encoder-decoder (Marian) translates instead of running: the Translate mode shows it.
const translates = (info) => info?.encoderLayers !== undefined;

export class ModelPage {
  constructor(elements, parts) {
    this.e = elements;
    // { client, update, getState, explain, tokenStrip, stage, controls, composer,
    //   computePlayground }: main.js's parts this mode draws with
    this.parts = parts;
    this.session = new ModelSession(parts.client, (what) => this.#sessionChanged(what));
    const { update, getState } = parts;
    this.picker = new ModelPicker(elements, { session: this.session, update, getState });
    this.controls = new ModelControls(elements, {
      update,
      getState,
      getInfo: () => this.#info(),
    });
    this.stage = new ModelStage(elements, { update, getState });
    this.compare = null; // the ComparePanel once opened (its code loads then)
    this.comparing = null; // its module on its way
    elements.compareOpen.addEventListener('click', () => this.#openCompare({ focus: true }));
    this.timer = 0;
    this.pendingQueryText = null;
    this.translatePanel = null; // translate-panel.js, loaded with the first encoder-decoder
    // The panel of a picture snapshot the address names (openPictureSnapshot): null while it
    // loads, undefined when there is none.
    this.snapshotPanel = undefined;

    elements.exportSnapshot.addEventListener('click', () => {
      const state = getState();
      const info = this.#info();
      if (!info || !this.session.result) return;
      downloadSnapshot(state, this.session.result, info, elements.snapshotScope.value || 'layer');
    });
  }

  #info() {
    return this.session.isLoaded(this.parts.getState()) ? this.session.loaded : null;
  }

  /** After the state changed (`changed`: its fields): runs, explains or draws what it needs. */
  changed(changed, immediate) {
    const state = this.parts.getState();
    if (!state.model) {
      this.#closeCompare();
      this.session.release();
      this.parts.computePlayground();
      this.render();
      return;
    }
    if (changed.some((field) => SOURCE_FIELDS.includes(field))) {
      // The comparison was of the model that is going: its second model goes with it.
      if (!this.session.isLoaded(state)) this.#closeCompare();
      if (!this.session.isLoaded(state)) this.session.result = null;
      this.render();
      this.#autoLoad(state);
      if (this.session.isLoaded(state)) this.#schedule(0);
      return;
    }
    if (changed.some((field) => RUN_FIELDS.includes(field))) {
      const typing = changed.includes('text') || changed.includes('pair');
      this.#schedule(typing && !immediate ? TEXT_DEBOUNCE_MS : 0);
      this.render();
      return;
    }
    if (changed.includes('lang')) this.compare?.relabel();
    else if (changed.includes('scale')) this.compare?.render();
    if (changed.includes('layer')) this.#explain();
    this.render();
  }

  /** After a card opened a real model: the query to focus once its text has run. */
  focusQueryText(text) {
    this.pendingQueryText = text;
  }

  // A model whose files are all in this browser's cache loads at once: nothing to download.
  #autoLoad(state) {
    const about = this.session.description(state);
    if (about?.status !== 'ready' || !about.allCached || !about.fits || about.missing.length)
      return;
    if (this.session.loading || this.session.isLoaded(state)) return;
    this.session.load(state);
  }

  #sessionChanged(what) {
    const state = this.parts.getState();
    if (!state.model) return;
    if (what.described) this.#autoLoad(state);
    if (what.loaded) this.#schedule(0);
    if (what.progress) {
      this.picker.render(state);
      return;
    }
    this.render();
  }

  #schedule(delay) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.#run(), delay);
  }

  async #run() {
    const state = this.parts.getState();
    if (this.#info()?.vision) return; // pictures run from the Picture mode
    if (translates(this.#info())) {
      (await this.#translator()).start(this.session.loaded.key);
      return;
    }
    if (!(await this.session.run(state))) return;
    const result = this.session.result;
    if (result && this.pendingQueryText !== null) {
      const index = result.rows.findIndex(
        (row) => row.text.trim().toLowerCase() === this.pendingQueryText,
      );
      this.pendingQueryText = null;
      if (index >= 0) this.parts.update({ query: index, key: -1 });
    }
    document.body.dataset.modelRuns = String(Number(document.body.dataset.modelRuns ?? 0) + 1);
    this.render();
    this.#explain();
    this.compare?.run();
  }

  // "Compare two models" loads its code the first time it opens; a link naming a second model
  // opens it once the page's model is loaded. focus: the reader opened it, its list takes focus.
  async #openCompare({ focus = false } = {}) {
    if (this.compare || this.comparing) return;
    this.comparing = import('./compare-panel.js');
    const { ComparePanel } = await this.comparing;
    this.comparing = null;
    if (!this.#info()) return; // the page's model went meanwhile
    const { update, getState, trainedModel } = this.parts;
    this.e.compareBody.hidden = false;
    this.e.compareOpen.hidden = true;
    this.compare = new ComparePanel(this.e.compareBody, {
      session: this.session,
      update,
      getState,
      trainedModel,
      onClose: () => {
        this.#closeCompare();
        this.e.compareOpen.focus(); // Remove's button went with the panel
      },
    });
    if (focus) this.e.compareBody.querySelector('select')?.focus();
  }

  #closeCompare() {
    const panel = this.compare;
    this.compare = null;
    panel?.remove({ keepPanel: true });
    this.e.compareBody.replaceChildren();
    this.e.compareBody.hidden = true;
    this.e.compareOpen.hidden = false;
    // Only a comparison that was open leaves the link: one the link names waits for its model.
    if (panel && this.parts.getState().second) this.parts.update({ second: '' });
  }

  // The Translate mode's code loads only when a model that translates is loaded.
  async #translator() {
    if (!this.translatePanel) {
      this.translatePanel = import('./translate-panel.js').then(({ TranslatePanel }) => {
        const host = el('section', {
          class: 'translate card',
          id: 'translate',
          'aria-labelledby': 'translate-title',
        });
        this.e.stage.before(host);
        return new TranslatePanel(host, { ...this.parts, getInfo: () => this.#info() });
      });
    }
    return this.translatePanel;
  }

  // Shows the Translate mode in the stage's place for a model that translates, else hides it.
  #showTranslate(info) {
    const on = translates(info);
    this.e.stage.hidden = on || Boolean(info?.vision); // the Picture mode hides it too
    this.e.explainCard.hidden = on;
    if (!this.translatePanel) return on;
    this.translatePanel.then((panel) => {
      panel.host.hidden = !translates(this.#info());
      if (!panel.host.hidden) panel.render();
      else panel.stop();
    });
    return on;
  }

  async #explain() {
    const state = this.parts.getState();
    if (translates(this.#info())) return;
    if (await this.session.explainLayer(state)) this.render();
  }

  /** The shown layer as the views draw it, or null before the model ran. */
  viewResult() {
    const info = this.#info();
    if (!info || !this.session.result) return null;
    return layerView(this.session.result, this.parts.getState(), info);
  }

  /** Back on the untrained layer: the model's panels hide, the playground's show. */
  showPlayground() {
    this.#showTranslate(null);
    this.controls.showMode(this.parts.getState());
    this.picker.render(this.parts.getState());
    this.e.predictions.hidden = true;
    this.e.modelWaiting.hidden = true;
    this.e.stage.classList.remove('model-waiting');
  }

  render() {
    const state = this.parts.getState();
    const { stage, composer, tokenStrip, controls } = this.parts;
    stage.renderChrome(state);
    composer.render(state);
    this.picker.render(state);
    const info = this.#info();
    this.#showPicture(info);
    const translating = this.#showTranslate(info);
    if (info?.vision) return;
    if (translating) {
      this.e.compare.hidden = true; // a translation has no second model to stand beside
      this.controls.sync(state, null, null);
      controls.sync(state, null, []);
      this.#renderMasthead(info);
      this.e.modelWaiting.hidden = true;
      this.e.predictions.hidden = true;
      return;
    }
    const result = info ? this.session.result : null;
    this.controls.sync(state, info, result, this.session.headScores());
    const view = this.viewResult();
    controls.sync(state, view, result?.tokens ?? []);
    this.#renderMasthead(info);
    this.e.compare.hidden = !info;
    if (info && state.second && !this.compare) this.#openCompare();
    const waiting = !view;
    this.e.stage.classList.toggle('model-waiting', waiting);
    this.e.modelWaiting.hidden = !waiting;
    this.e.predictions.hidden = waiting;
    if (waiting) {
      this.e.modelWaiting.textContent = this.#waitingText(state, info);
      this.e.viewCaption.textContent = '';
      this.e.statusLine.textContent = '';
      tokenStrip.render(state, null);
      this.parts.explain.host.replaceChildren(
        el('p', { class: 'hint', text: t('explainModelWaiting') }),
      );
      return;
    }
    const { head } = shownHead(state, info);
    const rows = { empty: false, rowTokens: result.rows, colTokens: result.rows };
    const query = focusedQuery(state, view.block ? view : rows);
    tokenStrip.render({ ...state, mode: 'self' }, rows);
    this.e.statusLine.textContent = this.#countsText(state, result);
    if (MODEL_VIEWS.includes(state.view)) {
      stage.renderChrome(state);
      this.stage.render(state, result, info, view, this.session.headScores());
      this.parts.stage.renderModelLegend(state);
    } else {
      stage.render(state, view, { head, query });
    }
    renderNumbersTable(this.e.weightsTable, state, view, { head, query });
    renderPredictions(this.e.predictionsBody, state, result, info);
    this.#renderExplain(state, info, head, query);
  }

  // A vision model takes pictures, not text: while one is open the Picture mode (loaded the
  // first time, so text pages never fetch it) stands in for the stage and the predictions.
  #showPicture(info) {
    const vision = Boolean(info?.vision);
    document.body.classList.toggle('picture-on', vision);
    this.e.stage.hidden = vision;
    if (vision) {
      this.e.predictions.hidden = true;
      this.e.modelWaiting.hidden = true;
    }
    if (!vision) {
      if (this.picture) this.picture.element.hidden = true;
      this.picture?.hide();
      return;
    }
    if (this.picture) {
      this.picture.element.hidden = false;
      this.picture.show(info);
      return;
    }
    this.picturePending ??= import('./picture/picture-panel.js').then(({ PicturePanel }) => {
      const getInfo = () => this.#info();
      this.picture = new PicturePanel({ client: this.parts.client, getInfo });
      this.e.stage.before(this.picture.element);
      this.render();
    });
  }

  /**
   * A picture's snapshot at `address` (the page's ?snapshot=), drawn in a Picture panel of its
   * own with no model and no compute; fetched with the widget's caps and read as hostile input.
   */
  async openPictureSnapshot(address) {
    this.snapshotPanel = null;
    const [{ PicturePanel }, { fetchCapped }, { readSnapshot }, { SNAPSHOT_LIMITS }] =
      await Promise.all([
        import('./picture/picture-panel.js'),
        import('../../widget/widget-models.js'),
        import('../../src/snapshot/read.js'),
        import('../../src/snapshot/format.js'),
      ]);
    const panel = new PicturePanel({ client: this.parts.client, getInfo: () => null });
    this.snapshotPanel = panel;
    // Beside a model's own Picture panel: ids of its own.
    panel.element.id = 'picture-snapshot';
    panel.element.querySelector('h2').id = 'picture-snapshot-title';
    panel.element.setAttribute('aria-labelledby', 'picture-snapshot-title');
    this.e.stage.before(panel.element);
    try {
      const bytes = await fetchCapped(address, { cap: SNAPSHOT_LIMITS.bytes, what: 'snapshot' });
      const text = new TextDecoder().decode(bytes);
      const lens = readSnapshot(text);
      if (!lens.picture) throw new TypeError(`snapshot: ${address} holds text, not a picture`);
      await panel.showSnapshot(lens, text);
    } catch (error) {
      panel.failSnapshot(error);
    }
  }

  /** Whether a picture snapshot the address named is open (or on its way): not yet closed. */
  showsPictureSnapshot() {
    if (this.snapshotPanel === undefined) return false;
    return this.snapshotPanel === null || this.snapshotPanel.element.isConnected;
  }

  #renderExplain(state, info, head, query) {
    const host = this.parts.explain.host;
    if (state.words || state.block) {
      host.replaceChildren(el('p', { class: 'hint', text: t('explainModelTokensOnly') }));
      return;
    }
    const explained = this.session.explain;
    const { layer } = shownHead(state, info);
    if (
      !explained ||
      explained.layer !== layer ||
      explained.tokens.length !== this.session.result.rows.length
    ) {
      host.replaceChildren(el('p', { class: 'hint', text: t('explainModelWaiting') }));
      return;
    }
    this.parts.explain.render(explainView(explained, info), {
      ...state,
      head,
      query,
      score: 'scaled-dot',
      temperature: 1,
    });
  }

  #renderMasthead(info) {
    if (!info) return;
    const badge = this.e.engineBadge;
    badge.dataset.state = 'ready';
    badge.textContent = t('engineReady', { backend: info.backend, where: t('whereWorker') });
  }

  #waitingText(state, info) {
    const session = this.session;
    if (session.runError) return t('modelRunFailed', { message: session.runError.message });
    if (info) return t('modelRunning');
    if (session.loading && !session.loading.error) return t('modelLoading');
    return t('modelWaiting');
  }

  #countsText(state, result) {
    const unit = t(state.words ? 'unitWords' : 'unitTokens');
    const counts = t('modelCounts', { n: result.rows.length, unit });
    const cut = result.truncated ? ` · ${t('modelTruncated', result.truncated)}` : '';
    return `${counts}${cut} · ${t('clickTokenHint')}`;
  }
}
