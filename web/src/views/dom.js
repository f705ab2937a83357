// Small DOM builders. Every piece of text goes through textContent or setAttribute, never through
// innerHTML: token text is user input, and this is the one place that decides how it reaches the
// page.

const SVG_NS = 'http://www.w3.org/2000/svg';

function applyAttributes(node, attributes) {
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'text') node.textContent = String(value);
    else if (name === 'dataset') Object.assign(node.dataset, value);
    else if (name.startsWith('on') && typeof value === 'function') {
      node.addEventListener(name.slice(2), value);
    } else node.setAttribute(name, value === true ? '' : String(value));
  }
}

function appendChildren(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  }
}

// el('button', { class: 'chip', onclick }, 'label') -> HTMLElement. Strings become text nodes.
export function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  applyAttributes(node, attributes);
  appendChildren(node, children);
  return node;
}

export function svgEl(tag, attributes, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  applyAttributes(node, attributes);
  appendChildren(node, children);
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

// Visible label of a token: whitespace made visible so "" or " " never looks like a missing cell.
export function tokenLabel(text) {
  if (text === '') return '∅';
  return text.replace(/\n/g, '⏎').replace(/\t/g, '⇥').replace(/ /g, '·');
}

// Short label for crowded axes: long tokens are cut with an ellipsis.
export function shortLabel(text, max = 12) {
  const label = tokenLabel(text);
  const chars = Array.from(label);
  return chars.length > max ? chars.slice(0, max - 1).join('') + '…' : label;
}

export function formatWeight(value, digits = 3) {
  return Number.isFinite(value) ? value.toFixed(digits) : '—';
}

// A number for an explain table: fixed digits for ordinary magnitudes, exponent for extremes.
export function formatNumber(value, digits = 3) {
  if (value === Number.NEGATIVE_INFINITY) return '−∞';
  if (value === Number.POSITIVE_INFINITY) return '∞';
  if (!Number.isFinite(value)) return '—';
  const magnitude = Math.abs(value);
  if (magnitude !== 0 && (magnitude < 10 ** -digits || magnitude >= 1e5)) {
    return value.toExponential(2).replace('-', '−');
  }
  return value.toFixed(digits).replace('-', '−');
}

export function formatBytes(bytes) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value >= 100 || unit === 0 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}

export function prefersReducedMotion() {
  return typeof matchMedia === 'function' && matchMedia('(prefers-reduced-motion: reduce)').matches;
}
