// Roving tabindex: a group of items (token chips, toggles, table rows, toolbar buttons) is one
// tab stop. The current item has tabindex 0 and every other -1; arrow keys, Home and End move
// the focus inside the group and Tab leaves it. A long sentence then costs one Tab press per
// group instead of one per token.

const STEPS = {
  both: { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 },
  horizontal: { ArrowRight: 1, ArrowLeft: -1 },
  vertical: { ArrowDown: 1, ArrowUp: -1 },
};

/**
 * Makes item `index` of `items` the group's tab stop (the first item when `index` is out of
 * range), for a group built anew.
 */
export function markTabStop(items, index) {
  const stop = index >= 0 && index < items.length ? index : 0;
  items.forEach((item, i) => {
    item.tabIndex = i === stop ? 0 : -1;
  });
}

// The keys and focus of one group: `next(event, index, list)` is the index a key moves to, or
// undefined; `items()` lists the group's items now.
function bindGroup(container, { selector, items, next, onMove }) {
  container.addEventListener('keydown', (event) => {
    const list = items();
    const index = list.indexOf(event.target.closest(selector));
    if (index < 0) return;
    const to = next(event, index, list);
    if (to === undefined || to < 0 || to >= list.length) return;
    event.preventDefault();
    markTabStop(list, to);
    list[to].focus();
    onMove?.(list[to]);
  });
  // A click (or a script) that focuses an item makes it the tab stop.
  container.addEventListener('focusin', (event) => {
    const list = items();
    const index = list.indexOf(event.target.closest(selector));
    if (index >= 0) markTabStop(list, index);
  });
}

/**
 * Binds the keys once on `container`, whose items may be rebuilt at any time.
 * options: { selector: CSS selector of the items, keys: 'both' | 'horizontal' | 'vertical',
 *   onMove(item): called after the focus moved to `item` (a radio group selects it) }
 * Hidden or disabled items are skipped; keys pressed in a <select> or a text field are theirs.
 */
export function rovingTabindex(container, { selector, keys = 'both', onMove }) {
  const items = () =>
    [...container.querySelectorAll(selector)].filter(
      (item) => !item.closest('[hidden]') && !item.disabled,
    );
  const next = (event, index, list) => {
    if (event.target.closest('select, input, textarea')) return undefined;
    const step = STEPS[keys][event.key];
    if (step) return (index + step + list.length) % list.length;
    return { Home: 0, End: list.length - 1 }[event.key];
  };
  bindGroup(container, { selector, items, next, onMove });
}

/**
 * rovingTabindex for a grid of `columns()` items a row (the model view's layers x heads): left
 * and right move along a row, up and down by a whole row, Home and End to the row's ends.
 * options: { selector, columns: () => number, onMove(item) }
 */
export function rovingGrid(container, { selector, columns, onMove }) {
  const items = () => [...container.querySelectorAll(selector)];
  const next = (event, index, list) => {
    const width = columns();
    const rowStart = index - (index % width);
    return {
      ArrowRight: index + 1,
      ArrowLeft: index - 1,
      ArrowDown: index + width,
      ArrowUp: index - width,
      Home: rowStart,
      End: Math.min(list.length - 1, rowStart + width - 1),
    }[event.key];
  };
  bindGroup(container, { selector, items, next, onMove });
}
