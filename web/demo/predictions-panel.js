// The predictions card of a real model: the next token's top 10 for GPT models, the fillers of
// each [MASK] for BERT; with mask surgery, before and after side by side, and in words whether
// the model's best guess changed.
import { el, tokenLabel } from '../src/views/dom.js';
import { predictionLabel, predictionList } from '../src/views/predictions.js';
import { t } from './i18n.js';

// The list with the model's own masks and, with a surgery, the one with it beside.
function columns(before, after, surgery) {
  const strings = {
    moved: (from, to) => t('predictionMoved', { from, to }),
    entered: t('predictionNew'),
  };
  const lists = [predictionList(before, { title: t('predictionsOwn'), strings })];
  if (after) {
    lists.push(
      predictionList(after, {
        title: t('predictionsSurgery', { mask: surgery }),
        compareTo: before,
        strings,
      }),
    );
  }
  return el('div', { class: `prediction-columns${after ? ' comparing' : ''}` }, lists);
}

// One sentence on what the change did to the best guess.
function verdict(before, after) {
  if (!after || !before.length || !after.length) return null;
  const values = {
    before: predictionLabel(before[0]),
    after: predictionLabel(after[0]),
    p: `${(before[0].p * 100).toFixed(0)}%`,
    q: `${(after[0].p * 100).toFixed(0)}%`,
  };
  const changed = before[0].id !== after[0].id;
  return el('p', {
    class: `prediction-verdict${changed ? ' is-changed' : ''}`,
    text: t(changed ? 'predictionChanged' : 'predictionSame', values),
  });
}

export function renderPredictions(host, state, result, info) {
  if (!info.predicts) {
    host.replaceChildren(el('p', { class: 'hint', text: t('predictionsNoHead') }));
    return;
  }
  const own = result.own.predictions;
  const after = result.surgery?.predictions ?? null;
  if (info.causal) {
    const last = result.tokens[result.tokens.length - 1];
    host.replaceChildren(
      ...[
        el('p', { class: 'hint', text: t('predictionsNext', { token: tokenLabel(last.text) }) }),
        columns(own, after, state.surgery),
        verdict(own, after),
      ].filter(Boolean),
    );
    return;
  }
  if (!own.length) {
    host.replaceChildren(
      el('p', {
        class: 'hint',
        text: t('predictionsNoMask', { mask: info.maskToken ?? '[MASK]' }),
      }),
    );
    return;
  }
  host.replaceChildren(
    ...own
      .flatMap(({ position, top }, i) => [
        el('h3', {
          class: 'prediction-position',
          text: t('predictionsMaskAt', { n: position + 1 }),
        }),
        columns(top, after?.[i]?.top ?? null, state.surgery),
        verdict(top, after?.[i]?.top ?? null),
      ])
      .filter(Boolean),
  );
}
