// What leaves the page: the view shown as PNG or SVG (the matrix of the shown head, the grid of
// heads, or the line drawing with its title and legend), the numbers as JSON, and a link to the
// same view.
import {
  downloadBlob,
  framedSVG,
  matrixPNG,
  matrixSVG,
  svgStringToPNG,
} from '../src/views/export.js';
import { headsPNG, headsSVG } from '../src/views/export-heads.js';
import { sharedMax } from '../src/views/heads-grid.js';
import { lineLegend } from '../src/views/lineview.js';
import { DEFAULT_THEME, visibleMax } from '../src/views/matrix-paint.js';
import { DEFAULT_SEED } from '../src/vocabulary.js';
import { scoreName, t } from './i18n.js';
import { headMask } from '../src/interpret/kept-keys.js';
import { currentHead } from './selection.js';

// The title and subtitle every exported picture carries: a real model's names its model, layer
// and masks.
function captions(state, result, what) {
  if (result.model) {
    const model = state.model === 'files' ? t('modelYourFilesShort') : state.model;
    const surgery = result.compare ? ` · ${t('surgeryAfter')} ${result.compare.maskLabel}` : '';
    return {
      title: `attnlens · ${model} · ${t('layerN', { n: result.layer + 1 })} · ${what}`,
      subtitle: `${t('maskCaption')} ${result.maskLabel}${surgery} · ${result.backend}`,
    };
  }
  const mode = state.mode === 'cross' ? t('modeCross') : t('modeSelf');
  const temperature = `T = ${state.temperature.toFixed(2)}`;
  return {
    title: `attnlens · ${mode} · ${what}`,
    subtitle:
      `${scoreName(state.score)} · ${temperature} · d_k = ${result.headDim} · ` +
      `${t('maskCaption')} ${state.mask} · ${result.backend}`,
  };
}

// The matrix figure of the shown head.
function figure(state, result) {
  const head = currentHead(state, result);
  const mask = headMask(result, head);
  const top = state.range === 'unit' ? 1 : visibleMax(result.heads[head].weights, mask) || 1;
  return {
    rowTokens: result.rowTokens,
    colTokens: result.colTokens,
    weights: result.heads[head].weights,
    mask,
    leftOut: result.heads[head].leftOut,
    scale: state.scale,
    range: [0, top],
    // Exports use the light palette whatever the page shows: they end up in documents and slides.
    theme: DEFAULT_THEME,
    ...captions(state, result, t('headN', { n: head + 1 })),
  };
}

// Every head, as the Heads view shows them: one shared colour range.
function headsFigure(state, result) {
  const heads = result.heads.map((h, i) => ({
    weights: h.weights,
    mask: headMask(result, i),
    leftOut: h.leftOut,
  }));
  return {
    heads,
    rowTokens: result.rowTokens,
    colTokens: result.colTokens,
    scale: state.scale,
    range: [0, state.range === 'unit' ? 1 : sharedMax(heads) || 1],
    theme: DEFAULT_THEME,
    headLabel: (h) => t('headN', { n: h + 1 }),
    ...captions(state, result, t('headsCountN', { n: heads.length })),
  };
}

// The line drawing with a title above and the key of its line widths below.
function linesFigure(state, result, lineSvg, range) {
  const head = currentHead(state, result);
  return framedSVG(lineSvg, {
    ...captions(state, result, t('headN', { n: head + 1 })),
    theme: DEFAULT_THEME,
    legendHeight: 48,
    legend: (y) =>
      lineLegend({ range, scale: state.scale, caption: t('linesLegend'), theme: DEFAULT_THEME }, y),
  });
}

function fileBase(state, result) {
  const what = state.view === 'heads' ? 'heads' : `head${currentHead(state, result) + 1}`;
  const mode = result.model ? `layer${result.layer + 1}` : state.mode;
  return `attnlens-${mode}-${what}${LINE_VIEWS.includes(state.view) ? `-${state.view}` : ''}`;
}

// The views drawn as lines: one head's, or a real model's heads overlaid.
const LINE_VIEWS = ['lines', 'overlay'];

async function exportPNG(state, result, view) {
  let blob;
  if (LINE_VIEWS.includes(state.view) && view.lineSvg) {
    const framed = linesFigure(state, result, view.lineSvg, view.lineRange);
    blob = await svgStringToPNG(framed.text, framed.width, framed.height);
  } else if (state.view === 'heads') {
    blob = await headsPNG(headsFigure(state, result));
  } else {
    blob = await matrixPNG(figure(state, result));
  }
  downloadBlob(blob, `${fileBase(state, result)}.png`);
}

