// The explain panel: the stages of attention (score, scale, mask, softmax, weighted sum), opened
// up for one query token of one head, with the actual numbers of the last run. Raw scores,
// weights and Q/K/V come from the engine; this file only rearranges them (x = scale * score / T,
// the weighted sum of values) to show the arithmetic.
import { topAttended } from '../src/index.js';
import { parseMask } from '../src/mask-notation.js';
import { el, formatNumber, formatWeight, tokenLabel } from '../src/views/dom.js';
import { rovingTabindex } from '../src/views/roving.js';
import { keyTable } from './explain-keys.js';
import { selectionStep } from './explain-selection.js';
import { language, scoreName, t } from './i18n.js';

const VECTOR_DIMS = 16;
// A key whose mean weight over every query is at least this share of what the explained query
// gives it is mostly a column stripe: every query of the head favours it.
const STRIPE_SHARE = 0.5;

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
    rovingTabindex(host, { selector: '.explain-table tbody tr', keys: 'vertical' });
  }

  // state: the page's state with `head` and `query` resolved; spread: the score spread at every
  // d_k (scoreSpread in compute-core.js), or null while it is being measured.
  render(result, state, spread = null) {
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
    // Top-k and LSH: the keys the softmax saw (the visible ones less those they left out).
    const leftOut = head.leftOut ? row(head.leftOut) : null;
    const kept = head.leftOut ? row(head.mask) : visible;
    // A real model's layer says its own scale (1/sqrt(d_k), or 1 for GPT-Neo); T is 1 there.
    const model = result.model ?? null;
    const scale = model ? model.scale : state.score === 'scaled-dot' ? 1 / Math.sqrt(d) : 1;
    // Scaling and temperature come before the mask: every key has a finite x; the mask then
    // sets the hidden keys' logits to -inf.
    const scaled = Array.from(scores, (s) => (scale * s) / state.temperature);
    const logits = scaled.map((x, j) => (kept[j] ? x : Number.NEGATIVE_INFINITY));
    const top = topAttended(weights, 3);
    const key = state.key >= 0 && state.key < cols ? state.key : (top[0]?.index ?? 0);
    const seen = visible.reduce((n, v) => n + (v ? 1 : 0), 0);
    const keptCount = kept.reduce((n, v) => n + (v ? 1 : 0), 0);

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
    const queryText = tokenLabel(result.rowTokens[query].text);
    const keyText = tokenLabel(result.colTokens[key].text);
    const tText = state.temperature.toFixed(2);
    const values = { key: keyText, x: formatNumber(scaled[key]), n: cols, d, t: tText };

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
        text: model
          ? t('explainMetaModel', { i: query + 1, layer: model.layer + 1, head: state.head + 1, d })
          : t('explainMeta', {
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
    const shownDims = Math.min(VECTOR_DIMS, d);
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
            el('p', {
              text:
                shownDims === d
                  ? t('step1VectorsAll', { d, key: keyText })
                  : t('step1Vectors', { n: shownDims, d, key: keyText }),
            }),
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
        text: model
          ? step2Model(model, d)
          : state.score === 'scaled-dot'
            ? t('step2Scaled', { root: formatNumber(Math.sqrt(d), 2), t: tText })
            : t('step2Plain', { t: tText }),
      }),
      el('span', {
        class: 'formula',
        text:
          `x(${keyText}) = ${formatNumber(scores[key])} × ${formatNumber(scale)} ÷ ${tText} = ` +
          formatNumber(scaled[key]),
      }),
      !model && ['dot', 'scaled-dot'].includes(state.score) ? spreadTable(spread, d) : null,
    );

    let maskText = t('step3None', { n: cols });
    if (seen === 0) maskText = t('step3Empty', { n: cols });
    else if (seen < cols) maskText = t('step3Some', { hidden: cols - seen, n: cols });
    const stepThree = step(
      '3',
      t('step3Title'),
      el('p', { text: maskText }),
      el('span', {
        class: 'formula',
        text: visible[key] ? t('step3KeyVisible', values) : t('step3KeyMasked', values),
      }),
      leftOut
        ? selectionStep({
            mask: parseMask(state.mask),
            result,
            head: state.head,
            query,
            key,
            visible,
            kept,
            scaled,
          })
        : null,
    );

    // With top-k or LSH the sum runs over the keys they kept: Σ′ says so.
    const sigma = leftOut ? 'Σ′ exp(x)' : 'Σ exp(x)';
    const stepFour =
      keptCount === 0
        ? step('4', t('step4Title'), el('p', { text: t(seen ? 'step4NoneLeft' : 'step4Empty') }))
        : step(
            '4',
            t('step4Title'),
            el('p', { text: t('step4Text', { sum: sum.toFixed(4), h: bits.toFixed(2) }) }),
            leftOut ? el('p', { text: t('step4Kept', { n: keptCount, visible: seen }) }) : null,
            el('span', {
              class: 'formula',
              text: kept[key]
                ? `w(${keyText}) = exp(${formatNumber(logits[key])}) / ${sigma} = ` +
                  formatWeight(weights[key], 4)
                : `w(${keyText}) = exp(−∞) / ${sigma} = 0`,
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
      el('p', {
        text: keptCount
          ? t('step5Text', { top: topText })
          : t(seen ? 'step5NoneLeft' : 'step5Empty'),
      }),
      keptCount === 0 || !top.length ? null : stripeNote(result, head, top[0], Boolean(model)),
      vectorRow('z', z, maxAbsOf(z.slice(0, VECTOR_DIMS))),
    );

    // The key row that had the focus keeps it once the panel is rebuilt.
    const focusedKey = host.contains(document.activeElement)
      ? document.activeElement.dataset.key
      : undefined;
    host.replaceChildren(
      header,
      el('ol', { class: 'steps' }, stepOne, stepTwo, stepThree, stepFour, stepFive),
      keyTable(
        result,
        {
          scores,
          logits,
          weights,
          visible,
          leftOut,
          buckets: result.buckets && { all: result.buckets, head: state.head, rows, cols },
          columnMeans: head.columnMeans,
          key,
        },
        {
          score: state.score,
          showAll: this.showAll,
          onPick: (j) => this.onPickKey(j),
          onToggle: () => {
            this.showAll = !this.showAll;
            this.onPickKey(key);
          },
        },
      ),
    );
    if (focusedKey !== undefined) {
      host.querySelector(`.explain-table tr[data-key="${focusedKey}"]`)?.focus();
    }
  }
}

