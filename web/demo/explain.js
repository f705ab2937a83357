// The explain panel: the three stages of attention (score, normalise, weighted sum), opened up
// for one query token of one head, with the actual numbers of the last run. Raw scores, weights
// and Q/K/V come from the engine; this file only rearranges them (logit = scale * score / T,
// the weighted sum of values) to show the arithmetic.
import { topAttended } from '../src/index.js';
import { el, formatNumber, formatWeight, tokenLabel } from '../src/views/dom.js';
import { language, scoreName, t } from './i18n.js';

const VECTOR_DIMS = 16;
const TOP_ROWS = 12;

// Diverging purple-orange (PuOr: colour-blind safe) for signed vector entries.
function signedColor(value, maxAbs) {
  const x = maxAbs > 0 ? Math.max(-1, Math.min(1, value / maxAbs)) : 0;
  const end = x < 0 ? [94, 60, 153] : [230, 97, 1];
  const mix = Math.abs(x);
  const base = [247, 245, 240];
  return `rgb(${base.map((b, i) => Math.round(b + (end[i] - b) * mix)).join(' ')})`;
}

function vectorRow(name, values, maxAbs) {
  const cells = Array.from(values.slice(0, VECTOR_DIMS), (value) => {
    const cell = el('span', { title: formatNumber(value) });
    cell.style.background = signedColor(value, maxAbs);
    return cell;
  });
  const spoken = Array.from(values.slice(0, VECTOR_DIMS), (v) => formatNumber(v, 2));
  return el(
    'div',
    { class: 'vector-row' },
    el('span', { class: 'vector-name', title: name, text: name }),
    el(
      'span',
      {
        class: 'vector',
        role: 'img',
        'aria-label': `${name}: ${spoken.join(', ')}`,
      },
      cells,
    ),
  );
}

function step(number, title, ...content) {
  return el(
    'li',
    { class: 'step' },
    el('span', { class: 'step-number', 'aria-hidden': 'true', text: number }),
    el('div', null, el('h3', { text: title }), ...content),
  );
}

function maxAbsOf(...arrays) {
  let m = 0;
  for (const a of arrays) for (const v of a) m = Math.max(m, Math.abs(v));
  return m;
}

export class ExplainPanel {
  // onPickKey(index) is called when a row of the key table is chosen.
  constructor(host, { onPickKey }) {
    this.host = host;
    this.onPickKey = onPickKey;
    this.showAll = false;
  }

  render(result, state) {
    const host = this.host;
    if (!result || result.empty) {
      host.replaceChildren(el('p', { class: 'hint', text: t('emptyText') }));
      return;
    }
    const rows = result.rowTokens.length;
    const cols = result.colTokens.length;
    const query = state.query >= 0 && state.query < rows ? state.query : -1;
    if (query < 0) {
      host.replaceChildren(el('p', { class: 'hint', text: t('explainPick') }));
      return;
    }
    const head = result.heads[state.head];
    const d = result.headDim;
    const row = (array) => array.subarray(query * cols, (query + 1) * cols);
    const scores = row(head.scores);
    const weights = row(head.weights);
    const visible = row(result.mask);
    const scale = state.score === 'scaled-dot' ? 1 / Math.sqrt(d) : 1;
    const logits = Array.from(scores, (s, j) =>
      visible[j] ? (scale * s) / state.temperature : Number.NEGATIVE_INFINITY,
    );
    const top = topAttended(weights, 3);
    const key = state.key >= 0 && state.key < cols ? state.key : (top[0]?.index ?? 0);

    const q = result.q.subarray(
      (state.head * rows + query) * d,
      (state.head * rows + query + 1) * d,
    );
    const kOf = (j) =>
      result.k.subarray((state.head * cols + j) * d, (state.head * cols + j + 1) * d);
    const vOf = (j) =>
      result.v.subarray((state.head * cols + j) * d, (state.head * cols + j + 1) * d);
    const z = new Float32Array(d);
    for (let j = 0; j < cols; j++) {
      if (weights[j] === 0) continue;
      const v = vOf(j);
      for (let c = 0; c < d; c++) z[c] += weights[j] * v[c];
    }
    let sum = 0;
    let bits = 0;
    for (const w of weights) {
      sum += w;
      if (w > 0) bits -= w * Math.log2(w);
    }
    const hidden = visible.reduce((n, v) => n + (v ? 0 : 1), 0);
    const queryText = tokenLabel(result.rowTokens[query].text);
    const keyText = tokenLabel(result.colTokens[key].text);
    const tText = state.temperature.toFixed(2);

    const header = el(
      'div',
      { class: 'explain-head' },
      el('span', { class: 'meta', text: t('explainQuery') }),
      el('span', {
        class: 'query-token',
        lang: language() === 'zh' ? 'zh-Hans' : null,
        text: queryText,
      }),
      el('span', {
        class: 'meta',
        text: t('explainMeta', {
          i: query + 1,
          head: state.head + 1,
          d,
          score: scoreName(state.score),
          t: tText,
        }),
      }),
    );

    const k = kOf(key);
    const product = q.map((value, c) => value * k[c]);
    const dot = product.reduce((a, b) => a + b, 0);
    const maxAbs = maxAbsOf(q.slice(0, VECTOR_DIMS), k.slice(0, VECTOR_DIMS));
    const stepOneText =
      { cosine: 'step1Cosine', additive: 'step1Additive' }[state.score] ?? 'step1Dot';
    const stepOne = step(
      '1',
      t('step1Title'),
      el('p', { text: t(stepOneText) }),
      state.score === 'additive'
        ? null
        : el(
            'div',
            null,
            vectorRow(`q ${queryText}`.slice(0, 14), q, maxAbs),
            vectorRow(`k ${keyText}`.slice(0, 14), k, maxAbs),
            vectorRow('q⊙k', product, maxAbsOf(product.slice(0, VECTOR_DIMS))),
            el('p', { text: t('step1Vectors', { n: Math.min(VECTOR_DIMS, d), d, key: keyText }) }),
            el('span', {
              class: 'formula',
              text:
                state.score === 'cosine'
                  ? `cos(q, k) = ${formatNumber(dot)} / (|q||k|) = ${formatNumber(scores[key])}`
                  : t('step1Sum', { value: formatNumber(scores[key]) }),
            }),
          ),
    );

    const stepTwo = step(
      '2',
      t('step2Title'),
      el('p', {
        text:
          state.score === 'scaled-dot'
            ? t('step2Scaled', { root: formatNumber(Math.sqrt(d), 2), t: tText })
            : t('step2Plain', { t: tText }),
      }),
      el('span', {
        class: 'formula',
        text:
          `x = ${formatNumber(scores[key])} × ${formatNumber(scale)} ÷ ${tText} = ` +
          formatNumber(logits[key]),
      }),
    );

    const stepThree = step(
      '3',
      t('step3Title'),
      el('p', { text: hidden ? t('step3Some', { hidden, n: cols }) : t('step3None', { n: cols }) }),
    );

    const stepFour = step(
      '4',
      t('step4Title'),
      el('p', { text: t('step4Text', { sum: sum.toFixed(4), h: bits.toFixed(2) }) }),
      el('span', {
        class: 'formula',
        text:
          `w(${keyText}) = ${visible[key] ? `exp(${formatNumber(logits[key])}) / Σ exp(x)` : '0'}` +
          ` = ${formatWeight(weights[key], 4)}`,
      }),
    );

    const topText =
      top
        .map(
          ({ index, weight }) =>
            `${tokenLabel(result.colTokens[index].text)} ${formatWeight(weight, 2)}`,
        )
        .join(' · ') || '—';
    const stepFive = step(
      '5',
      t('step5Title'),
      el('p', { text: t('step5Text', { top: topText }) }),
      vectorRow('z', z, maxAbsOf(z.slice(0, VECTOR_DIMS))),
    );

    host.replaceChildren(
      header,
      el('ol', { class: 'steps' }, stepOne, stepTwo, stepThree, stepFour, stepFive),
      this.#keyTable(result, { scores, logits, weights, visible, key }),
    );
  }

