// The composer: the example picker, the text fields (one, or target and source for
// cross-attention) and the status line under them.
import { el } from '../src/views/dom.js';
import { markTabStop, rovingTabindex } from '../src/views/roving.js';
import { DEFAULT_GRANULARITY } from '../src/vocabulary.js';
import { EXAMPLES } from './examples.js';
import { t } from './i18n.js';
import { maskInMode } from './state.js';

export class Composer {
  // update(patch, { immediate }) applies a state patch; getState() returns the current state.
  constructor(elements, { update, getState }) {
    this.elements = elements;
    elements.mainText.addEventListener('input', (event) => update({ text: event.target.value }));
    elements.sourceText.addEventListener('input', (event) =>
      update({ source: event.target.value }),
    );
    this.exampleButtons = EXAMPLES.map((example) =>
      el(
        'button',
        {
          type: 'button',
          dataset: { example: example.id },
          'aria-pressed': 'false',
          // An example sets everything its text depends on (mode, texts, how they are split);
          // the other settings stay as the reader left them, reduced to what applies in its mode.
          onclick: () => {
            const { mask, compare } = getState();
            update(
              {
                mode: example.mode,
                text: example.text,
                source: example.source,
                granularity: example.granularity ?? DEFAULT_GRANULARITY,
                mask: maskInMode(mask, example.mode),
                compare: compare && maskInMode(compare, example.mode),
                query: -1,
                key: -1,
              },
              { immediate: true },
            );
          },
        },
        t(example.label),
      ),
    );
    elements.examples.replaceChildren(...this.exampleButtons);
    rovingTabindex(elements.examples, { selector: 'button' });
  }

  render(state) {
    const e = this.elements;
    const cross = state.mode === 'cross';
    e.sourceField.hidden = !cross;
    e.texts.classList.toggle('cross', cross);
    e.textLabel.textContent = cross ? t('targetLabel') : t('textLabel');
    e.textHint.textContent = cross ? t('targetHint') : t('textHint');
    if (e.mainText.value !== state.text) e.mainText.value = state.text;
    if (e.sourceText.value !== state.source) e.sourceText.value = state.source;
    let pressed = -1;
    EXAMPLES.forEach((example, i) => {
      const button = this.exampleButtons[i];
      button.textContent = t(example.label);
      const active =
        example.mode === state.mode &&
        example.text === state.text &&
        (example.granularity ?? DEFAULT_GRANULARITY) === state.granularity &&
        (example.mode !== 'cross' || example.source === state.source);
      button.setAttribute('aria-pressed', String(active));
      if (active) pressed = i;
    });
    if (!this.elements.examples.contains(document.activeElement)) {
      markTabStop(this.exampleButtons, pressed);
    }
  }

  // How many tokens the result has, and what to do with them.
  showCounts(state, result) {
    const rows = result.rowTokens.length;
    const cols = result.colTokens.length;
    const counts =
      state.mode === 'cross'
        ? t('tokensCountCross', { nt: rows, ns: cols })
        : t(rows === 1 ? 'tokensCountOne' : 'tokensCount', { n: rows });
    this.elements.statusLine.textContent = `${counts} · ${t('clickTokenHint')}`;
  }

  showEmpty() {
    this.elements.statusLine.textContent = t('emptyText');
  }

  // The parts of the page's link that could not be used (state.js readLink), or none.
  showLinkProblems(problems) {
    const notice = this.elements.linkNotice;
    const shorten = (text) => (text.length > 40 ? `${text.slice(0, 39)}…` : text);
    notice.hidden = problems.length === 0;
    notice.textContent = problems
      .map(({ param, value }) => t('linkProblem', { param, value: shorten(value) }))
      .join(' ');
  }

  showError(error) {
    const line = this.elements.statusLine;
    line.classList.add('is-error');
    line.textContent = t('errorPrefix', { message: error.message });
  }

  clearError() {
    this.elements.statusLine.classList.remove('is-error');
  }
}
