// What the page's views draw of a real model's run: the shown layer in the form the untrained
// layer's results have (rowTokens, colTokens, heads with their summaries, mask, and the mask
// surgery's run beside it as the comparison), so the matrix, line and numbers views and the
// explain panel draw a real head as they draw the untrained one.
import { headSummaries } from '../head-summaries.js';

/** The layer and head the state asks for, within the model's. */
export function shownHead(state, info) {
  return {
    layer: Math.max(0, Math.min(state.layer, info.layers - 1)),
    head: Math.max(0, Math.min(state.head, info.heads - 1)),
  };
}

// One run's layer: every head's weights and the layer's visibility.
function layerOf(run, layer, { heads }, n) {
  const size = n * n;
  const mask = run.visible.subarray(layer * size, (layer + 1) * size);
  const list = Array.from({ length: heads }, (_, h) => ({
    weights: run.attention.subarray((layer * heads + h) * size, (layer * heads + h + 1) * size),
  }));
  return { mask, heads: headSummaries(list, mask, n, n), maskLabel: run.layerMasks[layer] };
}

/**
 * The shown layer of `result` (compute.js runModel) as a view result; with the state's
 * `block` and a sentence pair, only the first sentence's rows over the second's columns.
 */
export function layerView(result, state, info) {
  const n = result.rows.length;
  const { layer } = shownHead(state, info);
  const own = layerOf(result.own, layer, info, n);
  const view = {
    empty: false,
    model: true,
    layer,
    rowTokens: result.rows,
    colTokens: result.rows,
    heads: own.heads,
    mask: own.mask,
    maskLabel: own.maskLabel,
    compare: result.surgery ? layerOf(result.surgery, layer, info, n) : null,
    backend: info.backend,
    headDim: info.hidden / info.heads,
  };
  return state.block && result.pair ? pairBlock(view) : view;
}

// The rows of the first sentence over the columns of the second (specials left out): how the
// sentences look at each other. Weights are those of the whole rows, not renormalised.
function pairBlock(view) {
  const rows = [];
  const cols = [];
  view.rowTokens.forEach((token, i) => {
    if (token.special) return;
    (token.segment === 0 ? rows : cols).push(i);
  });
  if (!rows.length || !cols.length) return view;
  const n = view.rowTokens.length;
  const cut = (matrix) => {
    const out = new matrix.constructor(rows.length * cols.length);
    rows.forEach((i, r) => cols.forEach((j, c) => (out[r * cols.length + c] = matrix[i * n + j])));
    return out;
  };
  const cutLayer = (layer) => {
    const mask = cut(layer.mask);
    const heads = layer.heads.map((head) => ({ weights: cut(head.weights) }));
    return { ...layer, mask, heads: headSummaries(heads, mask, rows.length, cols.length) };
  };
  return {
    ...view,
    ...cutLayer(view),
    block: true,
    rowTokens: rows.map((i) => view.rowTokens[i]),
    colTokens: cols.map((j) => view.rowTokens[j]),
    compare: view.compare && cutLayer(view.compare),
  };
}

/**
 * The explain panel's input for the shown layer (compute.js explainLayer): the untrained
 * layer's form plus `model` (the layer and its scale), on the model's own tokens.
 */
export function explainView(explained, info) {
  const n = explained.tokens.length;
  return {
    empty: false,
    rowTokens: explained.tokens,
    colTokens: explained.tokens,
    heads: headSummaries(explained.heads, explained.mask, n, n),
    mask: explained.mask,
    q: explained.q,
    k: explained.k,
    v: explained.v,
    headDim: explained.headDim,
    model: { layer: explained.layer, scale: explained.scale, type: info.modelType },
  };
}
