// The line view: query tokens on one side, key tokens on the other, a line for each
// query -> key pair whose width and opacity follow the attention weight. Vertical (two columns)
// for ordinary text; horizontal (two rows) for long runs of short tokens such as Chinese
// characters, which read left to right. Hover or focus a token to see only its lines; click or
// Enter locks it. Keys work too: focusing a key shows who attends to it. Each side is one tab
// stop (arrow keys move along it); line widths follow `range`, which a legend can show.
import { formatWeight, svgEl, shortLabel, tokenLabel } from './dom.js';
import { markTabStop } from './roving.js';
import { cssColorAt } from './colormap.js';
import { DEFAULT_THEME } from './matrix-paint.js';

const ROW_HEIGHT = 24;
// Without a focused token each row draws only its strongest lines: enough to see the pattern,
// few enough to stay readable (and cheap) for long texts.
const linesPerRow = (rows) => (rows > 60 ? 2 : rows > 24 ? 3 : 5);

let measureContext;
function textWidth(text, font) {
  measureContext ??= document.createElement('canvas').getContext('2d');
  measureContext.font = font;
  return measureContext.measureText(text).width;
}

// How a line of weight w draws, for strength = w / (the top of the range): its colour and width.
function lineStroke(scale, strength) {
  return cssColorAt(scale, 0.25 + 0.75 * strength);
}
function lineWidth(strength) {
  return 0.6 + 7 * strength;
}

/**
 * The key of a line drawing, for exports: sample lines at a quarter, half and all of the range's
 * top, labelled with their weights, after `caption`, starting at height y.
 */
export function lineLegend({ range, scale, caption, theme = DEFAULT_THEME }, y) {
  const hi = range[1];
  const items = [svgEl('text', { x: 8, y: y + 12, fill: theme.muted, text: caption })];
  [0.25, 0.5, 1].forEach((strength, i) => {
    const x = 8 + i * 90;
    items.push(
      svgEl('line', {
        x1: x,
        x2: x + 40,
        y1: y + 26,
        y2: y + 26,
        stroke: lineStroke(scale, strength),
        'stroke-width': lineWidth(strength).toFixed(2),
      }),
      svgEl('text', {
        x: x + 46,
        y: y + 30,
        fill: theme.muted,
        text: formatWeight(hi * strength, 2),
      }),
    );
  });
  return items;
}

// 'auto' picks horizontal for long runs of short tokens (typically CJK characters).
export function chooseOrientation(tokens, preference = 'auto') {
  if (preference === 'vertical' || preference === 'horizontal') return preference;
  const short = tokens.filter((t) => Array.from(t.text).length <= 2).length;
  return tokens.length >= 12 && short / tokens.length > 0.8 ? 'horizontal' : 'vertical';
}

export class LineView {
  // options: { onSelect(row), label, strings: { queries, keys, masked } }
  constructor(host, options = {}) {
    this.host = host;
    this.options = options;
    this.focus = null; // { side: 'query' | 'key', index }
    this.locked = null;
    host.classList.add('al-lines');
    this.scroller = document.createElement('div');
    this.scroller.className = 'al-lines-scroll';
    host.replaceChildren(this.scroller);
    this.resizeObserver = new ResizeObserver(() => {
      if (this.width !== this.scroller.clientWidth) this.render();
    });
    this.resizeObserver.observe(this.scroller);
  }

