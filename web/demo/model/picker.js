// The model picker at the top of the page: the untrained layer or a real model; the catalog with
// each model's download size and memory (from the Hub's listing and config.json, or "unknown"
// offline), a Hub id or files of one's own, and the chosen model's card: what it will take,
// whether it fits (and why not), Load with its size, progress per file and in total, Cancel,
// and what went wrong in words.
import { el, formatBytes } from '../../src/views/dom.js';
import { markTabStop, rovingTabindex } from '../../src/views/roving.js';
import { validateHubSource } from '../../src/models/files/llama2c-names.js';
import { loadFailure } from '../../src/models/load-failure.js';
import { EXAMPLES } from '../examples.js';
import { CATALOG, catalogEntry } from './catalog.js';
import { t } from '../i18n.js';

const isAbort = (error) => error?.name === 'AbortError';
// The model that ships with the site: what a failed download offers instead.
const BUNDLED_MODEL = 'stories260K';

export class ModelPicker {
  // session: the ModelSession; update(patch, options) and getState() as the other panels have.
  constructor(elements, { session, update, getState }) {
    this.e = elements;
    this.session = session;
    this.update = update;
    this.getState = getState;
    this.cancelFor = null; // { key, button }: the Cancel button of the load in progress
    for (const input of elements.modelKind) {
      input.addEventListener('change', () => this.#pickKind(input.value));
    }
    rovingTabindex(elements.modelList, {
      selector: 'button[role="radio"]',
      onMove: (button) => button.click(),
    });
    elements.modelHubForm.addEventListener('submit', (event) => {
      event.preventDefault();
      this.#pickHubId(elements.modelHubId.value.trim());
    });
    elements.modelFiles.addEventListener('change', () =>
      this.#pickFiles(elements.modelFiles.files),
    );
    const drop = elements.modelDrop;
    drop.addEventListener('dragover', (event) => {
      event.preventDefault();
      drop.classList.add('is-over');
    });
    drop.addEventListener('dragleave', () => drop.classList.remove('is-over'));
    drop.addEventListener('drop', (event) => {
      event.preventDefault();
      drop.classList.remove('is-over');
      this.#pickFiles(event.dataTransfer.files);
    });
  }

  #pickKind(kind) {
    if (kind === 'untrained') {
      this.session.release();
      this.update({ model: '', view: 'matrix', query: -1, key: -1 }, { immediate: true });
    } else {
      this.#pickModel(CATALOG[0].id);
    }
  }

