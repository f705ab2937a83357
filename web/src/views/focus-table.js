// Token focus: where one query token looks in every layer and head of a model, as a table (layers
// down, heads across) whose cell names the key that head gives the token most and its weight,
// coloured by that weight. A cell is a button that opens its head; the table is one tab stop
// whose arrow keys move over the cells.
import { cssColorAt, inkOn } from './colormap.js';
import { el, formatWeight, tokenLabel } from './dom.js';
import { markTabStop, rovingGrid } from './roving.js';

export class FocusTable {
  // options: { onSelect(layer, head), strings: { caption(query), layer(l), head(h),
  //   cell(l, h, key, weight) } }
  constructor(host, options) {
    this.host = host;
    this.options = options;
    host.classList.add('al-focus');
    rovingGrid(host, { selector: 'td button', columns: () => this.data?.heads ?? 1 });
  }

  // data: { layers, heads, n, attention [layers, heads, n, n], query, tokens, selected, scale }
  setData(data) {
    this.data = data;
    const { layers, heads, n, attention, query, tokens, selected, scale } = data;
    const { strings } = this.options;
    const focused = this.host.contains(document.activeElement)
      ? document.activeElement.dataset.cell
      : null;
    const buttons = [];
    const body = [];
    for (let l = 0; l < layers; l++) {
      const cells = [];
      for (let h = 0; h < heads; h++) {
        const row = attention.subarray(
          ((l * heads + h) * n + query) * n,
          ((l * heads + h) * n + query + 1) * n,
        );
        let key = 0;
        for (let j = 1; j < n; j++) if (row[j] > row[key]) key = j;
        const weight = row[key];
        const isSelected = l === selected.layer && h === selected.head;
        const button = el(
          'button',
          {
            type: 'button',
            class: isSelected ? 'is-selected' : null,
            'aria-pressed': String(isSelected),
            'aria-label': strings.cell(l, h, tokenLabel(tokens[key].text), formatWeight(weight, 2)),
            dataset: { cell: `${l}:${h}`, key },
            onclick: () => this.options.onSelect(l, h),
          },
          el('span', { class: 'al-focus-key', text: tokenLabel(tokens[key].text) }),
          ' ',
          el('span', { class: 'al-focus-weight', text: formatWeight(weight, 2) }),
        );
        button.style.background = cssColorAt(scale, weight);
        button.style.color = inkOn(scale, weight);
        buttons.push(button);
        cells.push(el('td', null, button));
      }
      body.push(el('tr', null, el('th', { scope: 'row', text: strings.layer(l) }), cells));
    }
    const table = el(
      'table',
      { class: 'al-focus-table' },
      el('caption', { text: strings.caption(tokenLabel(tokens[query].text)) }),
      el(
        'thead',
        null,
        el(
          'tr',
          null,
          el('td'),
          Array.from({ length: heads }, (_, h) =>
            el('th', { scope: 'col', text: strings.head(h) }),
          ),
        ),
      ),
      el('tbody', null, body),
    );
    this.host.replaceChildren(el('div', { class: 'al-focus-scroll' }, table));
    markTabStop(buttons, selected.layer * heads + selected.head);
    if (focused) this.host.querySelector(`[data-cell="${focused}"]`)?.focus();
  }
}