  #keyTable(result, { scores, logits, weights, visible, key }) {
    const cols = result.colTokens.length;
    let order = [...Array(cols).keys()];
    const limited = !this.showAll && cols > TOP_ROWS + 4;
    if (limited) {
      order = order.sort((a, b) => weights[b] - weights[a] || a - b).slice(0, TOP_ROWS);
      if (!order.includes(key)) order.push(key);
      order.sort((a, b) => a - b);
    }
    let max = 0;
    for (const w of weights) max = Math.max(max, w);
    const body = order.map((j) => {
      const bar = el('span', { class: 'weight-bar' });
      bar.style.width = `${Math.round((weights[j] / (max || 1)) * 100)}%`;
      return el(
        'tr',
        {
          class:
            [visible[j] ? '' : 'is-masked', j === key ? 'is-key' : ''].join(' ').trim() || null,
          tabindex: 0,
          'aria-selected': String(j === key),
          onclick: () => this.onPickKey(j),
          onkeydown: (event) => {
            if (event.key === 'Enter' || event.key === ' ') {
              event.preventDefault();
              this.onPickKey(j);
            }
          },
        },
        el('td', { text: `${j + 1}. ${tokenLabel(result.colTokens[j].text)}` }),
        el('td', { text: formatNumber(scores[j]) }),
        el('td', { text: visible[j] ? formatNumber(logits[j]) : '−∞' }),
        el(
          'td',
          { class: 'bar-cell' },
          el(
            'span',
            { class: 'weight-cell' },
            el('span', { class: 'weight-track' }, visible[j] ? bar : null),
            el('span', {
              class: 'num',
              text: visible[j] ? formatWeight(weights[j]) : t('maskedCell'),
            }),
          ),
        ),
      );
    });
    const table = el(
      'table',
      { class: 'explain-table' },
      el(
        'thead',
        null,
        el(
          'tr',
          null,
          el('th', { scope: 'col', text: t('colKey') }),
          el('th', { scope: 'col', text: t('colScore') }),
          el('th', { scope: 'col', text: t('colLogit') }),
          el('th', { scope: 'col', text: t('colWeight') }),
        ),
      ),
      el('tbody', null, body),
    );
    const toggle =
      cols > TOP_ROWS + 4
        ? el(
            'button',
            {
              type: 'button',
              class: 'chip-button explain-more',
              onclick: () => {
                this.showAll = !this.showAll;
                this.onPickKey(key);
              },
            },
            this.showAll ? t('showTop', { n: TOP_ROWS }) : t('showAll', { n: cols }),
          )
        : null;
    return el('div', { class: 'table-wrap' }, table, toggle);
  }
}
