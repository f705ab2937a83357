// A snapshot's ablation ("Which heads matter") and logit lens, drawn under the widget's view
// from the file alone, with no model and no compute; and the words both views take, which the
// demo page's panels use too (one set of strings, the package's).
import { el } from '../src/views/dom.js';
import { headEffectsView } from '../src/views/head-effects-view.js';
import { adoptLensPanelsCss } from '../src/views/lens-panels-css.js';
import { logitLensView } from '../src/views/logit-lens-view.js';
import { predictionLabel } from '../src/views/predictions.js';

const percent = (p) => `${(p * 100).toFixed(p >= 0.1 ? 0 : 1)}%`;

/** head-effects-view.js's strings in `t`'s language. */
export function effectsStrings(t) {
  return {
    title: t('headsMatterTitle'),
    layer: (l) => t('layerN', { n: l + 1 }),
    head: (h) => t('effectsHead', { n: h + 1 }),
    cell: (l, h, delta, off) =>
      t(off ? 'effectsCellOff' : 'effectsCell', { layer: l + 1, head: h + 1, delta: delta ?? '—' }),
    caption: (target, p) =>
      t('effectsCaption', {
        target: predictionLabel({ ...target, partial: false }),
        p: percent(p),
      }),
    notMeasured: t('effectsNotMeasured'),
    ranked: t('effectsTop'),
    rankedEntry: (l, h, delta) => t('effectsRanked', { layer: l + 1, head: h + 1, delta }),
    before: t('ablationBefore'),
    after: (n) => (n === 1 ? t('ablationAfterOne') : t('ablationAfter', { n })),
    noneOff: t('ablationNoneOff'),
    moved: (from, to) => t('predictionMoved', { from, to }),
    entered: t('predictionNew'),
  };
}

/** logit-lens-view.js's strings in `t`'s language. */
export function lensStrings(t) {
  return {
    state: (s) => (s === 0 ? t('lensEmbeddings') : t('layerN', { n: s })),
    position: (i, token) => t('lensPosition', { n: i + 1, token }),
    cell: (state, token, top, p, first) =>
      t(first ? 'lensCellFirst' : 'lensCell', { state, token, top, p }),
    detail: (state, token) => t('lensDetail', { state, token }),
    caption: t('lensCaption'),
  };
}

/**
 * Draws what of the two a snapshot carries into `host` (emptied when it carries neither).
 * @param {ShadowRoot | Document} root where the views' styles are adopted
 */
export function renderSnapshotPanels(host, snapshot, { t, root }) {
  const parts = [];
  if (snapshot.ablation) {
    parts.push(
      el(
        'section',
        { class: 'al-panel', 'aria-label': t('headsMatterTitle') },
        el('h3', { text: t('headsMatterTitle') }),
        headEffectsView(snapshot.ablation, {
          layers: snapshot.model.layers,
          heads: snapshot.model.heads,
          strings: effectsStrings(t),
        }),
      ),
    );
  }
  if (snapshot.logitLens) {
    parts.push(
      el(
        'section',
        { class: 'al-panel', 'aria-label': t('logitLensTitle') },
        el('h3', { text: t('logitLensTitle') }),
        logitLensView(snapshot.logitLens, { strings: lensStrings(t) }),
      ),
    );
  }
  if (parts.length) adoptLensPanelsCss(root);
  host.replaceChildren(...parts);
  host.hidden = parts.length === 0;
}
