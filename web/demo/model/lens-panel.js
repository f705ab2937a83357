// "Logit lens": every layer's hidden state at every position of the page's text, read through
// the model's own final norm and output layer (model.run(text, { lens }) in the compute
// thread), as a grid of top tokens shaded by probability (src/views/logit-lens-view.js), the
// layer where the final answer appears outlined. Loaded by lens-panels.js when the reader opens
// the card.
import { el } from '../../src/views/dom.js';
import { adoptLensPanelsCss } from '../../src/views/lens-panels-css.js';
import { logitLensView } from '../../src/views/logit-lens-view.js';
import { readLogitLens } from '../../src/snapshot/read-panels.js';
import { logitLensField } from '../../src/snapshot/write-panels.js';
import { lensStrings } from '../../widget/widget-panels.js';
import { t } from '../i18n.js';

export class Panel {
  constructor(host, { client, getState, getInfo }) {
    adoptLensPanelsCss(document);
    Object.assign(this, { host, client, getState, getInfo });
    this.for = null; // `${model key}\0${text}` of the lens shown
    this.field = null; // the lens in the snapshot's form (write-panels.js)
    this.lens = null; // and read back (read-panels.js), as the view and the widget take it
    this.running = false;
    this.error = null;
    this.generation = 0;
    this.status = el('p', { class: 'hint lens-status', role: 'status', tabindex: '-1' });
    this.body = el('div', { class: 'lens-body' });
    host.replaceChildren(this.status, this.body);
  }

  focus() {
    (this.body.querySelector('.al-lens-cell') ?? this.status).focus();
  }

  async run() {
    const info = this.getInfo();
    if (!info) return;
    const params = { key: info.key, text: this.getState().text };
    const id = `${params.key}\u0000${params.text}`;
    if (id === this.for && this.lens) return;
    const generation = ++this.generation;
    this.running = true;
    this.error = null;
    this.render();
    try {
      const answer = await this.client.request('lens-logit', 'lensLogitLens', params);
      if (!answer || generation !== this.generation) return;
      this.field = logitLensField(answer);
      this.lens = readLogitLens(this.field, info);
      this.for = id;
    } catch (error) {
      if (generation !== this.generation) return;
      this.error = error;
    }
    this.running = false;
    this.render();
  }

  stop() {
    this.generation++;
  }

  render() {
    this.status.textContent = this.running
      ? t('lensRunning')
      : this.error
        ? t('lensFailed', { message: this.error.message })
        : '';
    const focused = this.body.contains(document.activeElement) ? document.activeElement : null;
    const at = focused?.dataset.state && [focused.dataset.state, focused.dataset.position];
    this.body.replaceChildren(
      this.lens ? logitLensView(this.lens, { strings: lensStrings(t) }) : '',
    );
    if (at) {
      this.body.querySelector(`[data-state="${at[0]}"][data-position="${at[1]}"]`)?.focus();
    }
  }

  /** The logit lens part of a snapshot of the page's run (none until read for its text). */
  snapshotPart() {
    const info = this.getInfo();
    const current = info && `${info.key}\u0000${this.getState().text}`;
    return this.field && this.for === current ? { logitLens: this.field } : {};
  }
}
