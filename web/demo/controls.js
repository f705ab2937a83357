// The settings panel: native inputs (so every control is reachable and operable by keyboard and
// announced by screen readers) bound to the state. `sync` writes the state into the inputs,
// the handlers turn input events into state patches.
import { el, shortLabel, tokenLabel } from '../src/views/dom.js';
import { formatMask, parseMask } from '../src/mask-notation.js';
import { language, t, tNodes } from './i18n.js';
import { MAX_PAGE_HEADS, SPARSE_PATTERNS } from '../src/vocabulary.js';
import { TEMPERATURE_RANGE, sliderFromTemperature, temperatureFromSlider } from './state.js';

// Scores confined to a narrow range (cosine in [-1, 1], additive not much wider) differ too
// little for softmax at T = 1: the weights come out nearly uniform. The hint says so and offers
// the lowest temperature; it never changes the temperature by itself.
const NARROW_SCORES = { cosine: 'narrowScoreCosine', additive: 'narrowScoreAdditive' };
const SHARP_TEMPERATURE = TEMPERATURE_RANGE[0];

function setRadio(radios, value) {
  for (const input of radios) input.checked = input.value === value;
}

// Arrow keys within a group of toggle buttons behave like a radio group (one tab stop).
function rovingButtons(container, selector) {
  container.addEventListener('keydown', (event) => {
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
    if (!step) return;
    const buttons = [...container.querySelectorAll(selector)];
    const index = buttons.indexOf(document.activeElement);
    if (index < 0) return;
    event.preventDefault();
    const next = buttons[(index + step + buttons.length) % buttons.length];
    next.focus();
    next.click();
  });
}

export class Controls {
  // update(patch) applies a state patch; getState() returns the current state.
  constructor(elements, { update, getState }) {
    this.elements = elements;
    this.update = update;
    this.getState = getState;
    this.#bind();
  }

