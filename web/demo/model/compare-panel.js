// "Compare two models": a second model beside the page's, on the same text. The reader picks it
// (a catalog model, a Hub id, files of their own, or the model trained in "Watch it learn"); the
// panel first says what both will take in memory, as the loader reports it before downloading,
// and refuses a pair that would not fit; then it loads the second model in the compute thread
// (model/compare-compute.js), runs both on every change of the text, and draws them side by side
// (compare-columns.js). Remove frees the second model. Loaded on demand by model/page.js.
import { el, formatBytes } from '../../src/views/dom.js';
import { loadFailure } from '../../src/models/load-failure.js';
import { t } from '../i18n.js';
import { catalogEntry } from './catalog.js';
import { SecondModelChooser } from './compare-chooser.js';
import { CompareColumns } from './compare-columns.js';
import { MAX_WASM_BYTES, pairMemory } from './compare-memory.js';

const HUB_URL = typeof globalThis.ATTNLENS_HUB_URL === 'string' ? globalThis.ATTNLENS_HUB_URL : '';

// The columns run text through both models: a model that reads pictures or translates (as
// describeModel says before anything downloads) cannot stand beside the page's. The string key
// saying which, or null.
const notText = (about) => {
  if (about.vision) return 'compareReadsPictures';
  return about.encoderLayers === undefined ? null : 'compareTranslates';
};

export class ComparePanel {
  // host: the panel's body; session: the page's ModelSession (its model and client);
  // update/getState as the page's panels have; trainedModel(): LearnPanel.trainedModel();
  // onClose(): Remove was pressed (the page closes the panel).
  constructor(host, { session, update, getState, trainedModel, onClose }) {
    this.onClose = onClose;
    this.host = host;
    this.session = session;
    this.client = session.client;
    this.update = update;
    this.getState = getState;
    this.picked = null; // compare-chooser.js's { name, option, source, key, urlId? }
    this.about = null; // { status: 'pending' | 'ready' | 'error', ... } for `picked`
    this.loading = null; // { progress, error }
    this.loaded = null; // the second model's info
    this.runs = null; // [page model's run, second's run]
    this.runError = null;
    this.chooser = new SecondModelChooser({
      getState,
      trainedModel,
      onPick: (picked) => this.#pick(picked),
    });
    this.details = el('div', { class: 'compare-details', 'aria-live': 'polite' });
    this.columnsHost = el('div', { class: 'compare-body' });
    this.columns = null;
    host.replaceChildren(this.chooser.build(), this.details, this.columnsHost);
    const wanted = getState().second;
    if (wanted) this.chooser.pickHub(wanted);
    this.render();
  }

  /** After the language changed: every word again. */
  relabel() {
    this.columns?.destroy();
    this.columns = null;
    this.host.replaceChildren(this.chooser.build(), this.details, this.columnsHost);
    this.render();
  }

