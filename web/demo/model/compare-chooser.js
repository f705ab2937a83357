// How the reader names the second model of "Compare two models": the catalog and the model
// trained in "Watch it learn" in one list, a Hub id, or files of their own. Each choice becomes
// { name, option, source, key, urlId? }: the source and key the compute thread's describe and
// load take (as model/session.js builds them), and urlId, the Hub id a link may carry.
import { el } from '../../src/views/dom.js';
import { validateHubSource } from '../../src/models/files/llama2c-names.js';
import { t } from '../i18n.js';
import { CATALOG, catalogEntry } from './catalog.js';

const TRAINED = 'trained';

export class SecondModelChooser {
  // getState(): the page's state; trainedModel(): LearnPanel.trainedModel(); onPick(choice).
  constructor({ getState, trainedModel, onPick }) {
    this.getState = getState;
    this.trainedModel = trainedModel;
    this.onPick = onPick;
    this.picked = null;
  }

  // The ways to name a second model: the catalog and a trained model in one list, a Hub id, files.
  build() {
    this.select = el('select', {
      id: 'compare-source',
      onchange: () => this.#pickOption(this.select.value),
    });
    // A model trained since the list was drawn shows up when the reader comes to the list.
    this.select.addEventListener('focus', () => this.render());
    const hubInput = el('input', {
      type: 'text',
      id: 'compare-hub-id',
      placeholder: 'owner/name',
      spellcheck: 'false',
      autocomplete: 'off',
    });
    this.hubError = el('span', { class: 'model-hub-error', role: 'status' });
    const files = el('input', { type: 'file', id: 'compare-files', multiple: true });
    files.addEventListener('change', () => this.#pickFiles([...files.files]));
    return el(
      'div',
      { class: 'compare-chooser' },
      el(
        'p',
        {},
        el('label', { for: 'compare-source', text: t('compareSecondLabel') }),
        ' ',
        this.select,
      ),
      el(
        'form',
        {
          class: 'model-hub-form',
          onsubmit: (event) => {
            event.preventDefault();
            this.#pickHubId(hubInput.value.trim());
          },
        },
        el('label', { for: 'compare-hub-id', text: t('modelHubLabel') }),
        hubInput,
        el('button', { type: 'submit', class: 'chip-button', text: t('modelHubGo') }),
        this.hubError,
      ),
      el('p', {}, el('label', { for: 'compare-files', text: t('compareFilesLabel') }), ' ', files),
    );
  }

  /** Draws the list again (a trained model may have appeared); `picked`: the current choice. */
  render(picked = this.picked) {
    this.picked = picked;
    const trained = this.trainedModel();
    const options = [
      el('option', { value: '', text: t('compareChoose') }),
      ...CATALOG.map(({ id }) => el('option', { value: id, text: id })),
    ];
    if (trained) {
      options.push(el('option', { value: TRAINED, text: t('compareTrained', trained) }));
    }
    this.select.replaceChildren(...options);
    const value = picked?.option ?? '';
    this.select.value = [...this.select.options].some((o) => o.value === value) ? value : '';
  }

  #pickOption(value) {
    if (value === TRAINED) this.#pickTrained();
    else if (value) this.pickHub(value);
  }

  #pickHubId(id) {
    this.hubError.textContent = '';
    try {
      validateHubSource(id);
    } catch (error) {
      this.hubError.textContent = error.message;
      return;
    }
    this.pickHub(id);
  }

  /** A Hub id (a link's `second`, a catalog entry or one typed in). */
  pickHub(id) {
    const dtype = this.getState().dtype;
    const option = catalogEntry(id) ? id : '';
    this.onPick({
      name: id,
      option,
      urlId: id,
      source: { kind: 'hub', id, revision: 'main' },
      key: `hub:${id}@main:${dtype}`,
    });
  }

  #pickFiles(files) {
    if (!files.length) return;
    const names = files.map((file) => `${file.name}:${file.size}`).join('|');
    const name = t('modelYourFiles', { n: files.length });
    this.onPick({ name, option: '', source: { kind: 'files', files }, key: `files:${names}` });
  }

  // The trained model is saved as checkpoint files at this moment: later steps do not change it.
  async #pickTrained() {
    const trained = this.trainedModel();
    if (!trained) return;
    const name = t('compareTrainedName', trained);
    let files;
    try {
      files = await trained.files();
    } catch (error) {
      this.hubError.textContent = error.message; // the trainer could not write its checkpoint
      return;
    }
    const key = `trained:${trained.steps}:${files.map((file) => file.size).join('|')}`;
    this.onPick({ name, option: TRAINED, source: { kind: 'files', files }, key });
  }
}
