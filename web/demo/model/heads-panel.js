// "Which heads matter": every head of the page's model switched off in turn and the change in
// one prediction measured (model.headEffects() in the compute thread, with progress and
// Cancel), drawn as the model's layers x heads coloured by that change, with the heads that
// matter most ranked. Clicking heads (or Enter / Space on them) switches them off together,
// zeroed or replaced by their mean, and the predictions before and after stand side by side.
// Loaded by lens-panels.js when the reader opens the card.
import { el } from '../../src/views/dom.js';
import { headEffectsView } from '../../src/views/head-effects-view.js';
import { adoptLensPanelsCss } from '../../src/views/lens-panels-css.js';
import { predictionLabel } from '../../src/views/predictions.js';
import { ablationField } from '../../src/snapshot/write-panels.js';
import { effectsStrings } from '../../widget/widget-panels.js';
import { t } from '../i18n.js';

// The ablation modes and their words.
const MODES = { zero: 'headsModeZero', mean: 'headsModeMean' };

// The predictions at the position headEffects() measures (BERT: the first [MASK]).
const predictedTop = (info, predictions) =>
  info.causal ? predictions : (predictions[0]?.top ?? []);

export class Panel {
  constructor(host, { client, session, getState, getInfo }) {
    adoptLensPanelsCss(document);
    Object.assign(this, { host, client, session, getState, getInfo });
    this.for = null; // `${model key}\0${text}` the panel's results are of
    this.target = null; // the token id the reader picked, or null: the top prediction
    this.mode = 'zero';
    this.off = []; // [{ layer, head }] switched off, in the order the reader chose them
    this.measured = null; // measureHeadEffects()'s answer and what it was for
    this.ablated = null; // runAblated()'s answer and the heads it had off
    this.measuring = null; // { done, total } while the heads are measured
    this.problem = null; // { key, values } of the status line after a failure or Cancel
    this.generation = 0;
    this.ablateGeneration = 0;
    this.status = el('p', { class: 'hint heads-status', role: 'status' });
    this.body = el('div', { class: 'heads-body' });
    host.replaceChildren(this.status, this.body);
    this.render();
  }

  focus() {
    this.host.querySelector('select')?.focus();
  }

