// The "Attention sinks" view: per layer, every head's share of attention on the first token
// and, where the tokenizer's BOS/[CLS] is a different token (GPT-2 prepends none, so its
// <|endoftext|> stands later if at all), on that token too (src/interpret/sinks.js, averaged over
// the rows that can choose), as an SVG dot plot with each layer's mean as a bar, then the same
// numbers as a table whose buttons open the head most on the first token in the matrix. Loaded
// on demand (model/stage.js) the first time the view opens.
import { el, svgEl, tokenLabel } from '../../src/views/dom.js';
import { attentionSinks, sinksByLayer } from '../../src/interpret/sinks.js';
import { t } from '../i18n.js';

const WIDTH = 560;
const HEIGHT = 220;
const MARGIN = { left: 52, right: 10, top: 10, bottom: 34 };
const TOP_HEADS = 3;

const percent = (share) => `${(100 * share).toFixed(0)}%`;

// run.attention -> the sinks of that run, for a run that did not bring its own (the model's,
// with the BOS/[CLS] share: compute.js asks run() for them).
const cache = new WeakMap();

function sinksOf(run, shape, causal) {
  if (run.sinks) return run.sinks;
  let found = cache.get(run.attention);
  if (!found) cache.set(run.attention, (found = attentionSinks(run.attention, shape, { causal })));
  return found;
}

function plot(byLayer, { layers, heads }, caption, bosName) {
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const band = plotWidth / layers;
  const y = (share) => MARGIN.top + plotHeight * (1 - share);
  const parts = [];
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
    parts.push(
      svgEl('line', {
        class: 'sinks-grid',
        x1: MARGIN.left,
        x2: WIDTH - MARGIN.right,
        y1: y(tick),
        y2: y(tick),
      }),
      svgEl('text', {
        class: 'sinks-tick',
        x: MARGIN.left - 6,
        y: y(tick) + 4,
        text: percent(tick),
      }),
    );
  }
  // Heads side by side within their layer's band, so every dot stays visible.
  const spread = Math.min(band * 0.7, heads * 9);
  const offset = byLayer.bosApart ? Math.min(3, spread / heads / 3) : 0;
  for (let l = 0; l < layers; l++) {
    const centre = MARGIN.left + band * (l + 0.5);
    const layer = byLayer.layers[l];
    for (let h = 0; h < heads; h++) {
      const x = heads === 1 ? centre : centre - spread / 2 + (spread * h) / (heads - 1);
      const share = layer.first[h];
      parts.push(
        svgEl(
          'circle',
          { class: 'sinks-dot', cx: (x - offset).toFixed(1), cy: y(share).toFixed(1), r: 3.5 },
          svgEl('title', {
            text: t('sinksDot', { layer: l + 1, head: h + 1, share: percent(share) }),
          }),
        ),
      );
      if (layer.bos) {
        // A square beside the circle: told apart by shape, not only by colour.
        const bos = layer.bos[h];
        parts.push(
          svgEl(
            'rect',
            {
              class: 'sinks-bos',
              x: (x + offset - 3).toFixed(1),
              y: (y(bos) - 3).toFixed(1),
              width: 6,
              height: 6,
            },
            svgEl('title', {
              text: t('sinksBosDot', {
                layer: l + 1,
                head: h + 1,
                share: percent(bos),
                token: bosName,
              }),
            }),
          ),
        );
      }
    }
    const bar = (mean, kind) =>
      svgEl('line', {
        class: kind,
        x1: (centre - spread / 2 - 4).toFixed(1),
        x2: (centre + spread / 2 + 4).toFixed(1),
        y1: y(mean).toFixed(1),
        y2: y(mean).toFixed(1),
      });
    parts.push(bar(layer.firstMean, 'sinks-mean'));
    if (layer.bos) parts.push(bar(layer.bosMean, 'sinks-mean sinks-mean-bos'));
    parts.push(
      svgEl('text', { class: 'sinks-layer', x: centre.toFixed(1), y: HEIGHT - 18, text: l + 1 }),
    );
  }
  parts.push(
    svgEl('text', {
      class: 'sinks-axis',
      x: MARGIN.left + plotWidth / 2,
      y: HEIGHT - 3,
      text: t('sinksAxisLayer'),
    }),
  );
  return svgEl(
    'svg',
    {
      class: 'sinks-svg',
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      role: 'img',
      'aria-label': caption,
    },
    parts,
  );
}

/**
 * @param {HTMLElement} host
 * @param {{ run: { attention: Float32Array }, rows: { text: string }[], info, words: boolean,
 *   onSelect: (layer: number, head: number) => void }} data
 */
export function renderSinksPlot(host, { run, rows, info, words, onSelect }) {
  if (words) {
    host.replaceChildren(el('p', { class: 'hint', text: t('rolloutWords') }));
    return;
  }
  const { layers, heads } = info;
  const sinks = sinksOf(run, { layers, heads, n: rows.length }, info.causal);
  if (sinks.rows === 0) {
    host.replaceChildren(el('p', { class: 'hint', text: t('sinksNoRows') }));
    return;
  }
  const byLayer = sinksByLayer(sinks, info);
  const bosName = tokenLabel(info.bosToken ?? '');
  const token = tokenLabel(rows[0].text);
  const caption = byLayer.bosApart
    ? t('sinksCaptionBos', { token, bos: bosName, rows: sinks.rows })
    : t('sinksCaption', { token, rows: sinks.rows });
  const body = [];
  for (let l = 0; l < layers; l++) {
    const { first: shares, firstMean: mean, bosMean } = byLayer.layers[l];
    const top = shares
      .map((share, h) => ({ share, h }))
      .sort((a, b) => b.share - a.share)
      .slice(0, TOP_HEADS);
    body.push(
      el(
        'tr',
        null,
        el('th', { scope: 'row', text: t('layerN', { n: l + 1 }) }),
        el('td', { text: percent(mean) }),
        byLayer.bosApart ? el('td', { text: percent(bosMean) }) : null,
        el(
          'td',
          { class: 'sinks-top' },
          top.map(({ share, h }) =>
            el('button', {
              type: 'button',
              class: 'chip-button',
              text: t('sinksHead', { head: h + 1, share: percent(share) }),
              title: t('sinksOpen', { layer: l + 1, head: h + 1, share: percent(share) }),
              onclick: () => onSelect(l, h),
            }),
          ),
        ),
      ),
    );
  }
  host.replaceChildren(
    el(
      'figure',
      { class: 'sinks-figure' },
      el('figcaption', { text: caption }),
      plot(byLayer, info, caption, bosName),
    ),
    el(
      'table',
      { class: 'sinks-table' },
      el(
        'thead',
        null,
        el(
          'tr',
          null,
          el('th', { scope: 'col', text: t('sinksLayerColumn') }),
          el('th', { scope: 'col', text: t('sinksMeanColumn') }),
          byLayer.bosApart
            ? el('th', { scope: 'col', text: t('sinksBosMeanColumn', { token: bosName }) })
            : null,
          el('th', { scope: 'col', text: t('sinksTopColumn') }),
        ),
      ),
      el('tbody', null, body),
    ),
  );
}