  #pick(picked) {
    if (this.picked?.key === picked.key) return;
    this.remove({ keepPanel: true });
    this.picked = picked;
    this.update({ second: picked.urlId ?? '' });
    this.#describe();
    this.render();
  }

  #params() {
    const { source, key } = this.picked;
    return { source, key, hubUrl: HUB_URL, dtype: this.getState().dtype };
  }

  #describe() {
    const picked = this.picked;
    this.about = { status: 'pending' };
    this.client.request('compare-describe', 'modelDescribe', this.#params()).then(
      (about) => {
        if (!about || this.picked !== picked) return;
        this.about = { status: 'ready', ...about };
        // The bundled model downloads nothing: it loads at once, as the picker loads it. Any
        // other waits for Load, below the memory line.
        if (this.#fits() && catalogEntry(picked.name)?.bundled) this.load();
        this.render();
      },
      (error) => {
        if (this.picked !== picked) return;
        this.about = { status: 'error', error };
        this.render();
      },
    );
  }

  #fits() {
    const first = this.session.loaded;
    return (
      Boolean(first && this.about?.status === 'ready' && !this.about.missing?.length) &&
      !notText(this.about) &&
      pairMemory(first.bytes, this.about).fits
    );
  }

  async load() {
    const picked = this.picked;
    if (!picked || this.loading || this.loaded) return;
    this.loading = { progress: null, error: null };
    this.render();
    try {
      const info = await this.client.request('compare-load', 'compareLoad', this.#params(), {
        onProgress: (progress) => {
          if (this.picked !== picked || !this.loading) return;
          this.loading.progress = progress;
          // Only the status line changes: drawing the panel again would replace the Cancel
          // button under the reader's pointer or keyboard focus at every chunk.
          const status = this.details.querySelector('#compare-loading-status');
          if (status) status.textContent = this.#loadingText();
          else this.render();
        },
      });
      if (info === null || this.picked !== picked) return;
      this.loaded = info;
      this.loading = null;
      this.run();
    } catch (error) {
      if (this.picked !== picked) return;
      // Cancelled: back to the memory line and its Load button.
      this.loading = error?.name === 'AbortError' ? null : { progress: null, error };
    }
    this.render();
  }

  /** Runs both models on the page's text (after each run of the page's model). */
  async run() {
    const first = this.session.loaded;
    if (!this.loaded || !first) return;
    const state = this.getState();
    const keys = [first.key, this.loaded.key];
    try {
      const runs = await this.client.request('compare-run', 'compareRun', {
        keys,
        text: state.text,
        pair: state.pair,
      });
      if (!runs || this.loaded?.key !== keys[1]) return;
      this.runs = runs;
      this.runError = null;
      document.body.dataset.compareRuns = String(
        Number(document.body.dataset.compareRuns ?? 0) + 1,
      );
    } catch (error) {
      this.runError = error;
      this.runs = null;
    }
    this.render();
  }

  /** Frees the second model; without keepPanel the panel closes too (page.js hides it). */
  remove({ keepPanel = false } = {}) {
    this.client.cancel('compare-load');
    // A load under way may finish in the compute thread before its cancel arrives: free it too.
    if (this.loaded || this.loading) {
      this.client.request('compare-release', 'compareRelease', {}).then(
        // The tests read that the compute thread let go of it.
        (answer) => (document.body.dataset.compareReleased = String(answer?.freed ?? false)),
        () => {},
      );
    }
    this.picked = null;
    this.about = null;
    this.loading = null;
    this.loaded = null;
    this.runs = null;
    this.columns?.destroy();
    this.columns = null;
    if (!keepPanel) {
      this.onClose();
      return;
    }
    this.render();
  }

  render() {
    this.chooser.render(this.picked);
    this.details.replaceChildren(...this.#detailParts());
    if (!this.loaded || !this.runs) {
      this.columns?.destroy();
      this.columns = null;
      return;
    }
    this.columns ??= new CompareColumns(this.columnsHost);
    const first = this.session.loaded;
    this.columns.setData({
      scale: this.getState().scale,
      models: [
        { name: this.#firstName(), info: first, run: this.runs[0] },
        { name: this.picked.name, info: this.loaded, run: this.runs[1] },
      ],
    });
  }

  #firstName() {
    const state = this.getState();
    return state.model === 'files' ? t('modelYourFilesShort') : state.model;
  }

  #detailParts() {
    const picked = this.picked;
    if (!picked) return [el('p', { class: 'hint', text: t('compareIntro') })];
    const remove = el('button', {
      type: 'button',
      class: 'chip-button',
      id: 'compare-remove',
      text: t('compareRemove'),
      onclick: () => this.remove(),
    });
    if (this.loaded) {
      const note = el('p', { class: 'hint', text: t('compareOwnSettings') });
      const memory = this.#memoryLine(this.loaded.bytes, 0);
      const error = this.runError
        ? el('p', { class: 'model-status is-error', role: 'alert', text: this.runError.message })
        : null;
      const running = this.runs ? null : el('p', { class: 'hint', text: t('compareRunning') });
      return [memory, note, error, running, remove].filter(Boolean);
    }
    if (this.loading?.error) {
      const { key, values } = loadFailure(this.loading.error, picked.name);
      return [
        el('p', { class: 'model-status is-error', role: 'alert', text: t(key, values) }),
        remove,
      ];
    }
    if (this.loading) {
      return [
        el('p', { class: 'model-status', id: 'compare-loading-status', text: this.#loadingText() }),
        el('button', {
          type: 'button',
          class: 'model-action',
          id: 'compare-cancel',
          text: t('modelCancel'),
          onclick: () => this.client.cancel('compare-load'),
        }),
      ];
    }
    return [...this.#memoryParts(), remove];
  }

  #loadingText() {
    const progress = this.loading?.progress;
    const done = progress ? formatBytes(progress.totalLoaded ?? 0) : '';
    return t('compareLoading', { name: this.picked.name, done });
  }

  // Both models' weights in wasm memory (and, before the second loads, its scratch).
  #memoryLine(secondBytes, scratch, fits = true) {
    const first = this.session.loaded;
    const total = first.bytes + secondBytes + scratch;
    return el('p', {
      class: 'compare-memory',
      dataset: { total: String(total), fits: String(fits) },
      text: t(this.loaded ? 'compareMemoryLoaded' : 'compareMemory', {
        first: this.#firstName(),
        firstSize: formatBytes(first.bytes),
        second: this.picked.name,
        secondSize: formatBytes(secondBytes),
        scratch: formatBytes(scratch),
        total: formatBytes(total),
        limit: formatBytes(MAX_WASM_BYTES),
      }),
    });
  }

  // What both models take, before the second downloads: refused when they would not fit.
  #memoryParts() {
    const picked = this.picked;
    const about = this.about;
    if (!about || about.status === 'pending') {
      return [el('p', { text: t('compareChecking', { name: picked.name }) })];
    }
    if (about.status === 'error') {
      const { key, values } = loadFailure(about.error, picked.name);
      return [el('p', { class: 'model-status is-error', role: 'alert', text: t(key, values) })];
    }
    const { total, fits } = pairMemory(this.session.loaded.bytes, about);
    const memory = this.#memoryLine(about.memoryBytes, about.loadScratchBytes, fits);
    if (about.missing?.length) {
      const text = t('modelMissing', { files: about.missing.join(', ') });
      return [memory, el('p', { class: 'model-status is-error', role: 'alert', text })];
    }
    const reads = notText(about);
    if (reads) {
      const text = t('compareNotText', { name: picked.name, reads: t(reads) });
      return [el('p', { class: 'model-status is-error compare-refused', role: 'alert', text })];
    }
    if (!fits) {
      const text = t('compareTooLarge', {
        total: formatBytes(total),
        limit: formatBytes(MAX_WASM_BYTES),
      });
      return [
        memory,
        el('p', { class: 'model-status is-error compare-refused', role: 'alert', text }),
      ];
    }
    const size = about.allCached ? t('modelFromCache') : formatBytes(about.downloadBytes ?? 0);
    const load = el('button', {
      type: 'button',
      class: 'model-action',
      id: 'compare-load',
      text: t('compareLoad', { name: picked.name, size }),
      onclick: () => this.load(),
    });
    return [memory, load];
  }
}
