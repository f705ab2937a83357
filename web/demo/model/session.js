// The page's side of a real model: what each model in the picker would take (asked of the
// compute thread when the picker opens), loading the chosen one (progress, cancel, errors),
// running it on the page's text and opening up the shown layer for the explain panel. The model
// itself lives in the compute thread (compute.js); this holds what the page draws.
import { forgetFiles, keepFiles, keptFiles } from '../kept-files.js';
import { CATALOG } from './catalog.js';

// A page script may point the page at a Hub mirror (the browser tests' local Hub) by setting
// this global before the page loads; the page's own address never can.
const HUB_URL = typeof globalThis.ATTNLENS_HUB_URL === 'string' ? globalThis.ATTNLENS_HUB_URL : '';

export class ModelSession {
  // client: the ComputeClient; onChange(): something the page draws changed.
  constructor(client, onChange) {
    this.client = client;
    this.onChange = onChange;
    this.descriptions = new Map(); // key -> { status: 'pending' | 'ready' | 'error', ... }
    this.files = null; // File[] the reader picked or dropped
    // Whether this browser keeps them (../kept-files.js): 'looking' (reading them back at start),
    // 'saving', 'kept', 'not-kept' (storage refused), or null (no files).
    this.filesKept = 'looking';
    this.loaded = null; // the model's info once loaded ({ key, layers, heads, ... })
    this.loading = null; // { key, progress, error }
    this.result = null; // the last run (compute.js runModel)
    this.explain = null; // the shown layer opened up (explainLayer)
    this.runError = null;
    this.scores = null; // the loaded model's head scores on its probe ({ key, heads }), or null
    this.scoring = null; // the key whose scores were asked for and are on their way
    keptFiles().then(
      (files) => {
        if (this.filesKept !== 'looking') return; // the reader picked others meanwhile
        this.filesKept = files ? 'kept' : null;
        if (files) this.#setFiles(files);
        this.onChange({ files: true });
      },
      () => {
        if (this.filesKept === 'looking') this.filesKept = null;
        this.onChange({ files: true });
      },
    );
  }

  /** Picked or dropped files to run, kept in this browser for next time. */
  useFiles(files) {
    this.#setFiles(files);
    this.filesKept = 'saving';
    keepFiles(files).then(
      () => this.#filesSaved(files, 'kept'),
      () => this.#filesSaved(files, 'not-kept'),
    );
  }

