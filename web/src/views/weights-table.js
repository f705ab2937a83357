// The weights as an HTML table: what a screen reader reads (row and column headers are the
// tokens), what the "numbers" view shows, and what the browser tests read back. Each cell keeps
// the exact float in data-value; masked cells say so instead of showing 0.
//
// A few hundred tokens make tens of thousands of cells, which take longer to build than one
// frame: large tables are filled a block of rows at a time in idle periods (a newer table for the
// same element cancels the rest), and table.dataset.complete says when all rows are in.
import { el, formatWeight, tokenLabel } from './dom.js';

const SYNCHRONOUS_CELLS = 4096;
const CELLS_PER_SLICE = 2000;
const pendingBuild = new WeakMap();

function whenIdle(callback) {
  if (typeof requestIdleCallback === 'function') requestIdleCallback(callback, { timeout: 200 });
  else setTimeout(callback, 0);
}

function rowElement(data, i) {
  const { rowTokens, colTokens, weights, mask } = data;
  const cols = colTokens.length;
  const cells = [
    el('th', { scope: 'row', dataset: { index: i }, text: tokenLabel(rowTokens[i].text) }),
  ];
  for (let j = 0; j < cols; j++) {
    const k = i * cols + j;
    const masked = mask ? !mask[k] : false;
    const leftOut = masked && Boolean(data.leftOut?.[k]);
    cells.push(
      el('td', {
        dataset: leftOut
          ? { leftOut: '' }
          : masked
            ? { masked: '' }
            : { value: String(weights[k]) },
        text: leftOut
          ? (data.leftOutWord ?? 'left out')
          : masked
            ? (data.masked ?? 'masked')
            : formatWeight(weights[k]),
      }),
    );
  }
  return el('tr', { class: i === data.focusRow ? 'is-focus' : null }, cells);
}

// data: { rowTokens, colTokens, weights, mask, caption, corner, masked (word for masked cells),
//         leftOut?, leftOutWord (cells top-k or LSH dropped though the mask allowed them),
//         focusRow, columnMeans?: { values, label } (a footer row: the mean weight of each key) }
export function renderWeightsTable(table, data) {
  const { rowTokens, colTokens } = data;
  const token = {};
  pendingBuild.set(table, token);
  const head = el(
    'thead',
    null,
    el(
      'tr',
      null,
      el('th', { scope: 'col', class: 'al-corner', text: data.corner ?? 'query \\ key' }),
      colTokens.map((t, j) =>
        el('th', { scope: 'col', dataset: { index: j }, text: tokenLabel(t.text) }),
      ),
    ),
  );
  const body = el('tbody');
  const means = data.columnMeans;
  const foot = means
    ? el(
        'tfoot',
        null,
        el(
          'tr',
          null,
          el('th', { scope: 'row', text: means.label }),
          Array.from(means.values, (value) => el('td', { text: formatWeight(value) })),
        ),
      )
    : null;
  table.replaceChildren(
    el('caption', { text: data.caption ?? 'attention weights' }),
    head,
    body,
    ...(foot ? [foot] : []),
  );
  const rows = rowTokens.length;
  const perSlice =
    rows * colTokens.length <= SYNCHRONOUS_CELLS
      ? rows
      : Math.max(1, Math.floor(CELLS_PER_SLICE / colTokens.length));
  let next = 0;
  const fill = () => {
    if (pendingBuild.get(table) !== token) return;
    const end = Math.min(rows, next + perSlice);
    const fragment = document.createDocumentFragment();
    for (let i = next; i < end; i++) fragment.append(rowElement(data, i));
    body.append(fragment);
    next = end;
    table.dataset.complete = String(next === rows);
    if (next < rows) whenIdle(fill);
  };
  fill();
  return table;
}
