// The "Rollout and flow" view: for the token picked in the strip above, how much of it comes
// from each input token once every layer is counted, read two ways (Abnar and Zuidema 2020):
// rollout (src/interpret/rollout.js) and flow (src/interpret/flow.js), side by side as bars in
// a table, with what each assumes. Loaded on demand (model/stage.js) the first time the view
// opens. Computed here, on the run the page already holds, for one position at a time and kept
// per run, so switching back and forth costs nothing.
import { el, tokenLabel } from '../../src/views/dom.js';
import { attentionFlow } from '../../src/interpret/flow.js';
import { attentionRollout } from '../../src/interpret/rollout.js';
import { t } from '../i18n.js';

// run.attention -> Map(position -> { rollout, flow, refused }).
const cache = new WeakMap();

function readings(attention, shape, position) {
  let perRun = cache.get(attention);
  if (!perRun) cache.set(attention, (perRun = new Map()));
  let found = perRun.get(position);
  if (!found) {
    const rollout = attentionRollout(attention, shape, { rows: [position] });
    let flow = null;
    let refused = null;
    try {
      flow = attentionFlow(attention, shape, { position });
    } catch (error) {
      // Past FLOW_LIMITS (tokens, layers, edges): rollout still shows, and the reason why not.
      if (!(error instanceof RangeError)) throw error;
      refused = error.message.replace(/^attention: /, '');
    }
    found = { rollout, flow, refused };
    perRun.set(position, found);
  }
  return found;
}

const percent = (share) => `${(100 * share).toFixed(1)}%`;

// A share as a bar with its number: the number is the text, the bar only shows it.
function shareCell(share, kind) {
  const fill = el('span', { class: 'rollout-bar-fill', 'aria-hidden': 'true' });
  fill.style.width = `${Math.min(100, 100 * share)}%`;
  return el(
    'td',
    { class: `rollout-share is-${kind}` },
    el('span', { class: 'rollout-bar', 'aria-hidden': 'true' }, fill),
    el('span', { class: 'rollout-value', text: percent(share) }),
  );
}

/**
 * @param {HTMLElement} host
 * @param {{ run: { attention: Float32Array }, rows: { text: string }[], info, position: number,
 *   words: boolean }} data the shown run (own or surgery), the page's tokens, the model's info
 */
export function renderRolloutView(host, { run, rows, info, position, words }) {
  if (words) {
    host.replaceChildren(el('p', { class: 'hint', text: t('rolloutWords') }));
    return;
  }
  const n = rows.length;
  const shape = { layers: info.layers, heads: info.heads, n };
  const { rollout, flow, refused } = readings(run.attention, shape, position);
  // A causal model's later tokens cannot reach this one: leave them out rather than list zeros.
  const listed = info.causal ? position + 1 : n;
  const caption = t('rolloutCaption', {
    query: tokenLabel(rows[position].text),
    layers: info.layers,
  });
  const body = [];
  for (let j = 0; j < listed; j++) {
    body.push(
      el(
        'tr',
        { class: j === position ? 'is-query' : null, dataset: { token: j } },
        el('th', { scope: 'row', text: tokenLabel(rows[j].text) }),
        shareCell(rollout[j], 'rollout'),
        flow ? shareCell(flow[j], 'flow') : el('td', { class: 'rollout-share', text: '—' }),
      ),
    );
  }
  const table = el(
    'table',
    { class: 'rollout-table' },
    el('caption', { text: caption }),
    el(
      'thead',
      null,
      el(
        'tr',
        null,
        el('th', { scope: 'col', text: t('rolloutToken') }),
        el('th', { scope: 'col', text: t('rolloutColumn') }),
        el('th', { scope: 'col', text: t('flowColumn') }),
      ),
    ),
    el('tbody', null, body),
  );
  const parts = [
    el(
      'div',
      {
        class: 'rollout-scroll',
        tabindex: '0',
        role: 'region',
        'aria-label': t('rolloutRegion'),
      },
      table,
    ),
    listed < n && el('p', { class: 'hint', text: t('rolloutLater') }),
    refused &&
      el('p', { class: 'hint', role: 'status', text: t('flowRefused', { message: refused }) }),
    el(
      'dl',
      { class: 'rollout-notes' },
      el('dt', { text: t('rolloutColumn') }),
      el('dd', { text: t('rolloutAssumes') }),
      el('dt', { text: t('flowColumn') }),
      el('dd', { text: t('flowAssumes') }),
    ),
  ];
  host.replaceChildren(...parts.filter(Boolean));
}
