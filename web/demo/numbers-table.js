// The Numbers view: the weights of one head as a table, which also serves screen readers under
// every other view.
import { renderWeightsTable } from '../src/views/weights-table.js';
import { t } from './i18n.js';
import { headMask } from '../src/interpret/kept-keys.js';

// Past this many cells the full table is built only while the Numbers view is open; otherwise
// the background copy for screen readers holds the focused query's row (the heatmap announces
// any cell as the arrow keys reach it).
const BACKGROUND_TABLE_CELLS = 4096;

export function renderNumbersTable(table, state, result, { head, query }) {
  const rows = result.rowTokens.length;
  const cols = result.colTokens.length;
  const data = {
    rowTokens: result.rowTokens,
    colTokens: result.colTokens,
    weights: result.heads[head].weights,
    mask: headMask(result, head),
    leftOut: result.heads[head].leftOut,
    leftOutWord: t('leftOutWord'),
    caption: t('tableCaption', { head: head + 1 }),
    corner: t('tableCorner'),
    masked: t('maskedWord'),
    focusRow: query,
    columnMeans: { values: result.heads[head].columnMeans, label: t('columnMeanRow') },
  };
  if (rows * cols > BACKGROUND_TABLE_CELLS && state.view !== 'numbers') {
    const row = Math.max(0, query);
    renderWeightsTable(table, {
      ...data,
      rowTokens: [result.rowTokens[row]],
      focusRow: 0,
      weights: data.weights.subarray(row * cols, (row + 1) * cols),
      mask: data.mask.subarray(row * cols, (row + 1) * cols),
      leftOut: data.leftOut?.subarray(row * cols, (row + 1) * cols),
      caption: `${t('tableCaption', { head: head + 1 })} ${t('tablePartial', { n: row + 1 })}`,
    });
    return;
  }
  renderWeightsTable(table, data);
}
