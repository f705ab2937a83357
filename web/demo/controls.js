// The settings panel: native inputs (so every control is reachable and operable by keyboard and
// announced by screen readers) bound to the state. `sync` writes the state into the inputs,
// the handlers turn input events into state patches.
import { el, shortLabel, tokenLabel } from '../src/views/dom.js';
import { markTabStop, rovingTabindex } from '../src/views/roving.js';
import { DEFAULT_SELECTION, formatMask, parseMask } from '../src/mask-notation.js';
import { language, t, tNodes } from './i18n.js';
import { MAX_PAGE_HEADS, SPARSE_PATTERNS } from '../src/vocabulary.js';
import {
  TEMPERATURE_RANGE,
  headDimFromSlider,
  maskInMode,
  sliderFromHeadDim,
  sliderFromTemperature,
  temperatureFromSlider,
} from './state.js';

// Scores confined to a narrow range (cosine in [-1, 1], additive not much wider) differ too
// little for softmax at T = 1: the weights come out nearly uniform. The hint says so and offers
// the lowest temperature; it never changes the temperature by itself.
const NARROW_SCORES = { cosine: 'narrowScoreCosine', additive: 'narrowScoreAdditive' };
const SHARP_TEMPERATURE = TEMPERATURE_RANGE[0];

function setRadio(radios, value) {
  for (const input of radios) input.checked = input.value === value;
}

// The mask notation the controls show and edit.
const editedMask = (state) => (state.model ? state.surgery || 'global' : state.mask);

// Patterns whose width the window slider sets.
const WINDOWED = ['local', 'dilated', 'align'];

export class Controls {
  // update(patch) applies a state patch; getState() returns the current state.
  constructor(elements, { update, getState }) {
    this.elements = elements;
    this.update = update;
    this.getState = getState;
    this.#bind();
  }