  // A catalog model: its example text replaces one of the page's own (never the reader's).
  #pickModel(id) {
    const state = this.getState();
    const entry = catalogEntry(id);
    const patch = { model: id, revision: '', layer: 0, head: 0, query: -1, key: -1 };
    if (entry && this.#isExampleText(state.text)) {
      patch.text = entry.example;
      patch.pair = entry.pair ?? '';
    }
    if (state.view === 'heads') patch.view = 'model';
    this.update(patch, { immediate: true });
    // A bundled model downloads nothing: it loads at once, with no Load button to press.
    if (entry?.bundled) this.session.load(this.getState());
  }

  #isExampleText(text) {
    return (
      EXAMPLES.some((example) => example.text === text) ||
      CATALOG.some((entry) => entry.example === text)
    );
  }

  #pickHubId(id) {
    this.e.modelHubError.textContent = '';
    try {
      validateHubSource(id);
    } catch (error) {
      this.e.modelHubError.textContent = error.message;
      return;
    }
    this.#pickModel(id);
  }

  #pickFiles(list) {
    const files = [...(list ?? [])];
    if (!files.length) return;
    this.session.useFiles(files);
    this.update(
      { model: 'files', revision: '', layer: 0, head: 0, query: -1, key: -1 },
      {
        immediate: true,
      },
    );
  }

  render(state) {
    const e = this.e;
    const real = state.model !== '';
    for (const input of e.modelKind) input.checked = input.value === (real ? 'real' : 'untrained');
    e.modelPicker.hidden = !real;
    document.body.classList.toggle('model-mode', real);
    if (!real) return;
    // Once a model runs, the list folds away behind "Choose another model".
    const loaded = this.session.isLoaded(state);
    if (!loaded) this.expanded = false;
    e.modelList.closest('.model-choose').hidden = loaded && !this.expanded;
    e.modelPicker.classList.toggle('is-folded', loaded && !this.expanded);
    this.session.describeCatalog(state);
    this.session.describe(state);
    // A bundled model named by the link loads as it does when picked: there is nothing to download.
    if (catalogEntry(state.model)?.bundled && !loaded && !this.session.loading) {
      this.session.load(state);
    }
    this.#renderList(state);
    this.#renderKeptFiles(state);
    this.#renderDetails(state);
  }

  // Files kept from an earlier visit (the link never names them): use them again, or forget.
  #renderKeptFiles(state) {
    const files = this.session.files;
    const host = this.e.modelKeptFiles;
    host.hidden = !files || state.model === 'files' || this.session.filesKept !== 'kept';
    if (host.hidden) return host.replaceChildren();
    host.replaceChildren(
      t('modelFilesKeptList', { names: files.map((file) => file.name).join(', ') }),
      ' ',
      el('button', {
        type: 'button',
        class: 'chip-button',
        id: 'model-use-kept',
        text: t('modelUseKeptFiles'),
        onclick: () =>
          this.update(
            { model: 'files', revision: '', layer: 0, head: 0, query: -1, key: -1 },
            { immediate: true },
          ),
      }),
      ' ',
      el('button', {
        type: 'button',
        class: 'chip-button',
        id: 'model-forget-kept',
        text: t('modelForgetFiles'),
        onclick: () => this.session.forgetFiles(),
      }),
    );
  }

  #renderList(state) {
    const focused = this.e.modelList.contains(document.activeElement)
      ? document.activeElement.dataset.model
      : null;
    const buttons = CATALOG.map(({ id, note }) => {
      const about = this.session.description({ ...state, model: id, revision: '' });
      const checked = state.model === id;
      return el(
        'button',
        {
          type: 'button',
          role: 'radio',
          class: 'model-option',
          'aria-checked': String(checked),
          dataset: { model: id },
          onclick: () => {
            if (this.getState().model !== id) this.#pickModel(id);
          },
        },
        el('span', { class: 'model-name', text: id }),
        el('span', { class: 'model-note', text: t(note) }),
        el('span', { class: 'model-size', text: sizeText(about) }),
      );
    });
    this.e.modelList.replaceChildren(...buttons);
    markTabStop(
      buttons,
      CATALOG.findIndex(({ id }) => id === state.model),
    );
    if (focused) this.e.modelList.querySelector(`[data-model="${focused}"]`)?.focus();
  }

  #renderDetails(state) {
    const session = this.session;
    const about = session.description(state);
    const picked = session.sourceOf(state);
    const name =
      state.model === 'files'
        ? t('modelYourFiles', { n: session.files?.length ?? 0 })
        : state.model;
    const parts = [el('h3', { class: 'model-title', text: name })];
    if (!picked) {
      const looking = session.filesKept === 'looking';
      parts.push(el('p', { text: t(looking ? 'modelFilesLooking' : 'modelPickFilesAgain') }));
      this.e.modelDetails.replaceChildren(...parts);
      return;
    }
    if (state.model === 'files') parts.push(this.#keptFiles());
    const loading = session.loading?.key === picked.key ? session.loading : null;
    if (session.isLoaded(state)) {
      const text = loadedText(session.loaded, state.model === 'files');
      parts.push(el('p', { class: 'model-status is-ready', text }));
      if (!this.expanded) {
        parts.push(
          el('button', {
            type: 'button',
            class: 'chip-button',
            id: 'model-change',
            text: t('modelChange'),
            onclick: () => {
              this.expanded = true;
              this.render(this.getState());
              this.e.modelList.querySelector('[tabindex="0"]')?.focus();
            },
          }),
        );
      }
    } else if (loading && !loading.error) {
      // Progress re-renders the panel many times a second: the same Cancel button each time, so
      // a click whose press and release straddle a render still lands on it.
      if (this.cancelFor?.key !== loading.key) {
        this.cancelFor = {
          key: loading.key,
          button: this.#button('modelCancel', () => session.cancel()),
        };
      }
      parts.push(...progressParts(loading.progress), this.cancelFor.button);
    } else {
      if (loading?.error && isAbort(loading.error)) {
        parts.push(el('p', { class: 'model-status', text: t('modelCancelled') }));
      }
      if (loading?.error && !isAbort(loading.error))
        parts.push(...this.#failure(state, loading.error));
      else parts.push(...this.#aboutParts(state, about));
    }
    this.e.modelDetails.replaceChildren(...parts);
  }

  // Size, memory, cache and fit of a model not yet loaded, and its Load button.
  #aboutParts(state, about) {
    if (!about || about.status === 'pending') return [el('p', { text: t('modelChecking') })];
    if (about.status === 'offline') {
      return [
        el('p', { text: t('modelSizeUnknown') }),
        this.#button('modelLoadUnknown', () => this.session.load(state)),
      ];
    }
    if (about.status === 'error') return this.#failure(state, about.error);
    const parts = [
      el('p', { class: 'model-shape', text: t('modelShape', shapeValues(about)) }),
      el('p', {
        class: 'model-download',
        text:
          about.downloadBytes === null
            ? t('modelDownloadUnknown', { n: about.files.length })
            : t('modelDownload', { size: formatBytes(about.downloadBytes), n: about.files.length }),
      }),
      el('p', {
        class: 'model-memory',
        text: t('modelMemory', {
          size: formatBytes(about.memoryBytes),
          dtype: about.dtype,
          scratch: formatBytes(about.loadScratchBytes),
        }),
      }),
    ];
    if (about.allCached) parts.push(el('p', { class: 'model-cached', text: t('modelCached') }));
    parts.push(this.#dtypeChoice(state));
    if (about.missing.length) {
      parts.push(
        el('p', {
          class: 'model-status is-error',
          role: 'alert',
          text: t('modelMissing', { files: about.missing.join(', ') }),
        }),
      );
    } else if (!about.fits || tooLargeForDevice(about)) {
      const reason = about.fits
        ? t('modelTooLargeDevice', {
            size: formatBytes(peakBytes(about)),
            device: navigator.deviceMemory,
          })
        : about.reason;
      parts.push(
        el('p', {
          class: 'model-status is-error',
          role: 'alert',
          text: t('modelTooLarge', { reason }),
        }),
      );
    } else {
      const size = about.allCached ? t('modelFromCache') : formatBytes(about.downloadBytes ?? 0);
      parts.push(this.#button('modelLoad', () => this.session.load(state), { size }));
    }
    return parts;
  }

  #dtypeChoice(state) {
    const select = el(
      'select',
      {
        id: 'model-dtype',
        onchange: (event) => this.update({ dtype: event.target.value }, { immediate: true }),
      },
      el('option', { value: 'f32', text: t('modelDtypeF32') }),
      el('option', { value: 'f16', text: t('modelDtypeF16') }),
      el('option', { value: 'q8', text: t('modelDtypeQ8') }),
      el('option', { value: 'q4', text: t('modelDtypeQ4') }),
    );
    select.value = state.dtype;
    return el(
      'p',
      { class: 'model-dtype' },
      el('label', { for: 'model-dtype', text: t('modelDtypeLabel') }),
      ' ',
      select,
    );
  }

  // Whether this browser keeps the reader's files for next time, and the way to forget them.
  #keptFiles() {
    const kept = this.session.filesKept;
    const key = { saving: 'modelFilesSaving', kept: 'modelFilesKept' }[kept] ?? 'modelFilesNotKept';
    return el(
      'p',
      { class: 'model-kept', dataset: { kept: kept ?? '' } },
      t(key),
      ' ',
      kept === 'kept'
        ? el('button', {
            type: 'button',
            class: 'chip-button',
            id: 'model-forget-files',
            text: t('modelForgetFiles'),
            onclick: () => this.session.forgetFiles(),
          })
        : null,
    );
  }

  // What went wrong, in words, with the ways on: try again, the bundled model, one's own files.
  #failure(state, error) {
    let model = state.revision ? `${state.model}@${state.revision}` : state.model;
    if (state.model === 'files') model = t('modelYourFilesShort');
    const { reason, key, values } = loadFailure(error, model);
    const download = state.model !== 'files' && state.model !== BUNDLED_MODEL;
    return [
      el('p', {
        class: 'model-status is-error',
        role: 'alert',
        dataset: { reason },
        text: t(key, values),
      }),
      download ? el('p', { class: 'model-next', text: t('modelFailNext') }) : null,
      el(
        'p',
        { class: 'model-actions' },
        el('button', {
          type: 'button',
          class: 'model-action',
          id: 'model-retry',
          text: t('modelRetry'),
          onclick: () => this.session.retry(state),
        }),
        download
          ? el('button', {
              type: 'button',
              class: 'chip-button',
              id: 'model-use-bundled',
              text: t('modelUseBundled'),
              onclick: () => this.#pickModel(BUNDLED_MODEL),
            })
          : null,
      ),
    ].filter(Boolean);
  }

  #button(key, onclick, values) {
    return el('button', {
      type: 'button',
      class: 'model-action',
      id: key === 'modelCancel' ? 'model-cancel' : 'model-load',
      text: t(key, values),
      onclick,
    });
  }
}

