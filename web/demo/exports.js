// What leaves the page: the shown head as PNG, SVG or JSON, and a link to the same view.
import {
  downloadBlob,
  matrixPNG,
  matrixSVG,
  svgElementToString,
  svgStringToPNG,
} from '../src/views/export.js';
import { DEFAULT_THEME, visibleMax } from '../src/views/matrix-paint.js';
import { DEFAULT_SEED } from '../src/vocabulary.js';
import { scoreName, t } from './i18n.js';
import { currentHead } from './selection.js';

// The matrix figure of the shown head.
function figure(state, result) {
  const head = currentHead(state, result);
  // Exports use the light palette whatever the page shows: they end up in documents and slides.
  const theme = DEFAULT_THEME;
  const top = state.range === 'unit' ? 1 : visibleMax(result.heads[head].weights, result.mask) || 1;
  const mode = state.mode === 'cross' ? t('modeCross') : t('modeSelf');
  const temperature = `T = ${state.temperature.toFixed(2)}`;
  return {
    rowTokens: result.rowTokens,
    colTokens: result.colTokens,
    weights: result.heads[head].weights,
    mask: result.mask,
    scale: state.scale,
    range: [0, top],
    theme,
    title: `attnlens · ${mode} · ${t('headN', { n: head + 1 })}`,
    subtitle: `${scoreName(state.score)} · ${temperature} · mask ${state.mask} · ${result.backend}`,
  };
}

function fileBase(state, result) {
  return `attnlens-${state.mode}-head${currentHead(state, result) + 1}`;
}

async function exportPNG(state, result, lineSvg) {
  if (state.view === 'lines' && lineSvg) {
    const svg = svgElementToString(lineSvg, DEFAULT_THEME.background);
    downloadBlob(
      await svgStringToPNG(svg, lineSvg.width.baseVal.value, lineSvg.height.baseVal.value),
      `${fileBase(state, result)}-lines.png`,
    );
    return;
  }
  downloadBlob(await matrixPNG(figure(state, result)), `${fileBase(state, result)}.png`);
}

function exportSVG(state, result, lineSvg) {
  const text =
    state.view === 'lines' && lineSvg
      ? svgElementToString(lineSvg, DEFAULT_THEME.background)
      : matrixSVG(figure(state, result));
  downloadBlob(
    new Blob([text], { type: 'image/svg+xml' }),
    `${fileBase(state, result)}${state.view === 'lines' ? '-lines' : ''}.svg`,
  );
}

function exportJSON(state, result) {
  const cols = result.colTokens.length;
  const matrix = (flat) =>
    result.rowTokens.map((_, r) => Array.from(flat.subarray(r * cols, (r + 1) * cols)));
  const payload = {
    generator: 'attnlens demo',
    link: location.href,
    settings: {
      mode: state.mode,
      text: state.text,
      source: state.mode === 'cross' ? state.source : undefined,
      heads: state.heads,
      headDim: result.headDim,
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
    })),
  };
  downloadBlob(
    new Blob([JSON.stringify(payload, null, 1)], { type: 'application/json' }),
    `${fileBase(state, result)}.json`,
  );
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
 * getLineSvg() the line view's drawing (when it has one), writeUrl() writes the state to the URL
 * now.
 */
export function bindExports(elements, { getState, getResult, getLineSvg, writeUrl }) {
  const shown = (exporter) => () => {
    const result = getResult();
    if (!result || result.empty) return;
    return exporter(getState(), result, getLineSvg());
  };
  elements.exportPng.addEventListener('click', shown(exportPNG));
  elements.exportSvg.addEventListener('click', shown(exportSVG));
  elements.exportJson.addEventListener('click', shown(exportJSON));
  elements.copyLink.addEventListener('click', () => copyLink(elements.copyLink, writeUrl));
}