  // The mask the controls edit: the untrained layer's, or a real model's mask surgery.
  #maskPatch(change) {
    const state = this.getState();
    const mask = { ...parseMask(editedMask(state)), ...change };
    return { [state.model ? 'surgery' : 'mask']: formatMask(mask) };
  }

  #bind() {
    const e = this.elements;
    const radios = e.radios;
    // A mask that does not apply between two texts is reduced to what does (maskForMode).
    for (const input of radios.mode)
      input.addEventListener('change', () => {
        const { mask, compare } = this.getState();
        this.update({
          mode: input.value,
          query: -1,
          key: -1,
          mask: maskInMode(mask, input.value),
          compare: compare && maskInMode(compare, input.value),
        });
      });
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
    e.dkInput.addEventListener('input', (event) => {
      this.update({ dk: headDimFromSlider(Number(event.target.value)) });
    });
    e.temperatureInput.addEventListener('input', (event) => {
      this.update({ temperature: temperatureFromSlider(Number(event.target.value)) });
    });
    e.causalInput.addEventListener('change', (event) =>
      this.update(this.#maskPatch({ causal: event.target.checked })),
    );
    // Switching a selection on starts from its slider's value (at first the notation's default).
    e.topKSwitch.addEventListener('change', (event) =>
      this.update(
        this.#maskPatch({ topK: event.target.checked ? Number(e.sliders.topK.input.value) : 0 }),
      ),
    );
    e.lshSwitch.addEventListener('change', (event) =>
      this.update(
        this.#maskPatch({
          buckets: event.target.checked ? Number(e.sliders.buckets.input.value) : 0,
          rounds: Number(e.sliders.rounds.input.value),
        }),
      ),
    );
    for (const [field, { input }] of Object.entries(e.sliders)) {
      input.addEventListener('input', (event) => {
        const value = Number(event.target.value);
        const patch = { [field]: value };
        // The mask being edited: a real model's surgery, not the untrained layer's.
        const mask = parseMask(editedMask(this.getState()));
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
    // The head picker is a radio group: the focus and the choice move together.
    rovingTabindex(e.headPicker, { selector: 'button', onMove: (button) => button.click() });
    rovingTabindex(e.globalTokens, { selector: 'button' });
    rovingTabindex(e.paddedKeys, { selector: 'button' });
  }

  // Writes state (and, when known, the token counts of the last result) into the inputs.
  // maskTokens: the tokens mask positions count (a real model's own, also when its views show
  // words); default the result's keys.
  sync(state, result, maskTokens = null) {
    const e = this.elements;
    setRadio(e.radios.mode, state.mode);
    setRadio(e.radios.score, state.score);
    setRadio(e.radios.granularity, state.granularity);
    setRadio(e.radios.scale, state.scale);
    setRadio(e.radios.range, state.range);
    const mask = parseMask(editedMask(state));
    setRadio(e.radios.pattern, mask.pattern);
    e.causalInput.checked = mask.causal;
    e.headsInput.value = String(state.heads);
    e.headsOutput.value = String(state.heads);
    e.dkInput.value = String(sliderFromHeadDim(state.dk));
    e.dkInput.setAttribute('aria-valuetext', String(state.dk));
    e.dkOutput.value = String(state.dk);
    e.modelDimReadout.textContent = t('modelDimReadout', {
      heads: state.heads,
      dk: state.dk,
      model: state.heads * state.dk,
    });
    // Settings that apply to one mode only (position masks to self-attention, the alignment
    // window and key padding to cross-attention).
    for (const node of e.modeOnly) node.hidden = node.dataset.mode !== state.mode;
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
      // Off (0), a selection's slider keeps its last value, or starts at the default.
      topK: [
        mask.topK || Number(e.sliders.topK.input.value) || DEFAULT_SELECTION.topK,
        1,
        Math.max(4, n),
      ],
      buckets: [mask.buckets || Number(e.sliders.buckets.input.value), 2, 16],
      rounds: [mask.rounds, 1, 4],
    };
    for (const [name, [value, min, max]] of Object.entries(sliders)) {
      const { input, output } = e.sliders[name];
      input.min = String(min);
      input.max = String(max);
      input.value = String(value);
      output.value = String(value);
    }
    e.sliders.window.param.hidden = !WINDOWED.includes(mask.pattern);
    e.sliders.dilation.param.hidden = mask.pattern !== 'dilated';
    e.sliders.stride.param.hidden = !SPARSE_PATTERNS.includes(mask.pattern);
    e.sliders.summary.param.hidden = mask.pattern !== 'fixed';
    e.topKSwitch.checked = mask.topK > 0;
    e.lshSwitch.checked = mask.buckets > 0;
    e.sliders.topK.param.hidden = !(mask.topK > 0);
    e.sliders.buckets.param.hidden = !(mask.buckets > 0);
    e.sliders.rounds.param.hidden = !(mask.buckets > 0);
    e.maskCode.textContent = formatMask(mask);

    const compare = e.compareSelect;
    if (state.compare && ![...compare.options].some((o) => o.value === state.compare)) {
      compare.append(el('option', { value: state.compare, text: state.compare }));
    }
    for (const option of compare.options) {
      const other = Boolean(option.dataset.mode) && option.dataset.mode !== state.mode;
      option.hidden = other;
      option.disabled = other;
    }
    compare.value = state.compare;
    e.orientationSelect.value = state.orientation;
    e.backendSelect.value = state.backend;

    this.#syncHeadPicker(state);
    const keys = maskTokens ?? (result && !result.empty ? result.colTokens : []);
    this.#syncPositionToggles(this.elements.globalTokens, 'globalTokens', mask, keys);
    this.#syncPositionToggles(this.elements.paddedKeys, 'paddedKeys', mask, keys);
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
  // key are left out); nothing for an empty text.
  showEntropy(result, head) {
    const readout = this.elements.entropyReadout;
    if (result.empty) {
      readout.textContent = '';
      return;
    }
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
            'aria-label': t('headN', { n: h + 1 }),
            onclick: () => this.update({ head: h }),
          },
          String(h + 1),
        ),
      );
    }
    const focused = picker.contains(document.activeElement) ? state.head : -1;
    picker.replaceChildren(...buttons);
    markTabStop(buttons, state.head);
    if (focused >= 0) buttons[focused]?.focus();
  }

  // One toggle per key token; pressing one adds the position to the mask's list `field` (global
  // tokens, padded keys) or takes it out. The group is one tab stop (arrow keys move inside).
  #syncPositionToggles(host, field, mask, tokens) {
    // Typing calls sync on every keystroke; rebuild only when the tokens or the choice changed.
    const texts = tokens.map((token) => token.text).join('\u0000');
    const key = `${mask[field].join(',')}|${texts}|${language()}`;
    if (key === host.dataset.built) return;
    host.dataset.built = key;
    const focusedIndex = host.contains(document.activeElement)
      ? Number(document.activeElement.dataset.index)
      : -1;
    const buttons = tokens.map((token, i) =>
      el(
        'button',
        {
          type: 'button',
          'aria-pressed': String(mask[field].includes(i)),
          dataset: { index: i },
          'aria-label': `${tokenLabel(token.text)} (${i + 1})`,
          onclick: () => {
            const set = new Set(parseMask(editedMask(this.getState()))[field]);
            if (set.has(i)) set.delete(i);
            else set.add(i);
            this.update(this.#maskPatch({ [field]: [...set].sort((a, b) => a - b) }));
          },
        },
        shortLabel(token.text, 10),
      ),
    );
    host.replaceChildren(...buttons);
    markTabStop(buttons, focusedIndex);
    if (focusedIndex >= 0) buttons[focusedIndex]?.focus();
  }
}