  #params() {
    const info = this.getInfo();
    return info && { key: info.key, text: this.getState().text };
  }

  run() {
    const params = this.#params();
    if (!params) return;
    const id = `${params.key}\u0000${params.text}`;
    // A run that changed nothing the panel reads (a mask surgery, words) keeps what it shows.
    if (id === this.for && this.measured?.for === id && !this.problem) return;
    if (id !== this.for) {
      // Another text: its own top prediction is the target; the heads off stay off.
      if (this.for?.split('\u0000')[0] !== params.key) this.off = [];
      this.for = id;
      this.target = null;
    }
    this.#measure();
    this.#ablate();
  }

  async #measure() {
    const params = this.#params();
    const info = this.getInfo();
    const generation = ++this.generation;
    this.client.cancel('lens-effects'); // the heads of an older text are not worth finishing
    this.measuring = { done: 0, total: info.layers * info.heads };
    this.problem = null;
    this.render();
    try {
      const measured = await this.client.request(
        'lens-effects',
        'lensHeadEffects',
        { ...params, target: this.target },
        {
          onProgress: (progress) => {
            if (generation !== this.generation) return;
            this.measuring = progress;
            this.#renderStatus();
          },
        },
      );
      if (!measured || generation !== this.generation) return;
      this.measured = { ...measured, for: this.for, asked: this.target };
    } catch (error) {
      if (generation !== this.generation) return;
      this.problem =
        error.name === 'AbortError'
          ? { key: 'headsCancelled' }
          : { key: 'headsFailed', values: { message: error.message } };
    }
    this.measuring = null;
    this.render();
  }

  #cancel() {
    this.generation++;
    this.client.cancel('lens-effects');
    this.measuring = null;
    this.problem = { key: 'headsCancelled' };
    this.render();
  }

  async #ablate() {
    const params = this.#params();
    const generation = ++this.ablateGeneration;
    const off = this.off.map(({ layer, head }) => ({ layer, head, mode: this.mode }));
    try {
      const answer = await this.client.request('lens-ablate', 'lensAblate', { ...params, off });
      if (!answer || generation !== this.ablateGeneration) return;
      this.ablated = { ...answer, off, for: this.for };
    } catch (error) {
      if (generation !== this.ablateGeneration) return;
      this.ablated = null;
      this.problem = { key: 'headsFailed', values: { message: error.message } };
    }
    this.render();
  }

  #toggle(layer, head) {
    const at = this.off.findIndex((h) => h.layer === layer && h.head === head);
    if (at >= 0) this.off.splice(at, 1);
    else this.off.push({ layer, head });
    this.#ablate();
    this.render();
  }

  stop() {
    this.generation++;
    this.ablateGeneration++;
    this.client.cancel('lens-effects');
  }

  #renderStatus() {
    const info = this.getInfo();
    const { measuring, problem, measured } = this;
    const parts = [];
    if (measuring) {
      parts.push(t('headsMeasuring', { done: measuring.done, total: measuring.total }));
    } else if (problem) {
      parts.push(t(problem.key, problem.values));
    } else if (measured && info) {
      const total = info.layers * info.heads;
      parts.push(t('headsMeasured', { total, ms: Math.round(measured.ms) }));
    }
    const button = measuring
      ? el('button', {
          type: 'button',
          class: 'chip-button heads-cancel',
          text: t('modelCancel'),
          onclick: () => this.#cancel(),
        })
      : problem?.key === 'headsCancelled'
        ? el('button', {
            type: 'button',
            class: 'chip-button heads-again',
            text: t('headsMeasureAgain'),
            onclick: () => this.#measure(),
          })
        : null;
    const hadFocus = this.status.contains(document.activeElement);
    this.status.replaceChildren(...parts, button ? ' ' : '', button ?? '');
    if (hadFocus) (button ?? this.host.querySelector('select'))?.focus();
  }

  #controls(info, predictions) {
    const options = [
      el('option', { value: '', text: t('headsTargetTop'), selected: this.target === null }),
      ...predictions.map((p) =>
        el('option', { value: p.id, text: predictionLabel(p), selected: p.id === this.target }),
      ),
    ];
    const target = el(
      'select',
      {
        id: 'heads-target',
        onchange: (event) => {
          this.target = event.target.value === '' ? null : Number(event.target.value);
          this.#measure();
        },
      },
      options,
    );
    const mode = el(
      'select',
      {
        id: 'heads-mode',
        onchange: (event) => {
          this.mode = event.target.value;
          this.#ablate();
        },
      },
      Object.entries(MODES).map(([m, key]) =>
        el('option', { value: m, text: t(key), selected: m === this.mode }),
      ),
    );
    return el(
      'div',
      { class: 'heads-controls' },
      el('label', { for: 'heads-target', text: t('headsTarget') }),
      target,
      el('label', { for: 'heads-mode', text: t('headsMode') }),
      mode,
      el('button', {
        type: 'button',
        id: 'heads-clear',
        class: 'chip-button heads-clear',
        text: t('headsClear'),
        disabled: this.off.length === 0,
        onclick: () => {
          this.off = [];
          this.#ablate();
          this.render();
        },
      }),
    );
  }

  // The ablation as the view (and a snapshot) holds it, once both answers are in.
  #ablation() {
    const { measured, ablated } = this;
    if (!measured) return null;
    const offNow = this.off.map(({ layer, head }) => ({ layer, head, mode: this.mode }));
    const current = ablated?.for === measured.for ? ablated : null;
    return {
      position: measured.position,
      target: measured.target,
      logProb: measured.logProb,
      effects: measured.effects,
      off: offNow,
      // The predictions are the last answered run's until the run with the heads now off answers.
      before: current?.before ?? [],
      after: current?.after ?? [],
    };
  }

  render() {
    const info = this.getInfo();
    this.#renderStatus();
    if (!info) return;
    const result = this.session.result;
    const predictions = result ? predictedTop(info, result.own.predictions) : [];
    // Keep the focus on the same head (or control) across the rebuild.
    const active = this.body.contains(document.activeElement) ? document.activeElement : null;
    const where = active && {
      id: active.id,
      className: active.className.split(' ')[0],
      layer: active.dataset.layer,
      head: active.dataset.head,
    };
    const ablation = this.#ablation();
    this.body.replaceChildren(
      this.#controls(info, predictions),
      ablation
        ? headEffectsView(ablation, {
            layers: info.layers,
            heads: info.heads,
            strings: effectsStrings(t),
            onToggle: (layer, head) => this.#toggle(layer, head),
          })
        : null,
    );
    if (!where) return;
    const again = where.id
      ? this.body.querySelector(`#${where.id}`)
      : this.body.querySelector(
          `.${where.className}[data-layer="${where.layer}"][data-head="${where.head}"]`,
        );
    // "Switch all heads back on" disables itself: the focus goes to the grid's first head.
    if (again?.disabled) this.body.querySelector('button.al-effect')?.focus();
    else if (again) {
      if (again.closest('.al-effects-grid')) {
        for (const b of this.body.querySelectorAll('button.al-effect')) b.tabIndex = -1;
        again.tabIndex = 0;
      }
      again.focus();
    }
  }

  /** The ablation part of a snapshot of the page's run (none until measured on its text). */
  snapshotPart() {
    const ablation = this.#ablation();
    const params = this.#params();
    if (!ablation || !params || this.measured.for !== `${params.key}\u0000${params.text}`) {
      return {};
    }
    if (this.ablated?.for !== this.measured.for) return {};
    return { ablation: ablationField({ ...ablation, off: this.ablated.off }) };
  }
}