function exportSVG(state, result, view) {
  let text;
  if (LINE_VIEWS.includes(state.view) && view.lineSvg) {
    text = linesFigure(state, result, view.lineSvg, view.lineRange).text;
  } else if (state.view === 'heads') {
    text = headsSVG(headsFigure(state, result));
  } else {
    text = matrixSVG(figure(state, result));
  }
  downloadBlob(new Blob([text], { type: 'image/svg+xml' }), `${fileBase(state, result)}.svg`);
}

function exportJSON(state, result) {
  const cols = result.colTokens.length;
  const matrix = (flat) =>
    result.rowTokens.map((_, r) => Array.from(flat.subarray(r * cols, (r + 1) * cols)));
  if (result.model) {
    downloadBlob(
      new Blob([JSON.stringify(modelPayload(state, result, matrix), null, 1)], {
        type: 'application/json',
      }),
      `${fileBase(state, result)}.json`,
    );
    return;
  }
  const payload = {
    generator: 'attnlens demo',
    link: location.href,
    settings: {
      mode: state.mode,
      text: state.text,
      source: state.mode === 'cross' ? state.source : undefined,
      heads: state.heads,
      headDim: result.headDim,
      modelDim: state.heads * result.headDim,
      seed: DEFAULT_SEED,
      mask: state.mask,
      compare: state.compare || undefined,
      score: state.score,
      temperature: state.temperature,
      granularity: state.granularity,
    },
    backend: result.backend,
    timing: { engineMs: result.timing.engineMs, totalMs: result.timing.totalMs },
    queryTokens: result.rowTokens,
    keyTokens: result.colTokens,
    mask: matrix(result.mask),
    heads: result.heads.map((h) => ({
      weights: matrix(h.weights),
      scores: matrix(h.scores),
      entropy: Array.from(h.entropy),
      columnMeans: Array.from(h.columnMeans),
      // top-k / LSH: the keys this head's softmax saw (the mask's visible keys less those left out)
      kept: h.leftOut ? matrix(h.mask) : undefined,
    })),
  };
  downloadBlob(
    new Blob([JSON.stringify(payload, null, 1)], { type: 'application/json' }),
    `${fileBase(state, result)}.json`,
  );
}

// A real model's shown layer as numbers: the model and masks it ran with, and every head.
function modelPayload(state, result, matrix) {
  const headOf = (h) => ({
    weights: matrix(h.weights),
    entropy: Array.from(h.entropy),
    columnMeans: Array.from(h.columnMeans),
  });
  return {
    generator: 'attnlens demo',
    link: location.href,
    model: { id: state.model === 'files' ? null : state.model, revision: state.revision || 'main' },
    layer: result.layer,
    head: currentHead(state, result),
    text: state.text,
    pair: state.pair || undefined,
    unit: state.words ? 'words' : 'tokens',
    mask: {
      own: result.maskLabel,
      surgery: result.compare?.maskLabel,
      visible: matrix(result.mask),
    },
    tokens: result.rowTokens,
    keys: result.block ? result.colTokens : undefined,
    heads: result.heads.map(headOf),
    surgery: result.compare && {
      visible: matrix(result.compare.mask),
      heads: result.compare.heads.map(headOf),
    },
    backend: result.backend,
  };
}

// Puts the page's link on the clipboard, after writeUrl() has brought it up to date.
async function copyLink(button, writeUrl) {
  writeUrl();
  try {
    await navigator.clipboard.writeText(location.href);
    button.textContent = t('linkCopied');
  } catch {
    button.textContent = t('linkInAddressBar');
  }
  setTimeout(() => {
    button.textContent = t('copyLink');
  }, 1800);
}

/**
 * Wires the export buttons and "Copy link". getState() and getResult() give what is shown,
 * getLineView() the line view's drawing and range ({ lineSvg, lineRange }), writeUrl() writes
 * the state to the URL now.
 */
export function bindExports(elements, { getState, getResult, getLineView, writeUrl }) {
  const shown = (exporter) => () => {
    const result = getResult();
    if (!result || result.empty) return;
    return exporter(getState(), result, getLineView());
  };
  elements.exportPng.addEventListener('click', shown(exportPNG));
  elements.exportSvg.addEventListener('click', shown(exportSVG));
  elements.exportJson.addEventListener('click', shown(exportJSON));
  elements.copyLink.addEventListener('click', () => copyLink(elements.copyLink, writeUrl));
}