  // data: { rowTokens, colTokens, weights, mask, scale, range? ([lo, hi]: the weight drawn as the
  //   widest line is hi; default the largest visible weight),
  //   orientation: 'auto'|'vertical'|'horizontal',
  //   overlay?: [{ weights, mask, color }]: several heads at once, each in its own colour (their
  //   weights are written beside the tokens only while one head is drawn) }
  setData(data) {
    this.data = data;
    if (this.locked && this.#outOfRange(this.locked)) this.locked = null;
    if (this.focus && this.#outOfRange(this.focus)) this.focus = null;
    this.render();
  }

  lockRow(row) {
    this.locked = row >= 0 ? { side: 'query', index: row } : null;
    this.#paintLines();
  }

  #outOfRange({ side, index }) {
    return index >= (side === 'query' ? this.data.rowTokens : this.data.colTokens).length;
  }

  render() {
    if (!this.data) return;
    const { rowTokens, colTokens } = this.data;
    this.theme = { ...DEFAULT_THEME };
    const style = getComputedStyle(this.host);
    this.font = `13px ${style.getPropertyValue('--al-font').trim() || DEFAULT_THEME.font}`;
    this.width = this.scroller.clientWidth || 600;
    this.orientation = chooseOrientation([...rowTokens, ...colTokens], this.data.orientation);
    const geometry = this.orientation === 'horizontal' ? this.#horizontal() : this.#vertical();
    this.geometry = geometry;
    const strings = this.options.strings ?? {};
    const svg = svgEl('svg', {
      class: `al-lines-svg al-lines-${this.orientation}`,
      width: geometry.width,
      height: geometry.height,
      viewBox: `0 0 ${geometry.width} ${geometry.height}`,
      role: 'group',
      'aria-label': this.options.label ?? 'attention lines',
    });
    this.lineLayer = svgEl('g', { class: 'al-lines-layer', 'aria-hidden': 'true' });
    svg.append(this.lineLayer);
    svg.append(
      this.#tokenGroup('query', rowTokens, geometry.queries, strings.queries ?? 'queries'),
    );
    svg.append(this.#tokenGroup('key', colTokens, geometry.keys, strings.keys ?? 'keys'));
    // The weights written beside the tokens: outside the tokens, so a token's name stays its text.
    this.weightLayer = svgEl('g', { class: 'al-weights', 'aria-hidden': 'true' });
    svg.append(this.weightLayer);
    this.svg = svg;
    this.scroller.replaceChildren(svg);
    this.#paintLines();
  }

  #vertical() {
    const { rowTokens, colTokens } = this.data;
    const pad = 6;
    const labelWidth = (tokens) =>
      Math.min(
        180,
        Math.max(40, ...tokens.map((t) => textWidth(shortLabel(t.text, 18), this.font))) + 16,
      );
    const qw = labelWidth(rowTokens);
    const kw = labelWidth(colTokens);
    const width = Math.max(this.width, qw + kw + 160);
    const rows = Math.max(rowTokens.length, colTokens.length);
    const height = rows * ROW_HEIGHT + pad * 2 + 20;
    const place = (tokens, x, w, anchor) =>
      tokens.map((t, i) => ({
        x,
        y: pad + 20 + i * ROW_HEIGHT,
        w,
        h: ROW_HEIGHT - 4,
        anchor,
        port:
          anchor === 'end'
            ? { x: x + w, y: pad + 20 + i * ROW_HEIGHT + (ROW_HEIGHT - 4) / 2 }
            : { x, y: pad + 20 + i * ROW_HEIGHT + (ROW_HEIGHT - 4) / 2 },
      }));
    return {
      width,
      height,
      queries: place(rowTokens, pad, qw, 'end'),
      keys: place(colTokens, width - pad - kw, kw, 'start'),
      titles: [
        { x: pad, y: 14, anchor: 'start' },
        { x: width - pad, y: 14, anchor: 'end' },
      ],
    };
  }

  #horizontal() {
    const { rowTokens, colTokens } = this.data;
    const gap = 4;
    const widths = (tokens) =>
      tokens.map((t) => Math.max(28, textWidth(shortLabel(t.text, 8), this.font) + 12));
    const lay = (tokens, y) => {
      const ws = widths(tokens);
      let x = 8;
      return tokens.map((t, i) => {
        const box = { x, y, w: ws[i], h: 26 };
        x += ws[i] + gap;
        return box;
      });
    };
    const height = 262;
    const queries = lay(rowTokens, 22);
    const keys = lay(colTokens, height - 66);
    for (const q of queries) q.port = { x: q.x + q.w / 2, y: q.y + q.h };
    for (const k of keys) k.port = { x: k.x + k.w / 2, y: k.y };
    const right = (boxes) =>
      boxes.length ? boxes[boxes.length - 1].x + boxes[boxes.length - 1].w : 0;
    const width = Math.max(this.width, Math.max(right(queries), right(keys)) + 8);
    return {
      width,
      height,
      queries,
      keys,
      titles: [
        { x: 8, y: 14, anchor: 'start' },
        { x: 8, y: height - 4, anchor: 'start' },
      ],
    };
  }

