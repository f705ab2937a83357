// The cost panel: how much working memory the two strategies need for this text (from the
// engine's workingSetBytes), how that grows with N, what the last run took, and an on-demand
// measurement of both strategies on a long random sequence with the current mask.
import { parseMask } from '../src/mask-notation.js';
import { el, formatBytes, svgEl } from '../src/views/dom.js';
import { language, t } from './i18n.js';

// Why a mask saved no tile of work, by pattern: none at all, or kept keys spread over every tile.
function noSkipReason(maskText) {
  const mask = parseMask(maskText);
  const hides = mask.causal || ['local', 'align'].includes(mask.pattern);
  if (hides) return 'benchNoSkipShort';
  return mask.pattern === 'global' && !mask.paddedKeys.length
    ? 'benchNoSkipGlobal'
    : 'benchNoSkipScattered';
}

export const BENCH_LENGTH = 2048;

function bar(kind, label, bytes, max) {
  const fill = el('div', { class: 'fill' });
  fill.style.width = `${Math.max(0.5, (bytes / max) * 100)}%`;
  return el(
    'div',
    { class: `cost-bar ${kind}` },
    el('span', { text: label }),
    el('b', { text: formatBytes(bytes) }),
    el('div', { class: 'track' }, fill),
  );
}

// Log-log chart of both curves with the current N marked.
function chart(curve, currentN, current) {
  const width = 360;
  const height = 170;
  const pad = { left: 52, right: 44, top: 10, bottom: 26 };
  const xs = curve.map((p) => Math.log2(p.n));
  const ys = curve.flatMap((p) => [Math.log2(p.materialized), Math.log2(p.streaming)]);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  const [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  const px = (n) => pad.left + ((Math.log2(n) - x0) / (x1 - x0)) * (width - pad.left - pad.right);
  const py = (b) =>
    height -
    pad.bottom -
    ((Math.log2(Math.max(1, b)) - y0) / (y1 - y0 || 1)) * (height - pad.top - pad.bottom);
  const line = (key) =>
    svgEl('polyline', {
      class: `series-${key}`,
      fill: 'none',
      'stroke-width': 2.5,
      'stroke-linejoin': 'round',
      points: curve.map((p) => `${px(p.n).toFixed(1)},${py(p[key]).toFixed(1)}`).join(' '),
    });
  const ticks = curve
    .filter((p, i) => i % 2 === 0 || i === curve.length - 1)
    .map((p) =>
      svgEl('text', {
        x: px(p.n),
        y: height - 8,
        'text-anchor': 'middle',
        text: p.n >= 1024 ? `${p.n / 1024}k` : String(p.n),
      }),
    );
  const yTicks = [];
  for (let e = Math.ceil(y0 / 5) * 5; e <= y1; e += 5) {
    // Ticks fall on powers of 32 (1 KiB, 32 KiB, 1 MiB, ...): whole numbers, no decimals.
    const label = formatBytes(2 ** e).replace(/\.0 /, ' ');
    yTicks.push(
      svgEl('text', { x: pad.left - 6, y: py(2 ** e) + 3, 'text-anchor': 'end', text: label }),
      svgEl('line', {
        class: 'axis',
        x1: pad.left,
        x2: width - pad.right,
        y1: py(2 ** e),
        y2: py(2 ** e),
        'stroke-dasharray': '2 4',
      }),
    );
  }
  const marker =
    currentN >= curve[0].n && currentN <= curve[curve.length - 1].n
      ? [
          svgEl('line', {
            class: 'axis',
            x1: px(currentN),
            x2: px(currentN),
            y1: pad.top,
            y2: height - pad.bottom,
          }),
          svgEl('circle', {
            cx: px(currentN),
            cy: py(current.materialized),
            r: 4,
            class: 'series-materialized',
            fill: 'var(--surface)',
            'stroke-width': 2,
          }),
          svgEl('circle', {
            cx: px(currentN),
            cy: py(current.streaming),
            r: 4,
            class: 'series-streaming',
            fill: 'var(--surface)',
            'stroke-width': 2,
          }),
        ]
      : [];
  return svgEl(
    'svg',
    {
      viewBox: `0 0 ${width} ${height}`,
      role: 'img',
      'aria-label': t('costChart', {
        ratio: Math.round(curve[curve.length - 1].materialized / curve[curve.length - 1].streaming),
        n: curve[curve.length - 1].n,
      }),
    },
    svgEl('line', {
      class: 'axis',
      x1: pad.left,
      x2: width - pad.right,
      y1: height - pad.bottom,
      y2: height - pad.bottom,
    }),
    ...yTicks,
    ...ticks,
    line('materialized'),
    line('streaming'),
    ...marker,
    // Growth labels at the right end of each curve.
    ...['materialized', 'streaming'].map((key) => {
      const last = curve[curve.length - 1];
      return svgEl('text', {
        class: `label-${key}`,
        x: px(last.n) + 6,
        y: py(last[key]) + 4,
        text: key === 'materialized' ? 'O(N²)' : 'O(N)',
      });
    }),
  );
}

// What the streaming kernel's tile count says: how much of the work the mask let it skip, or why
// it could skip none.
function tilesNote(b) {
  const { tilesVisited, tilesTotal } = b.streaming;
  if (tilesVisited < tilesTotal) {
    const skipped = tilesTotal - tilesVisited;
    return t('benchSkipped', {
      skipped,
      total: tilesTotal,
      share: Math.round((100 * skipped) / tilesTotal),
    });
  }
  return t(noSkipReason(b.mask), { total: tilesTotal });
}

// Top-k and LSH: how many of the pairs the mask allows they left out of this text's softmax.
function selectionNote(selection) {
  if (!selection) return null;
  const { visible, kept } = selection;
  const share = visible ? Math.round((100 * (visible - kept)) / visible) : 0;
  return el('p', { class: 'cost-selection', text: t('costSelection', { kept, visible, share }) });
}

export class CostPanel {
  // runBenchmark() -> Promise<benchmark result> (see compute-core.js)
  constructor(host, { runBenchmark }) {
    this.host = host;
    this.runBenchmark = runBenchmark;
    this.bench = null;
    this.running = false;
  }

  render(result, state, where) {
    if (!result || result.empty) {
      this.host.replaceChildren(el('p', { text: t('costIntro') }));
      return;
    }
    this.last = { result, state, where };
    const { cost } = result;
    const n = Math.max(result.rowTokens.length, result.colTokens.length);
    const max = Math.max(cost.materialized, cost.streaming);
    const far = cost.curve[cost.curve.length - 1];
    const { engineMs, totalMs, warm } = result.timing;
    const facts = el(
      'dl',
      { class: 'cost-facts' },
      el('dt', { text: t('kernelTime') }),
      el(
        'dd',
        { class: 'kernel-time', dataset: { warm: String(warm) } },
        t('runtime', { ms: engineMs.toFixed(2) }),
        warm ? null : el('small', { text: ` ${t('coldRun')}` }),
      ),
      el('dt', { text: t('totalTime') }),
      el(
        'dd',
        { class: 'total-time' },
        t('runtime', { ms: totalMs.toFixed(2) }),
        el('small', { text: ` ${t('totalTimeParts')}` }),
      ),
      el('dt', { text: t('backend') }),
      el('dd', { text: result.backend }),
      el('dt', { text: t('thread') }),
      el('dd', { text: where ?? '' }),
    );
    const benchButton = el(
      'button',
      {
        type: 'button',
        disabled: this.running,
        onclick: () => this.#measure(),
      },
      this.running ? t('benchRunning') : t('benchButton', { n: BENCH_LENGTH }),
    );
    this.host.replaceChildren(
      el(
        'div',
        { class: 'cost-grid' },
        el('p', { text: t('costIntro') }),
        el('p', {
          class: 'num',
          text: t('costShape', {
            n:
              result.rowTokens.length === result.colTokens.length
                ? n
                : `${result.rowTokens.length}×${result.colTokens.length}`,
            heads: state.heads,
            d: result.headDim,
          }),
        }),
        el(
          'div',
          { class: 'cost-bars' },
          bar('materialized', t('costMaterialized'), cost.materialized, max),
          bar('streaming', t('costStreaming'), cost.streaming, max),
        ),
        el(
          'div',
          { class: 'cost-chart' },
          chart(cost.curve, n, cost),
          el('p', {
            text: t('costChart', { ratio: Math.round(far.materialized / far.streaming), n: far.n }),
          }),
        ),
        selectionNote(cost.selection),
        facts,
        el('div', { class: 'bench-controls' }, benchButton),
        el('p', { text: t('benchExplain') }),
        this.#benchTable(),
      ),
    );
  }

  #benchTable() {
    if (!this.bench) return null;
    const b = this.bench;
    const row = (label, r) =>
      el(
        'tr',
        null,
        el('td', { text: label }),
        el('td', { text: t('runtime', { ms: r.ms.toFixed(1) }) }),
        el('td', { text: formatBytes(r.bytes) }),
        el('td', { text: `${r.tilesVisited} / ${r.tilesTotal}` }),
        el('td', { class: 'num', text: r.pairsScored.toLocaleString(language()) }),
      );
    return el(
      'div',
      { class: 'bench-result', role: 'status' },
      el(
        'table',
        null,
        el('caption', { class: 'sr-only', text: t('benchButton', { n: b.length }) }),
        el(
          'thead',
          null,
          el(
            'tr',
            null,
            ...['benchStrategy', 'benchTime', 'benchMemory', 'benchTiles', 'benchScores'].map((k) =>
              el('th', { scope: 'col', text: t(k) }),
            ),
          ),
        ),
        el(
          'tbody',
          null,
          row(t('benchMaterialized'), b.materialized),
          row(t('benchStreaming'), b.streaming),
        ),
      ),
      el('p', {
        class: 'num',
        text: `N = ${b.length} · H = ${b.heads} · d = ${b.headDim} · ${b.mask} · ${b.backend}`,
      }),
      el('p', { class: 'bench-tiles-note', text: tilesNote(b) }),
      b.selects ? el('p', { class: 'bench-selection-note', text: t('benchSelectionNote') }) : null,
    );
  }

  async #measure() {
    if (this.running || !this.last) return;
    this.running = true;
    this.render(this.last.result, this.last.state, this.last.where);
    try {
      this.bench = await this.runBenchmark();
    } catch (error) {
      this.bench = null;
      this.host.append(
        el('p', {
          class: 'status-line is-error',
          text: t('errorPrefix', { message: error.message }),
        }),
      );
      this.running = false;
      return;
    }
    this.running = false;
    this.render(this.last.result, this.last.state, this.last.where);
  }
}
