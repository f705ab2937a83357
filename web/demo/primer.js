// "Things to try": one card per idea of ideas.js, each with a button that puts it on screen.
import { el } from '../src/views/dom.js';
import { t } from './i18n.js';
import { IDEAS } from './ideas.js';

// onTry(idea, real) applies the idea (real: in the real model the card names). Built again when
// the language changes; each button's name says which card it belongs to ("Try it:
// Temperature"), not only "Try it".
export function renderPrimer(host, onTry) {
  host.replaceChildren(
    ...IDEAS.map((idea) =>
      el(
        'article',
        { class: 'idea' },
        el('h3', { text: t(idea.title) }),
        el('p', { text: t(idea.text) }),
        idea.realText ? el('p', { class: 'idea-real', text: t(idea.realText) }) : null,
        el(
          'div',
          { class: 'idea-actions' },
          el('button', {
            type: 'button',
            'aria-label': t('tryItNamed', { title: t(idea.title) }),
            dataset: { idea: idea.title },
            text: t('tryIt'),
            onclick: () => onTry(idea),
          }),
          idea.real
            ? el('button', {
                type: 'button',
                class: 'idea-open-real',
                'aria-label': t('openRealNamed', { title: t(idea.title), model: idea.real.model }),
                dataset: { ideaReal: idea.title },
                text: t('openReal', { model: idea.real.model }),
                onclick: () => onTry(idea, true),
              })
            : null,
        ),
      ),
    ),
  );
}
