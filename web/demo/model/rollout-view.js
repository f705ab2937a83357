// The "Rollout and flow" view: for the token picked in the strip above, how much of it comes
// from each input token once every layer is counted, read two ways (Abnar and Zuidema 2020):
// rollout (src/interpret/rollout.js) and flow (src/interpret/flow.js), side by side as bars in
// a table, with what each assumes. Loaded on demand (model/stage.js) the first time the view
// opens. Computed on the run the page already holds, for one position at a time and kept per
// run, so switching back and forth costs nothing: rollout here (layers x N^2), flow in a worker.
import { el, tokenLabel } from '../../src/views/dom.js';
import { attentionFlow } from '../../src/interpret/flow.js';
import { attentionRollout } from '../../src/interpret/rollout.js';
import { t } from '../i18n.js';

// run.attention -> Map(position -> { rollout, flow, refused, state: 'new' | 'pending' | 'done' }).
const cache = new WeakMap();
let latest = null; // the last render's [host, data]: where a flow that arrives is drawn
let worker; // undefined: not started; null: module workers unavailable here
let running = null; // { id, entry }: the flow the worker computes now
let requests = 0;

function entryFor(attention, shape, position) {
  let perRun = cache.get(attention);
  if (!perRun) cache.set(attention, (perRun = new Map()));
  let entry = perRun.get(position);
  if (!entry) {
    const rollout = attentionRollout(attention, shape, { rows: [position] });
    entry = { rollout, flow: null, refused: null, state: 'new' };
    perRun.set(position, entry);
  }
  if (entry.state === 'new') requestFlow(entry, attention, shape, position);
  return entry;
}

function settle(entry, { flow = null, refused = null }) {
  Object.assign(entry, { flow, refused, state: 'done' });
  if (latest) renderRolloutView(...latest);
}

// Flow runs in a module worker (flow-worker.js), one at a time: a newer request (another token,
// another run) stops the one the reader moved away from, which starts again if shown again.
// Where module workers cannot start, it runs here.
function requestFlow(entry, attention, shape, position) {
  if (running) {
    worker?.terminate();
    worker = undefined;
    running.entry.state = 'new';
    running = null;
  }
  if (worker === undefined) {
    try {
      worker = new Worker(new URL('./flow-worker.js', import.meta.url), { type: 'module' });
    } catch {
      worker = null;
    }
  }
  if (worker === null) {
    settle(entry, flowHere(attention, shape, position));
    return;
  }
  const id = ++requests;
  running = { id, entry };
  entry.state = 'pending';
  worker.onmessage = ({ data }) => {
    if (data.id !== running?.id) return;
    running = null;
    settle(entry, data);
  };
  worker.onerror = () => {
    worker = null;
    running = null;
    settle(entry, flowHere(attention, shape, position));
  };
  worker.postMessage({ id, attention, shape, position });
}

function flowHere(attention, shape, position) {
  try {
    return { flow: attentionFlow(attention, shape, { position }) };
  } catch (error) {
    // Past FLOW_LIMITS (tokens, layers, edges): rollout still shows, and the reason why not.
    if (!(error instanceof RangeError)) throw error;
    return { refused: error.message.replace(/^attention: /, '') };
  }
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
export function renderRolloutView(host, data) {
  latest = [host, data];
  const { run, rows, info, position, words } = data;
  if (words) {
    host.replaceChildren(el('p', { class: 'hint', text: t('rolloutWords') }));
    return;
  }
  const n = rows.length;
  const shape = { layers: info.layers, heads: info.heads, n };
  const entry = entryFor(run.attention, shape, position);
  const { rollout, flow, refused } = entry;
  const pending = entry.state === 'pending';
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
        flow
          ? shareCell(flow[j], 'flow')
          : el('td', { class: 'rollout-share', text: pending ? '…' : '—' }),
      ),
    );
  }
  const table = el(
    'table',
    { class: 'rollout-table', 'aria-busy': String(pending) },
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
    pending && el('p', { class: 'hint', role: 'status', text: t('flowPending') }),
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
