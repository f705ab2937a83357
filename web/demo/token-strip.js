// The token strip under the texts: one chip per query token (and, for cross-attention, a second
// row of key tokens); pressing a chip focuses that query, or that key. Each row is one tab stop:
// arrow keys move along it (roving tabindex).
import { el, shortLabel, tokenLabel } from '../src/views/dom.js';
import { markTabStop, rovingTabindex } from '../src/views/roving.js';
import { parseMask } from '../src/mask-notation.js';
import { t } from './i18n.js';
import { focusedQuery } from './selection.js';

function tokenChip(token, index, { side, pressed, global, onclick }) {
  return el(
    'button',
    {
      type: 'button',
      class: `token-chip${global ? ' is-global' : ''}`,
      dataset: { side, index },
      'aria-pressed': String(pressed),
      onclick,
      title: token.pieces
        ? `${tokenLabel(token.text)}: ${token.pieces.map(tokenLabel).join(' · ')}`
        : tokenLabel(token.text),
    },
    shortLabel(token.text, 16),
    el('sub', { text: String(index + 1) }),
  );
}

export class TokenStrip {
  // update(patch) applies a state patch; getState() returns the current state.
  constructor(strip, { update, getState }) {
    this.strip = strip;
    this.update = update;
    this.getState = getState;
    for (const side of ['query', 'key']) {
      rovingTabindex(strip, { selector: `.token-chip[data-side="${side}"]` });
    }
  }

  render(state, result) {
    const strip = this.strip;
    if (!result || result.empty) {
      strip.replaceChildren();
      return;
    }
    // A real model's global tokens count its own tokens, not the words the views may show.
    const mask = state.model ? (state.words ? '' : state.surgery) : state.mask;
    const globals = new Set(parseMask(mask).globalTokens);
    const query = focusedQuery(state, result);
    // The chip that had the focus gets it back once the strip is rebuilt.
    const focused = strip.contains(document.activeElement)
      ? { ...document.activeElement.dataset }
      : null;
    const queries = result.rowTokens.map((token, i) =>
      tokenChip(token, i, {
        side: 'query',
        pressed: i === query,
        global: state.mode === 'self' && globals.has(i),
        onclick: () => this.update({ query: i }),
      }),
    );
    markTabStop(queries, query);
    const restore = () => {
      if (focused)
        strip
          .querySelector(`[data-side="${focused.side}"][data-index="${focused.index}"]`)
          ?.focus();
    };
    if (state.mode === 'self') {
      strip.className = 'token-strip';
      strip.replaceChildren(...queries);
      restore();
      return;
    }
    const keys = result.colTokens.map((token, i) =>
      tokenChip(token, i, {
        side: 'key',
        pressed: i === state.key,
        global: globals.has(i),
        onclick: () => this.update({ key: i === this.getState().key ? -1 : i }),
      }),
    );
    markTabStop(keys, state.key);
    strip.className = 'token-strip cross-strip';
    strip.replaceChildren(
      el('span', { class: 'strip-label', text: t('targetQueries') }),
      el('div', { class: 'strip-row' }, queries),
      el('span', { class: 'strip-label', text: t('sourceKeys') }),
      el('div', { class: 'strip-row' }, keys),
    );
    restore();
  }
}
