// "Which heads matter": the model's layers x heads, each cell coloured by how much zeroing that
// head moves the log-probability of the target token (model.headEffects()), the heads that
// matter most in a ranked list, and the predictions with all heads on beside those with the
// chosen heads off. The page makes the cells buttons that switch heads off; the widget draws a
// snapshot of it read-only. Strings come from the caller (the page's or the widget's table).
import { el } from './dom.js';
import { predictionList } from './predictions.js';
import { tint } from './lens-panels-css.js';
import { markTabStop, rovingGrid } from './roving.js';

const RANKED = 8;
const HELPS = [200, 52, 28]; // removing the head lowers the target: it helps the target
const HURTS = [30, 90, 180]; // removing it raises the target

/** A change in log-probability as the views print it: sign always shown, two decimals. */
export const formatDelta = (delta) =>
  `${delta > 0 ? '+' : delta < 0 ? '−' : '±'}${Math.abs(delta).toFixed(2)}`;

function paint(cell, delta, max) {
  if (delta === null || max === 0) return;
  const share = Math.min(1, Math.abs(delta) / max);
  tint(cell, delta < 0 ? HELPS : HURTS, 0.06 + 0.94 * share);
}

/**
 * @param {object} ablation { target, logProb, effects: Float32Array [layers, heads] | null,
 *   off: { layer, head, mode }[], before, after } (read-panels.js's form)
 * @param {object} options
 *   layers, heads  the model's
 *   strings  { title, layer(l), head(h), cell(l, h, delta, off), caption(target, p), ranked,
 *              notMeasured, before, after(n), moved(from, to), entered, noneOff, rankedEntry(l,
 *              h, delta) }
 *   onToggle(layer, head)  makes the cells buttons (the page); without it they are text
 * @returns {HTMLElement}
 */
export function headEffectsView(ablation, { layers, heads, strings, onToggle = null }) {
  const { effects, off } = ablation;
  const isOff = new Set(off.map(({ layer, head }) => layer * heads + head));
  let max = 0;
  if (effects) for (const delta of effects) max = Math.max(max, Math.abs(delta));
  const cell = (l, h) => {
    const delta = effects ? effects[l * heads + h] : null;
    const switchedOff = isOff.has(l * heads + h);
    const attributes = {
      class: `al-effect${switchedOff ? ' is-off' : ''}`,
      dataset: { layer: l, head: h },
      'aria-label': strings.cell(l, h, delta === null ? null : formatDelta(delta), switchedOff),
      text: delta === null ? '·' : formatDelta(delta),
    };
    const node = onToggle
      ? el('button', {
          ...attributes,
          type: 'button',
          'aria-pressed': String(switchedOff),
          onclick: () => onToggle(l, h),
        })
      : el('span', { ...attributes, role: 'img' });
    paint(node, delta, max);
    return el('td', {}, node);
  };
  const grid = el(
    'table',
    { class: 'al-effects-grid' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', {}),
        Array.from({ length: heads }, (_, h) => el('th', { scope: 'col', text: strings.head(h) })),
      ),
    ),
    el(
      'tbody',
      {},
      Array.from({ length: layers }, (_, l) =>
        el(
          'tr',
          {},
          el('th', { scope: 'row', text: strings.layer(l) }),
          Array.from({ length: heads }, (_, h) => cell(l, h)),
        ),
      ),
    ),
  );
  const target = ablation.target;
  const scroll = el('div', { class: 'al-scroll al-effects-scroll' }, grid);
  if (onToggle) {
    markTabStop([...grid.querySelectorAll('button')], 0);
    rovingGrid(scroll, { selector: 'button.al-effect', columns: () => heads });
  } else {
    // Read-only, the grid may still scroll sideways (a phone): the keyboard scrolls it too.
    scroll.tabIndex = 0;
    scroll.setAttribute('role', 'region');
    scroll.setAttribute('aria-label', strings.title);
  }
  return el(
    'div',
    { class: 'al-ablation' },
    el('p', { class: 'al-caption', text: strings.caption(target, Math.exp(ablation.logProb)) }),
    effects ? null : el('p', { class: 'al-caption', text: strings.notMeasured }),
    scroll,
    effects ? rankedList(effects, { heads, strings, onToggle, isOff }) : null,
    beforeAfter(ablation, strings),
  );
}

function rankedList(effects, { heads, strings, onToggle, isOff }) {
  const order = Array.from(effects, (delta, i) => ({ i, delta }))
    .sort((a, b) => a.delta - b.delta || a.i - b.i)
    .slice(0, RANKED);
  const items = order.map(({ i, delta }) => {
    const l = Math.floor(i / heads);
    const h = i % heads;
    const text = strings.rankedEntry(l, h, formatDelta(delta));
    return el(
      'li',
      { class: isOff.has(i) ? 'is-off' : null },
      onToggle
        ? el('button', {
            type: 'button',
            class: 'al-ranked-head',
            'aria-pressed': String(isOff.has(i)),
            dataset: { layer: l, head: h },
            text,
            onclick: () => onToggle(l, h),
          })
        : text,
    );
  });
  return el(
    'div',
    { class: 'al-ranked' },
    el('h4', { text: strings.ranked }),
    el('ol', { class: 'al-ranked-list' }, items),
  );
}

function beforeAfter({ before, after, off }, strings) {
  const words = { moved: strings.moved, entered: strings.entered };
  if (off.length === 0) {
    return el(
      'div',
      { class: 'al-before-after' },
      predictionList(before, { title: strings.before, strings: words }),
      el('p', { class: 'al-caption', text: strings.noneOff }),
    );
  }
  return el(
    'div',
    { class: 'al-before-after comparing' },
    predictionList(before, { title: strings.before, strings: words }),
    predictionList(after, { title: strings.after(off.length), compareTo: before, strings: words }),
  );
}
