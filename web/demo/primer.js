// "Things to try": one card per idea of ideas.js, each with a button that puts it on screen.
import { el } from '../src/views/dom.js';
import { t } from './i18n.js';
import { IDEAS } from './ideas.js';

// onTry(idea) applies the idea; the card's texts follow the language (data-i18n).
export function renderPrimer(host, onTry) {
  host.replaceChildren(
    ...IDEAS.map((idea) =>
      el(
        'article',
        { class: 'idea' },
        el('h3', { dataset: { i18n: idea.title }, text: t(idea.title) }),
        el('p', { dataset: { i18n: idea.text }, text: t(idea.text) }),
        el('button', {
          type: 'button',
          dataset: { i18n: 'tryIt' },
          text: t('tryIt'),
          onclick: () => onTry(idea),
        }),
      ),
    ),
  );
}