// How a real model's layer scales its scores: 1/sqrt(d_k) (GPT-2, BERT), not at all (GPT-Neo),
// or another factor (GPT-2's scale_attn_by_inverse_layer_idx).
function step2Model({ scale }, d) {
  const root = 1 / Math.sqrt(d);
  if (scale === 1) return t('step2ModelUnscaled');
  if (Math.abs(scale - root) < 1e-6 * root) {
    return t('step2ModelScaled', {
      root: formatNumber(Math.sqrt(d), 2),
      scale: formatNumber(scale, 4),
    });
  }
  return t('step2ModelOther', { scale: formatNumber(scale, 4) });
}

// Whether the explained query's strongest key is its own pick or a column stripe of the head:
// the key's mean weight over every query that may see it, beside this query's weight.
function stripeNote(result, head, { index, weight }, trained) {
  const mean = head.columnMeans[index];
  const values = {
    key: tokenLabel(result.colTokens[index].text),
    w: formatWeight(weight, 2),
    mean: formatWeight(mean, 2),
  };
  const stripe = mean >= STRIPE_SHARE * weight;
  return el('p', {
    class: `stripe-note${stripe ? ' is-stripe' : ''}`,
    // The untrained layer's notes say it is untrained; a real model's do not.
    text: t(`${stripe ? 'stripeNote' : 'standoutNote'}${trained ? 'Model' : ''}`, values),
  });
}

// The spread of raw q·k at every d_k the page offers, unscaled and divided by sqrt(d_k), with the
// current d_k marked: why scaled dot divides. One row per d_k, so it fits a phone.
function spreadTable(spread, current) {
  if (!spread) return el('p', { class: 'spread-pending', text: t('spreadMeasuring') });
  if (spread.empty) return null;
  const rows = spread.points.map((p) =>
    el(
      'tr',
      { class: p.headDim === current ? 'is-current' : null },
      el('th', { scope: 'row', text: String(p.headDim) }),
      el('td', { class: 'spread-raw', text: formatNumber(p.raw, 1) }),
      el('td', { class: 'spread-scaled', text: formatNumber(p.scaled, 2) }),
    ),
  );
  return el(
    'div',
    { class: 'spread' },
    el('p', {
      class: 'spread-caption',
      id: 'spread-caption',
      text: t('spreadCaption', { tokens: spread.tokens }),
    }),
    el(
      'table',
      { class: 'spread-table', 'aria-labelledby': 'spread-caption' },
      el(
        'thead',
        null,
        el(
          'tr',
          null,
          el('th', { scope: 'col', text: 'd_k' }),
          el('th', { scope: 'col', text: t('spreadRaw') }),
          el('th', { scope: 'col', text: t('spreadScaled') }),
        ),
      ),
      el('tbody', null, rows),
    ),
    el('p', { text: t('spreadText') }),
  );
}