  #tokenGroup(side, tokens, boxes, title) {
    const group = svgEl('g', {
      class: `al-lines-tokens al-lines-${side}s`,
      role: 'group',
      'aria-label': title,
    });
    const titleBox = this.geometry.titles[side === 'query' ? 0 : 1];
    group.append(
      svgEl('text', {
        class: 'al-lines-title',
        x: titleBox.x,
        y: titleBox.y,
        'text-anchor': titleBox.anchor,
        text: title,
      }),
    );
    const horizontal = this.orientation === 'horizontal';
    tokens.forEach((token, index) => {
      const box = boxes[index];
      const label = horizontal ? shortLabel(token.text, 8) : shortLabel(token.text, 18);
      const name = `${tokenLabel(token.text)} (${index + 1})`;
      const item = svgEl(
        'g',
        {
          class: 'al-token',
          tabindex: index === 0 ? 0 : -1,
          role: 'button',
          // A shortened label ('process…') leads the name, so what is seen is what is named.
          'aria-label': label === token.text ? name : `${label} ${name}`,
          dataset: { side, index },
        },
        svgEl('rect', { x: box.x, y: box.y, width: box.w, height: box.h, rx: 5 }),
        svgEl('text', {
          x: horizontal ? box.x + box.w / 2 : box.anchor === 'end' ? box.x + box.w - 8 : box.x + 8,
          y: box.y + box.h / 2,
          'text-anchor': horizontal ? 'middle' : box.anchor,
          'dominant-baseline': 'central',
          text: label,
        }),
      );
      item.addEventListener('pointerenter', () => this.#setFocus({ side, index }));
      item.addEventListener('pointerleave', () => this.#setFocus(null));
      item.addEventListener('focus', () => {
        markTabStop([...group.querySelectorAll('.al-token')], index);
        this.#setFocus({ side, index });
      });
      item.addEventListener('blur', () => this.#setFocus(null));
      item.addEventListener('click', () => this.#toggleLock({ side, index }));
      item.addEventListener('keydown', (event) => this.#onKey(event, side, index, tokens.length));
      group.append(item);
    });
    return group;
  }

  #onKey(event, side, index, count) {
    const next = {
      ArrowDown: 1,
      ArrowRight: 1,
      ArrowUp: -1,
      ArrowLeft: -1,
      Home: -Infinity,
      End: Infinity,
    }[event.key];
    if (next !== undefined) {
      event.preventDefault();
      const target = Math.max(0, Math.min(count - 1, index + next));
      const items = [...this.svg.querySelectorAll(`.al-token[data-side="${side}"]`)];
      markTabStop(items, target);
      items[target]?.focus();
    } else if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      this.#toggleLock({ side, index });
    }
  }

  #toggleLock(target) {
    const same =
      this.locked && this.locked.side === target.side && this.locked.index === target.index;
    this.locked = same ? null : target;
    if (target.side === 'query') this.options.onSelect?.(same ? -1 : target.index);
    this.#paintLines();
  }

  #setFocus(target) {
    this.focus = target;
    this.#paintLines();
  }

