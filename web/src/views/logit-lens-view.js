// The logit lens as a grid: a row per hidden state (the embeddings', then each layer's output),
// a column per position, each cell the top token of that state put through the model's final
// norm and output layer, shaded by its probability. Per position, the state from which the
// final answer stays on top is outlined: where the model "knows" it. Hovering or focusing a cell
// shows its top k with probabilities. Wide texts scroll sideways (a phone's width).
import { el, shortLabel, tokenLabel } from './dom.js';
import { tint } from './lens-panels-css.js';
import { rovingGrid } from './roving.js';

const SHADE = [200, 52, 28];
const percent = (p) => `${(p * 100).toFixed(p >= 0.1 ? 0 : 1)}%`;

/**
 * Per position, the first state from which the top token is the final state's and stays so.
 * @param {{ states, tokens, topK, vocabulary, top: Int32Array }} lens read-panels.js's form
 * @returns {number[]}
 */
export function firstAnswerStates({ states, tokens, topK, vocabulary, top }) {
  const n = tokens.length;
  const idAt = (s, i) => vocabulary[top[(s * n + i) * topK]].id;
  return tokens.map((_, i) => {
    const answer = idAt(states - 1, i);
    let first = states - 1;
    while (first > 0 && idAt(first - 1, i) === answer) first--;
    return first;
  });
}

/**
 * @param {object} lens read-panels.js's readLogitLens() form
 * @param {{ strings: { state(s), position(i, token), cell(state, token, top, p, first),
 *   detail(state, token), caption } }} options
 * @returns {HTMLElement}
 */
export function logitLensView(lens, { strings }) {
  const { states, tokens, topK, vocabulary, top, probabilities } = lens;
  const n = tokens.length;
  const first = firstAnswerStates(lens);
  const detail = el('div', { class: 'al-lens-detail', 'aria-live': 'polite' });
  const entry = (s, i, j) => {
    const at = (s * n + i) * topK + j;
    return { ...vocabulary[top[at]], p: probabilities[at] };
  };
  const show = (s, i) => {
    const items = Array.from({ length: topK }, (_, j) => {
      const { text, p } = entry(s, i, j);
      const bar = el('span', { class: 'al-prediction-bar' });
      bar.style.width = `${Math.max(1, Math.round(p * 100))}%`;
      return el(
        'li',
        { class: 'al-prediction' },
        el('span', { class: 'al-prediction-token', text: tokenLabel(text) }),
        el('span', { class: 'al-prediction-track', 'aria-hidden': 'true' }, bar),
        el('span', { class: 'al-prediction-p', text: percent(p) }),
      );
    });
    detail.replaceChildren(
      el('h4', { text: strings.detail(strings.state(s), tokenLabel(tokens[i])) }),
      el('ol', { class: 'al-prediction-list' }, items),
    );
  };
  const cell = (s, i) => {
    const { text, p } = entry(s, i, 0);
    const isFirst = first[i] === s;
    const button = el('button', {
      type: 'button',
      class: `al-lens-cell${isFirst ? ' is-first' : ''}${s >= first[i] ? ' is-answer' : ''}`,
      dataset: { state: s, position: i },
      tabindex: s === 0 && i === 0 ? '0' : '-1',
      'aria-label': strings.cell(
        strings.state(s),
        tokenLabel(tokens[i]),
        tokenLabel(text),
        percent(p),
        isFirst,
      ),
      text: shortLabel(text, 8),
      onfocus: () => show(s, i),
      onmouseenter: () => show(s, i),
      onclick: () => show(s, i),
    });
    tint(button, SHADE, 0.04 + 0.96 * p);
    return el('td', {}, button);
  };
  const table = el(
    'table',
    { class: 'al-lens-grid' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', {}),
        tokens.map((token, i) =>
          el(
            'th',
            { scope: 'col', title: strings.position(i, tokenLabel(token)) },
            shortLabel(token, 8),
          ),
        ),
      ),
    ),
    el(
      'tbody',
      {},
      Array.from({ length: states }, (_, s) =>
        el(
          'tr',
          {},
          el('th', { scope: 'row', text: strings.state(s) }),
          Array.from({ length: n }, (_, i) => cell(s, i)),
        ),
      ),
    ),
  );
  const scroll = el('div', { class: 'al-scroll al-lens-scroll' }, table);
  rovingGrid(scroll, { selector: '.al-lens-cell', columns: () => n });
  show(states - 1, n - 1);
  return el(
    'div',
    { class: 'al-logit-lens' },
    el('p', { class: 'al-caption', text: strings.caption }),
    scroll,
    detail,
  );
}