// While it loads, a model holds its files and its weights at once: what the tab needs at most.
const peakBytes = (about) =>
  about.memoryBytes + about.loadScratchBytes + (about.downloadBytes ?? 0);

// The browser's rough figure for this device's memory (GiB; Chromium only): a model that would
// take more than half of it is refused rather than left to crash the tab.
function tooLargeForDevice(about) {
  const device = typeof navigator !== 'undefined' ? navigator.deviceMemory : undefined;
  return typeof device === 'number' && device > 0 && peakBytes(about) > (device * 2 ** 30) / 2;
}

function sizeText(about) {
  if (!about || about.status === 'pending') return t('modelChecking');
  if (about.status === 'offline') return t('modelSizeUnknownShort');
  if (about.status === 'error') return t('modelUnavailable');
  const size = about.downloadBytes === null ? '?' : formatBytes(about.downloadBytes);
  return about.allCached ? t('modelSizeCached', { size }) : size;
}

function shapeValues(about) {
  return {
    type: about.modelType,
    layers: about.layers,
    heads: about.heads,
    parameters: formatCount(about.parameters),
  };
}

// Files of one's own say whether they are kept on their own line (#keptFiles).
function loadedText(info, files) {
  const key = info.bundled
    ? 'modelLoadedBundled'
    : files
      ? 'modelLoadedFiles'
      : info.fromCache
        ? 'modelLoadedOffline'
        : 'modelLoaded';
  return t(key, {
    type: info.modelType,
    layers: info.layers,
    heads: info.heads,
    parameters: formatCount(info.parameters),
    backend: info.backend,
  });
}

// 3.7M, 124M, 8.2k
function formatCount(n) {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e8 ? 0 : 1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

// The download's progress: the file now coming and the total, as bars and in words.
function progressParts(progress) {
  if (!progress) return [el('p', { class: 'model-status', text: t('modelStarting') })];
  const bar = (label, loaded, total, id) =>
    el(
      'div',
      { class: 'model-progress' },
      el('label', { for: id, text: label }),
      el('progress', { id, max: total ?? 1, value: total ? loaded : 0 }),
      el('span', {
        text: total ? `${formatBytes(loaded)} / ${formatBytes(total)}` : formatBytes(loaded),
      }),
    );
  return [
    bar(progress.file, progress.loaded, progress.total, 'model-progress-file'),
    bar(t('modelTotal'), progress.totalLoaded, progress.totalBytes, 'model-progress-total'),
  ];
}