  // Draws the lines for the active token (hover/focus beats lock), or the strongest few per row:
  // of the one head, or of each head of the overlay in its colour.
  #paintLines() {
    if (!this.lineLayer) return;
    const { weights, mask, scale } = this.data;
    const active = this.focus ?? this.locked;
    const drawn = this.data.overlay ?? [{ weights, mask, color: null }];
    let max = this.data.range?.[1] ?? 0;
    if (!this.data.range) {
      for (const head of drawn) {
        for (let i = 0; i < head.weights.length; i++)
          if ((!head.mask || head.mask[i]) && head.weights[i] > max) max = head.weights[i];
      }
    }
    max ||= 1;
    const lines = drawn.flatMap((head) =>
      this.#pairs(head, active).map((pair) => [...pair, head.color]),
    );
    lines.sort((a, b) => a[2] - b[2]);
    const { queries, keys } = this.geometry;
    const horizontal = this.orientation === 'horizontal';
    const paths = lines.map(([r, c, w, color]) => {
      const a = queries[r].port;
      const b = keys[c].port;
      const d = horizontal
        ? `M${a.x},${a.y} C${a.x},${(a.y + b.y) / 2} ${b.x},${(a.y + b.y) / 2} ${b.x},${b.y}`
        : `M${a.x},${a.y} C${(a.x + b.x) / 2},${a.y} ${(a.x + b.x) / 2},${b.y} ${b.x},${b.y}`;
      const strength = Math.min(1, w / max);
      return svgEl('path', {
        d,
        stroke: color ?? lineStroke(scale, strength),
        'stroke-width': lineWidth(strength).toFixed(2),
        'stroke-opacity': (active ? 0.25 + 0.75 * strength : 0.12 + 0.6 * strength).toFixed(3),
        fill: 'none',
      });
    });
    this.lineLayer.replaceChildren(...paths);
    this.#markTokens(active, drawn.length === 1 ? lines : []);
  }

  // The (query, key, weight) lines one head draws: the active token's, else each row's best.
  #pairs({ weights, mask }, active) {
    const { rowTokens, colTokens } = this.data;
    const cols = colTokens.length;
    const pairs = [];
    if (active) {
      const count = active.side === 'query' ? cols : rowTokens.length;
      for (let j = 0; j < count; j++) {
        const i = active.side === 'query' ? active.index * cols + j : j * cols + active.index;
        const visible = !mask || mask[i];
        if (visible && weights[i] > 0.002) pairs.push([Math.floor(i / cols), i % cols, weights[i]]);
      }
    } else {
      for (let r = 0; r < rowTokens.length; r++) {
        const row = [];
        for (let c = 0; c < cols; c++) {
          const i = r * cols + c;
          if ((!mask || mask[i]) && weights[i] > 0.01) row.push([r, c, weights[i]]);
        }
        row.sort((a, b) => b[2] - a[2]);
        pairs.push(...row.slice(0, linesPerRow(rowTokens.length)));
      }
    }
    return pairs;
  }

  #markTokens(active, pairs) {
    const strings = this.options.strings ?? {};
    for (const node of this.svg.querySelectorAll('.al-token')) {
      const side = node.dataset.side;
      const index = Number(node.dataset.index);
      node.classList.toggle(
        'is-active',
        Boolean(active && active.side === side && active.index === index),
      );
      node.classList.toggle(
        'is-locked',
        Boolean(this.locked && this.locked.side === side && this.locked.index === index),
      );
      node.classList.remove('is-masked');
    }
    this.weightLayer.replaceChildren();
    if (!active) return;
    const other = active.side === 'query' ? 'key' : 'query';
    const cols = this.data.colTokens.length;
    const count = other === 'key' ? cols : this.data.rowTokens.length;
    const weightOf = new Map(pairs.map(([r, c, w]) => [other === 'key' ? c : r, w]));
    for (let j = 0; j < count; j++) {
      const node = this.svg.querySelector(`.al-token[data-side="${other}"][data-index="${j}"]`);
      const i = other === 'key' ? active.index * cols + j : j * cols + active.index;
      const masked = this.data.mask && !this.data.mask[i];
      node.classList.toggle('is-masked', Boolean(masked));
      const w = weightOf.get(j);
      if (w === undefined && !masked) continue;
      const box = (other === 'key' ? this.geometry.keys : this.geometry.queries)[j];
      const horizontal = this.orientation === 'horizontal';
      this.weightLayer.append(
        svgEl('text', {
          class: 'al-weight',
          x: horizontal
            ? box.x + box.w / 2
            : box.anchor === 'start'
              ? box.x - 6
              : box.x + box.w + 6,
          y: horizontal ? (other === 'key' ? box.y + box.h + 12 : box.y - 5) : box.y + box.h / 2,
          'text-anchor': horizontal ? 'middle' : box.anchor === 'start' ? 'end' : 'start',
          'dominant-baseline': 'central',
          // Two rows of short tokens leave ~28px per label: drop the leading zero there.
          text: masked
            ? (strings.maskedShort ?? '×')
            : horizontal
              ? formatWeight(w, 2).replace(/^0\./, '.')
              : formatWeight(w, 2),
        }),
      );
    }
  }

  destroy() {
    this.resizeObserver.disconnect();
  }
}
