// A model's predictions as a list of bars: the next tokens of a GPT model, or the fillers of one
// [MASK] of a BERT model, each with its probability. Beside a second list (the same text under a
// changed mask) each entry says how it moved, so the reader sees the guess change.
import { el, tokenLabel } from './dom.js';

const percent = (p) => `${(p * 100).toFixed(p >= 0.1 ? 0 : 1)}%`;

// A token that adds part of a character (a byte piece), nothing (a special token) or a control
// character reads as nothing useful: its vocabulary entry is shown instead (here and in the CLI).
const UNREADABLE = /[\uFFFD\p{Cc}]/u;
export function showsVocabularyEntry({ text, partial = false }) {
  return partial || text === '' || UNREADABLE.test(text.replace(/[\n\t]/g, ''));
}

// What a prediction adds to the text, its word boundary shown as the token strip shows it
// (' upon' reads '·upon', as the context's tokens do), or its vocabulary entry.
export function predictionLabel(prediction) {
  return showsVocabularyEntry(prediction) ? prediction.token : tokenLabel(prediction.text);
}

/**
 * @param {{ id, text, p }[]} top best first
 * @param {object} options
 *   title      the list's heading
 *   compareTo  the other list (the entries before a change), or null
 *   strings    { moved(from, to), entered, rank(n) }
 * @returns {HTMLElement}
 */
export function predictionList(top, { title, compareTo = null, strings }) {
  const before = compareTo ? new Map(compareTo.map((entry, i) => [entry.id, i])) : null;
  const max = top[0]?.p || 1;
  const items = top.map((entry, i) => {
    const bar = el('span', { class: 'al-prediction-bar' });
    bar.style.width = `${Math.max(1, Math.round((entry.p / max) * 100))}%`;
    let change = null;
    if (before) {
      const was = before.get(entry.id);
      change =
        was === undefined
          ? el('span', { class: 'al-prediction-change is-new', text: strings.entered })
          : was !== i
            ? el('span', { class: 'al-prediction-change', text: strings.moved(was + 1, i + 1) })
            : null;
    }
    return el(
      'li',
      { class: 'al-prediction', dataset: { id: entry.id } },
      el('span', { class: 'al-prediction-token', text: predictionLabel(entry) }),
      el('span', { class: 'al-prediction-track', 'aria-hidden': 'true' }, bar),
      el('span', { class: 'al-prediction-p', text: percent(entry.p) }),
      change,
    );
  });
  return el(
    'div',
    { class: 'al-predictions' },
    el('h3', { text: title }),
    el('ol', { class: 'al-prediction-list' }, items),
  );
}