  #maskPatch(change) {
    const mask = { ...parseMask(this.getState().mask), ...change };
    return { mask: formatMask(mask) };
  }

  #bind() {
    const e = this.elements;
    const radios = e.radios;
    for (const input of radios.mode)
      input.addEventListener('change', () =>
        this.update({ mode: input.value, query: -1, key: -1 }),
      );
    for (const input of radios.score)
      input.addEventListener('change', () => this.update({ score: input.value }));
    for (const input of radios.granularity)
      input.addEventListener('change', () =>
        this.update({ granularity: input.value, query: -1, key: -1 }),
      );
    for (const input of radios.scale)
      input.addEventListener('change', () => this.update({ scale: input.value }));
    for (const input of radios.range)
      input.addEventListener('change', () => this.update({ range: input.value }));
    for (const input of radios.pattern)
      input.addEventListener('change', () =>
        this.update(this.#maskPatch({ pattern: input.value })),
      );

    e.headsInput.addEventListener('input', (event) => {
      const heads = Number(event.target.value);
      this.update({ heads, head: Math.min(this.getState().head, heads - 1) });
    });
    e.temperatureInput.addEventListener('input', (event) => {
      this.update({ temperature: temperatureFromSlider(Number(event.target.value)) });
    });
    e.causalInput.addEventListener('change', (event) =>
      this.update(this.#maskPatch({ causal: event.target.checked })),
    );
    for (const [field, { input }] of Object.entries(e.sliders)) {
      input.addEventListener('input', (event) => {
        const value = Number(event.target.value);
        const patch = { [field]: value };
        const mask = parseMask(this.getState().mask);
        if (field === 'stride' && mask.summary > value) patch.summary = value;
        if (field === 'summary' && value > mask.stride) patch.summary = mask.stride;
        this.update(this.#maskPatch(patch));
      });
    }
    e.compareSelect.addEventListener('change', (event) =>
      this.update({ compare: event.target.value }),
    );
    e.orientationSelect.addEventListener('change', (event) =>
      this.update({ orientation: event.target.value }),
    );
    e.backendSelect.addEventListener('change', (event) =>
      this.update({ backend: event.target.value }),
    );
    rovingButtons(e.headPicker, 'button');
  }

  // Writes state (and, when known, the token counts of the last result) into the inputs.
  sync(state, result) {
    const e = this.elements;
    setRadio(e.radios.mode, state.mode);
    setRadio(e.radios.score, state.score);
    setRadio(e.radios.granularity, state.granularity);
    setRadio(e.radios.scale, state.scale);
    setRadio(e.radios.range, state.range);
    const mask = parseMask(state.mask);
    setRadio(e.radios.pattern, mask.pattern);
    e.causalInput.checked = mask.causal;
    e.headsInput.value = String(state.heads);
    e.headsOutput.value = String(state.heads);
    const position = sliderFromTemperature(state.temperature);
    const temperature = e.temperatureInput;
    temperature.value = String(position);
    const shown = state.temperature.toFixed(2);
    temperature.setAttribute('aria-valuetext', shown);
    e.temperatureOutput.value = shown;

    const n =
      result && !result.empty ? Math.max(result.rowTokens.length, result.colTokens.length) : 16;
    const sliders = {
      window: [mask.window, 0, Math.max(8, n)],
      dilation: [mask.dilation, 1, Math.max(2, Math.min(8, n))],
      stride: [mask.stride, 1, Math.max(4, n)],
      summary: [mask.summary, 1, Math.max(1, mask.stride)],
    };
    for (const [name, [value, min, max]] of Object.entries(sliders)) {
      const { input, output } = e.sliders[name];
      input.min = String(min);
      input.max = String(max);
      input.value = String(value);
      output.value = String(value);
    }
    e.sliders.window.param.hidden = !['local', 'dilated'].includes(mask.pattern);
    e.sliders.dilation.param.hidden = mask.pattern !== 'dilated';
    e.sliders.stride.param.hidden = !SPARSE_PATTERNS.includes(mask.pattern);
    e.sliders.summary.param.hidden = mask.pattern !== 'fixed';
    e.maskCode.textContent = formatMask(mask);

    const compare = e.compareSelect;
    if (state.compare && ![...compare.options].some((o) => o.value === state.compare)) {
      compare.append(el('option', { value: state.compare, text: state.compare }));
    }
    compare.value = state.compare;
    e.orientationSelect.value = state.orientation;
    e.backendSelect.value = state.backend;

    this.#syncHeadPicker(state);
    this.#syncGlobalTokens(state, mask, result);
    this.#syncScoreHint(state);
  }

  #syncScoreHint(state) {
    const host = this.elements.scoreHint;
    const text = NARROW_SCORES[state.score];
    const offer = text && state.temperature > SHARP_TEMPERATURE;
    // Rebuilt only when it changes: the hint is a live region, and each rebuild is announced.
    const key = `${text}|${offer}|${language()}`;
    if (key === this.scoreHintKey) return;
    this.scoreHintKey = key;
    if (!text) {
      host.replaceChildren();
      return;
    }
    host.replaceChildren(
      el('p', { text: t(text) }),
      offer
        ? el(
            'button',
            {
              type: 'button',
              class: 'chip-button',
              onclick: () => this.update({ temperature: SHARP_TEMPERATURE }),
            },
            t('tryTemperature', { t: SHARP_TEMPERATURE }),
          )
        : null,
    );
  }

  // The entropy of head `head`'s rows, beside the temperature that shapes it (rows that see no
  // key are left out).
  showEntropy(result, head) {
    const readout = this.elements.entropyReadout;
    const values = [];
    const cols = result.colTokens.length;
    result.heads[head].entropy.forEach((h, r) => {
      let visible = false;
      for (let c = 0; c < cols && !visible; c++) visible = result.mask[r * cols + c] !== 0;
      if (visible) values.push(h);
    });
    if (!values.length) {
      readout.textContent = '';
      return;
    }
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    readout.replaceChildren(
      ...tNodes('entropyReadout', {
        mean: mean.toFixed(2),
        min: Math.min(...values).toFixed(2),
        max: Math.max(...values).toFixed(2),
        n: cols,
        uniform: Math.log2(cols).toFixed(2),
      }).childNodes,
    );
  }

  // Shows the WebGPU choice when detectWebGpu() found an adapter (marked when it is software).
  offerWebGpu(detected) {
    const option = this.elements.backendOptionWebgpu;
    option.hidden = !detected.available;
    option.disabled = !detected.available;
    option.dataset.i18n =
      detected.available && detected.adapter.software ? 'backendWebgpuSoftware' : 'backendWebgpu';
    option.textContent = t(option.dataset.i18n);
    this.elements.backendSelect.value = this.getState().backend;
  }

  #syncHeadPicker(state) {
    const picker = this.elements.headPicker;
    const buttons = [];
    for (let h = 0; h < Math.min(state.heads, MAX_PAGE_HEADS); h++) {
      const checked = h === state.head;
      buttons.push(
        el(
          'button',
          {
            type: 'button',
            role: 'radio',
            'aria-checked': String(checked),
            tabindex: checked ? 0 : -1,
            'aria-label': t('headN', { n: h + 1 }),
            onclick: () => this.update({ head: h }),
          },
          String(h + 1),
        ),
      );
    }
    const focused = picker.contains(document.activeElement) ? state.head : -1;
    picker.replaceChildren(...buttons);
    if (focused >= 0) buttons[focused]?.focus();
  }

  // One toggle per key token; pressing one adds or removes it from the global tokens.
  #syncGlobalTokens(state, mask, result) {
    const host = this.elements.globalTokens;
    const tokens = result && !result.empty ? result.colTokens : [];
    // Typing calls sync on every keystroke; rebuild only when the tokens or the choice changed.
    const texts = tokens.map((t) => t.text).join('\u0000');
    const key = `${mask.globalTokens.join(',')}|${texts}|${language()}`;
    if (key === this.globalTokensKey) return;
    this.globalTokensKey = key;
    const focusedIndex = host.contains(document.activeElement)
      ? Number(document.activeElement.dataset.index)
      : -1;
    const buttons = tokens.map((token, i) =>
      el(
        'button',
        {
          type: 'button',
          'aria-pressed': String(mask.globalTokens.includes(i)),
          dataset: { index: i },
          'aria-label': `${tokenLabel(token.text)} (${i + 1})`,
          onclick: () => {
            const current = parseMask(this.getState().mask);
            const set = new Set(current.globalTokens);
            if (set.has(i)) set.delete(i);
            else set.add(i);
            this.update(this.#maskPatch({ globalTokens: [...set].sort((a, b) => a - b) }));
          },
        },
        shortLabel(token.text, 10),
      ),
    );
    host.replaceChildren(...buttons);
    if (focusedIndex >= 0) buttons[focusedIndex]?.focus();
  }
}
