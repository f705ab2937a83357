// The Continue mode of a causal model (GPT-2, GPT-Neo, the llama family): the model writes on
// from the page's text one token at a time (model.generate() in the compute thread,
// continue-compute.js), each new token joins the token strip and its row of attention joins
// every view as it comes; Stop (or Escape) cancels, and the text kept (to the last token) becomes
// the page's text, run whole as any typed text is. Loaded by model/page.js with the first causal
// model.
import { el } from '../../src/views/dom.js';
import { t } from '../i18n.js';

const LANE = 'model-continue';
// Greedy by default (the same continuation every time); a temperature draws with the seed.
export const CONTINUE_DEFAULTS = Object.freeze({ maxTokens: 32, temperature: 0, seed: 1 });
// At most this many new tokens a click; the compute thread cuts maxTokens to what the text
// leaves of the page's token limit (compute.js pageTokenLimit).
const MAX_TOKENS = 256;
const MAX_TEMPERATURE = 2;

/** The inputs' values as generate() takes them: out of range or empty gives the nearest. */
export function continueOptions({ maxTokens, temperature, seed }) {
  const number = (value, fallback, min, max, whole) => {
    const x = Number(value);
    if (value === '' || !Number.isFinite(x)) return fallback;
    const bounded = Math.min(max, Math.max(min, x));
    return whole ? Math.round(bounded) : bounded;
  };
  const d = CONTINUE_DEFAULTS;
  return {
    maxTokens: number(maxTokens, d.maxTokens, 1, MAX_TOKENS, true),
    temperature: number(temperature, d.temperature, 0, MAX_TEMPERATURE, false),
    seed: number(seed, d.seed, 0, 2 ** 32 - 1, true),
  };
}

export class ContinuePanel {
  // host: the section drawn into; client: the ComputeClient; getState(): the page's state;
  // getKey(): the loaded model's key; onGrow(result): a grown run to draw (runModel's form);
  // onKeep(text): the text to keep once the continuation ends or stops.
  constructor(host, { client, getState, getKey, onGrow, onKeep }) {
    Object.assign(this, { host, client, getState, getKey, onGrow, onKeep });
    this.run = null; // { added, going, error, stopped, maxTokens }
    this.serial = 0;
    this.#build();
  }

  #build() {
    const number = (id, attrs) => el('input', { type: 'number', id, ...attrs });
    this.title = el('h2', { id: 'continue-title', class: 'continue-title' });
    this.runButton = el('button', {
      type: 'button',
      id: 'continue-run',
      class: 'model-action',
      onclick: () => this.start(),
    });
    this.stopButton = el('button', {
      type: 'button',
      id: 'continue-stop',
      class: 'chip-button',
      onclick: () => this.stop(),
    });
    const d = CONTINUE_DEFAULTS;
    this.tokensInput = number('continue-tokens', {
      min: 1,
      max: MAX_TOKENS,
      step: 1,
      value: d.maxTokens,
    });
    this.temperatureInput = number('continue-temperature', {
      min: 0,
      max: MAX_TEMPERATURE,
      step: 0.1,
      value: d.temperature,
      oninput: () => this.render(),
    });
    this.seedInput = number('continue-seed', { min: 0, max: 2 ** 32 - 1, step: 1, value: d.seed });
    this.tokensLabel = el('label', { for: 'continue-tokens' });
    this.temperatureLabel = el('label', { for: 'continue-temperature' });
    this.seedLabel = el('label', { for: 'continue-seed' });
    const field = (label, input) => el('span', { class: 'continue-field' }, label, input);
    this.status = el('p', { class: 'continue-status', id: 'continue-status', role: 'status' });
    this.host.replaceChildren(
      this.title,
      el(
        'div',
        { class: 'continue-row' },
        this.runButton,
        this.stopButton,
        field(this.tokensLabel, this.tokensInput),
        field(this.temperatureLabel, this.temperatureInput),
        field(this.seedLabel, this.seedInput),
      ),
      this.status,
    );
    // Enter in a number field continues; Escape anywhere in the bar stops.
    this.host.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && this.going) {
        event.preventDefault();
        this.stop();
      } else if (event.key === 'Enter' && event.target instanceof HTMLInputElement) {
        event.preventDefault();
        this.start();
      }
    });
  }

  get going() {
    return Boolean(this.run?.going);
  }

  /** Continues the page's text with the loaded model; a continuation under way stops first. */
  async start() {
    const state = this.getState();
    const key = this.getKey();
    if (!key || !state.text.trim()) return;
    const options = continueOptions({
      maxTokens: this.tokensInput.value,
      temperature: this.temperatureInput.value,
      seed: this.seedInput.value,
    });
    const serial = ++this.serial;
    this.client.cancel(LANE);
    const run = { added: 0, going: true, error: null, stopped: null, kept: null, ...options };
    this.run = run;
    this.render();
    const params = { key, text: state.text, words: state.words, ...options };
    const grew = (result) => {
      run.added = result.continued.added;
      run.maxTokens = result.continued.maxTokens;
      run.kept = result.continued.text;
      document.body.dataset.continueRows = String(result.rows.length);
      this.onGrow(result);
      this.render();
    };
    try {
      const result = await this.client.request(LANE, 'modelContinue', params, {
        onProgress: (grown) => serial === this.serial && grew(grown),
      });
      if (serial !== this.serial || !result) return;
      run.stopped = result.continued.stopped;
      grew(result);
    } catch (error) {
      if (serial !== this.serial) return;
      run.error = error;
    }
    run.going = false;
    document.body.dataset.continuations = String(
      Number(document.body.dataset.continuations ?? 0) + 1,
    );
    this.render();
    // What came is kept, stopped or not: the page's text, run whole from here on.
    if (run.kept !== null) this.onKeep(run.kept);
  }

  /** Stop: the continuation ends after the token under way; what came is kept. */
  stop() {
    this.client.cancel(LANE);
  }

  /** The text changed or the model went: a continuation under way is dropped, nothing kept. */
  interrupt() {
    if (!this.going) return;
    this.serial++;
    this.client.cancel(LANE);
    this.run = null;
    this.render();
  }

  render() {
    this.title.textContent = t('continueTitle');
    this.runButton.textContent = t('continueRun');
    this.stopButton.textContent = t('continueStop');
    this.tokensLabel.textContent = t('continueTokens');
    this.temperatureLabel.textContent = t('continueTemperature');
    this.seedLabel.textContent = t('continueSeed');
    const going = this.going;
    this.stopButton.disabled = !going;
    this.host.setAttribute('aria-busy', String(going));
    // Greedy decoding draws nothing: the seed matters only with a temperature.
    this.seedInput.disabled = !(Number(this.temperatureInput.value) > 0);
    this.status.textContent = this.#statusText();
  }

  #statusText() {
    const run = this.run;
    if (!run) return t('continueIdle');
    const n = run.added;
    if (run.error) {
      return run.error.name === 'AbortError'
        ? t('continueStopped', { n })
        : t('modelRunFailed', { message: run.error.message });
    }
    if (run.going) return t('continueGoing', { n, max: run.maxTokens });
    // The model's end-of-text token ended it, or the tokens asked for did.
    const key = run.stopped === 'eos' ? 'continueEos' : 'continueDone';
    return t(key, { n });
  }
}
