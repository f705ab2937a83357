// The explain panel's table of keys: for one query, each key's raw score, logit, weight and the
// mean weight the key gets from every query that may see it (a key every query favours is a
// column stripe). A long row shows its strongest keys first; the table is one tab stop whose
// arrow keys move over the rows, and Enter or Space picks a row's key for the steps above.
import { el, formatNumber, formatWeight, tokenLabel } from '../src/views/dom.js';
import { markTabStop } from '../src/views/roving.js';
import { t } from './i18n.js';
import { bucketsOf } from '../src/interpret/kept-keys.js';

export const TOP_ROWS = 12;

// The name of the raw score column: what step 1 computed.
const SCORE_COLUMN = { cosine: 'colScoreCosine', additive: 'colScoreAdditive' };

/**
 * row: { scores, logits, weights, visible, leftOut?, buckets?, columnMeans, key } for the query
 * shown (leftOut: keys top-k or LSH dropped; buckets: { all, head, rows, cols } under LSH);
 * options: { score, showAll, onPick(j), onToggle() }.
 */
export function keyTable(result, row, { score, showAll, onPick, onToggle }) {
  const { scores, logits, weights, visible, leftOut, buckets, columnMeans, key } = row;
  const bucketOf = (j) =>
    bucketsOf(buckets.all, buckets.head, { col: j, rows: buckets.rows, cols: buckets.cols }).key;
  const cols = result.colTokens.length;
  let order = [...Array(cols).keys()];
  const limited = !showAll && cols > TOP_ROWS + 4;
  if (limited) {
    order = order.sort((a, b) => weights[b] - weights[a] || a - b).slice(0, TOP_ROWS);
    if (!order.includes(key)) order.push(key);
    order.sort((a, b) => a - b);
  }
  let max = 0;
  for (const w of weights) max = Math.max(max, w);
  const rows = order.map((j) => {
    const bar = el('span', { class: 'weight-bar' });
    bar.style.width = `${Math.round((weights[j] / (max || 1)) * 100)}%`;
    const out = Boolean(leftOut?.[j]);
    const state = visible[j] ? (out ? 'is-masked is-left-out' : '') : 'is-masked';
    return el(
      'tr',
      {
        class: [state, j === key ? 'is-key' : ''].join(' ').trim() || null,
        dataset: { key: j },
        'aria-selected': String(j === key),
        onclick: () => onPick(j),
        onkeydown: (event) => {
          if (event.key === 'Enter' || event.key === ' ') {
            event.preventDefault();
            onPick(j);
          }
        },
      },
      el('td', { text: `${j + 1}. ${tokenLabel(result.colTokens[j].text)}` }),
      el('td', { text: formatNumber(scores[j]) }),
      el('td', { text: visible[j] && !out ? formatNumber(logits[j]) : '−∞' }),
      buckets ? el('td', { text: bucketOf(j).join(' / ') }) : null,
      el(
        'td',
        { class: 'bar-cell' },
        el(
          'span',
          { class: 'weight-cell' },
          el('span', { class: 'weight-track' }, visible[j] && !out ? bar : null),
          el('span', {
            class: 'num',
            text: !visible[j] ? t('maskedCell') : out ? t('leftOutWord') : formatWeight(weights[j]),
          }),
        ),
      ),
      el('td', { text: formatWeight(columnMeans[j]) }),
    );
  });
  markTabStop(rows, order.indexOf(key));
  const header = (key, title) => el('th', { scope: 'col', text: t(key), title: title && t(title) });
  const table = el(
    'table',
    { class: 'explain-table' },
    el('caption', { class: 'sr-only', text: t('keyTableCaption') }),
    el(
      'thead',
      null,
      el(
        'tr',
        null,
        header('colKey'),
        header(SCORE_COLUMN[score] ?? 'colScore'),
        header('colLogit'),
        buckets ? header('colBucket', 'colBucketHint') : null,
        header('colWeight'),
        header('colMean', 'colMeanHint'),
      ),
    ),
    el('tbody', null, rows),
  );
  const toggle =
    cols > TOP_ROWS + 4
      ? el(
          'button',
          { type: 'button', class: 'chip-button explain-more', onclick: onToggle },
          showAll ? t('showTop', { n: TOP_ROWS }) : t('showAll', { n: cols }),
        )
      : null;
  return el('div', { class: 'table-wrap' }, table, toggle);
}
