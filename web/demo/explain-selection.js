// What top-k and LSH add to the explain panel's mask step, for the query explained: the bucket it
// fell in and which visible keys share one, the K largest logits against the lowest one kept,
// and where global tokens stand (the mask comes first; top-k and LSH choose after it, mask.h).
// The choice itself is the engine's, read back by kept-keys.js.
import { el, formatNumber, tokenLabel } from '../src/views/dom.js';
import { t } from './i18n.js';
import { bucketsOf } from '../src/interpret/kept-keys.js';

const count = (flags) => flags.reduce((n, v) => n + (v ? 1 : 0), 0);

/**
 * mask: the parsed mask; visible, kept: the query's row of the mask and of the keys the softmax
 * saw; scaled: every key's logit before the mask.
 */
export function selectionStep({ mask, result, head, query, key, visible, kept, scaled }) {
  const rows = result.rowTokens.length;
  const cols = result.colTokens.length;
  const label = (j) => tokenLabel(result.colTokens[j].text);
  const keyText = label(key);
  const parts = [];
  // The keys LSH lets through (all visible ones without it): top-k chooses among these.
  let hashed = Array.from(visible, (v) => (v ? 1 : 0));
  if (mask.buckets > 0) {
    const own = bucketsOf(result.buckets, head, { row: query, rows, cols }).query;
    const bucketOfKey = (j) => bucketsOf(result.buckets, head, { col: j, rows, cols }).key;
    hashed = hashed.map((v, j) => (v && bucketOfKey(j).some((b, r) => b === own[r]) ? 1 : 0));
    const same = count(hashed);
    parts.push(
      el('p', {
        text: t('selectLsh', {
          buckets: mask.buckets,
          rounds: mask.rounds,
          bucket: own.join(' / '),
          same,
          n: count(visible),
          out: count(visible) - same,
        }),
      }),
    );
    if (visible[key]) {
      parts.push(
        el('span', {
          class: 'formula',
          text: t(hashed[key] ? 'selectLshKeyIn' : 'selectLshKeyOut', {
            key: keyText,
            bucket: bucketOfKey(key).join(' / '),
          }),
        }),
      );
    }
  }
  if (mask.topK > 0) {
    const k = Math.min(mask.topK, cols);
    const candidates = count(hashed);
    if (candidates <= k) {
      parts.push(el('p', { text: t('selectTopKAll', { k, n: candidates }) }));
    } else {
      // The last key kept in top-k's order (logit descending, then key ascending).
      let last = -1;
      for (let j = 0; j < cols; j++) {
        if (kept[j] && (last < 0 || scaled[j] <= scaled[last])) last = j;
      }
      const values = { k, n: candidates, out: candidates - k, kth: label(last) };
      values.xk = formatNumber(scaled[last]);
      parts.push(el('p', { text: t('selectTopK', values) }));
      if (hashed[key]) {
        parts.push(
          el('span', {
            class: 'formula',
            text: t(kept[key] ? 'selectTopKKeyIn' : 'selectTopKKeyOut', {
              ...values,
              key: keyText,
              x: formatNumber(scaled[key]),
            }),
          }),
        );
      }
    }
  }
  if (mask.globalTokens?.length) parts.push(el('p', { text: t('selectGlobal') }));
  return el('div', { class: 'selection-step' }, parts);
}