  #filesSaved(files, outcome) {
    if (this.files !== files) return;
    this.filesKept = outcome;
    this.onChange({ files: true });
  }

  /** Deletes the kept files from this browser and lets go of them here too. */
  async forgetFiles() {
    await forgetFiles().catch(() => {});
    if (this.loaded?.key.startsWith('files:')) this.release();
    this.files = null;
    this.filesKept = null;
    this.onChange({ files: true });
  }

  // The Hub models' descriptions stay known.
  #setFiles(files) {
    this.files = files;
    // Other files may share these names and sizes: describe them afresh.
    for (const key of this.descriptions.keys()) {
      if (key.startsWith('files:')) this.descriptions.delete(key);
    }
  }

  /** The source and key of the state's model: a Hub id (+ revision), or the picked files. */
  sourceOf(state) {
    if (state.model === 'files') {
      if (!this.files) return null;
      const names = this.files.map((file) => `${file.name}:${file.size}`).join('|');
      return { source: { kind: 'files', files: this.files }, key: `files:${names}:${state.dtype}` };
    }
    const revision = state.revision || 'main';
    return {
      source: { kind: 'hub', id: state.model, revision },
      key: `hub:${state.model}@${revision}:${state.dtype}`,
    };
  }

  #params(state) {
    const picked = this.sourceOf(state);
    return picked && { ...picked, hubUrl: HUB_URL, dtype: state.dtype };
  }

  /** What loading the state's model would take (asked once per model and storage). */
  description(state) {
    const params = this.#params(state);
    return params ? (this.descriptions.get(params.key) ?? null) : null;
  }

  describe(state) {
    const params = this.#params(state);
    if (!params || this.descriptions.has(params.key)) return;
    this.descriptions.set(params.key, { status: 'pending' });
    this.client.request(`describe:${params.key}`, 'modelDescribe', params).then(
      (description) => {
        this.descriptions.set(params.key, { status: 'ready', ...description });
        this.onChange({ described: params.key });
      },
      (error) => {
        // Offline (nothing cached yet) is a network error: the size is unknown, not wrong.
        const offline = error.reason === 'unreachable';
        this.descriptions.set(params.key, { status: offline ? 'offline' : 'error', error });
        this.onChange({ described: params.key });
      },
    );
  }

  /** Sizes of every catalog model with the state's storage, for the picker's list. */
  describeCatalog(state) {
    for (const { id } of CATALOG) this.describe({ ...state, model: id, revision: '' });
  }

  isLoaded(state) {
    return this.loaded !== null && this.loaded.key === this.sourceOf(state)?.key;
  }

  async load(state) {
    const params = this.#params(state);
    // A load that failed may be tried again; one in progress is not started twice.
    if (!params || (this.loading?.key === params.key && !this.loading.error)) return;
    this.loading = { key: params.key, progress: null, error: null };
    this.result = null;
    this.explain = null;
    this.loaded = null;
    this.scores = null;
    this.onChange({});
    try {
      const info = await this.client.request('model-load', 'modelLoad', params, {
        onProgress: (progress) => {
          if (this.loading?.key !== params.key) return;
          this.loading.progress = progress;
          this.onChange({ progress: true });
        },
      });
      if (info === null || this.loading?.key !== params.key) return;
      this.loaded = info;
      this.loading = null;
      this.onChange({ loaded: true });
    } catch (error) {
      if (this.loading?.key !== params.key) return;
      this.loading = { key: params.key, progress: null, error };
      this.onChange({});
    }
  }

  cancel() {
    this.client.cancel('model-load');
  }

  /** Asks again what failed for the state's model: its description, and the load if it failed. */
  retry(state) {
    const params = this.#params(state);
    if (!params) return;
    if (this.descriptions.get(params.key)?.status !== 'ready') this.descriptions.delete(params.key);
    if (this.loading?.key === params.key && this.loading.error) this.load(state);
    else this.describe(state);
    this.onChange({});
  }

  /** Forgets the loading state and frees the model (the reader left real models). */
  release() {
    this.cancel();
    this.loading = null;
    this.result = null;
    this.explain = null;
    this.scores = null;
    if (this.loaded) {
      this.loaded = null;
      this.client.request('model-release', 'modelRelease', {}).catch(() => {});
    }
  }

  #runParams(state) {
    return {
      key: this.loaded.key,
      text: state.text,
      pair: state.pair,
      surgery: state.surgery
        ? { mask: state.surgery, layer: state.surgeryLayer >= 0 ? state.surgeryLayer : null }
        : null,
      words: state.words,
    };
  }

  /** Runs the loaded model on the state's text; resolves once the result is in (or replaced). */
  async run(state) {
    if (!this.isLoaded(state)) return false;
    this.runError = null;
    try {
      const result = await this.client.request('model-run', 'modelRun', this.#runParams(state));
      if (!result) return false;
      this.result = result;
      this.#scoreHeads();
      return true;
    } catch (error) {
      this.runError = error;
      this.result = null;
      return true;
    }
  }

  /**
   * The loaded model's head scores on its probe (compute.js scoreHeads): { heads } once
   * measured, { error } when that failed, null while they are measured.
   */
  headScores() {
    return this.scores && this.scores.key === this.loaded?.key ? this.scores : null;
  }

  // Asks once per loaded model, after a run, so the text's first views never wait for it.
  #scoreHeads() {
    const key = this.loaded.key;
    if (this.scores?.key === key || this.scoring === key) return;
    this.scoring = key;
    this.client.request('model-scores', 'modelHeadScores', { key }).then(
      (scores) => {
        if (this.scoring === key) this.scoring = null;
        if (!scores || this.loaded?.key !== key) return;
        this.scores = scores;
        this.onChange({ scored: key });
      },
      (error) => {
        if (this.scoring === key) this.scoring = null;
        if (this.loaded?.key !== key) return; // replaced or released meanwhile
        this.scores = { key, heads: null, error };
        this.onChange({ scored: key });
      },
    );
  }

  /** Opens up the shown layer (q, k, v and raw scores) for the explain panel. */
  async explainLayer(state) {
    if (!this.isLoaded(state)) return false;
    const layer = Math.min(state.layer, this.loaded.layers - 1);
    try {
      const explained = await this.client.request('model-explain', 'modelExplain', {
        ...this.#runParams(state),
        layer,
      });
      if (!explained) return false;
      this.explain = explained;
    } catch {
      this.explain = null;
    }
    return true;
  }
}
