// Attention flow (Abnar and Zuidema 2020, "Quantifying Attention Flow in Transformers"): the
// layers as a graph, node (l, i) for token i after layer l (l = 0 the inputs), an edge from
// (l, i) down to (l - 1, j) whose capacity is Ã_l[i][j], layer l's head-averaged attention with
// the residual mixed in (rollout.js' residualMixed). The flow of output position p to input
// token j is the maximum flow from (L, p) to (0, j); like the paper's code, the N values are then
// divided by their sum. Where rollout multiplies weights along every path (information mixes
// linearly), flow treats the weights as pipe capacities: a token gets no more than the narrowest
// layer lets through, and paths compete for the same capacity.
// For a picture, ask for the class token's row (position 0 in ViT/DeiT): what the prediction
// reads from each patch. The max-flow is Dinic's algorithm, written here.

import { integer, rangeError } from '../argument-checks.js';
import { checkAttentionShape, residualMixed } from './rollout.js';

/**
 * The largest graph flow() takes: N tokens and layers, and their product layers * N^2 (the
 * edges). At the caps a flow row takes a few seconds at most (Dinic's phases are few on these
 * layered graphs); past them it would not be interactive, and N max-flows over L * N^2 edges
 * would grow without bound.
 */
export const FLOW_LIMITS = Object.freeze({ tokens: 256, layers: 64, edges: 2 ** 20 });

// Residual capacity below this is numerical dust left by subtracting floats, not a pipe.
const DUST = 1e-15;

/**
 * The attention flow of one output position over the input tokens.
 * @param {Float32Array} attention [layers, heads, N, N], as Model.run() returns it
 * @param {{ layers: number, heads: number, n: number }} shape
 * @param {{ position?: number }} [options] the output position (default N - 1, the last token)
 * @returns {Float32Array} [N]: each input token's share of the flow (sums to 1)
 */
export function attentionFlow(attention, shape, options = {}) {
  const { attention: weights, layers, heads, n } = checkAttentionShape(attention, shape);
  const position =
    options?.position === undefined ? n - 1 : integer(options.position, 'position', 0, n - 1);
  checkFlowSize(layers, n, 'attention');
  const graph = layerGraph(
    Array.from({ length: layers }, (_, l) => residualMixed(weights, l, heads, n)),
    n,
    position,
  );
  const values = new Float64Array(n);
  const residual = new Float64Array(graph.capacity.length);
  let total = 0;
  for (let j = 0; j < n; j++) {
    if (!graph.reached[j]) continue; // no path at all: a later token of a causal model
    values[j] = maxFlow(graph, residual, graph.source, j);
    total += values[j];
  }
  const shares = new Float32Array(n);
  for (let j = 0; j < n; j++) shares[j] = values[j] / total;
  return shares;
}

/** Refuses, naming `name`, a graph past FLOW_LIMITS. */
export function checkFlowSize(layers, n, name) {
  const { tokens, layers: maxLayers, edges } = FLOW_LIMITS;
  if (n > tokens) {
    throw rangeError(name, `flow takes at most ${tokens} tokens (FLOW_LIMITS), got ${n}`);
  }
  if (layers > maxLayers) {
    throw rangeError(
      'attention',
      `flow takes at most ${maxLayers} layers (FLOW_LIMITS), got ${layers}`,
    );
  }
  if (layers * n * n > edges) {
    throw rangeError(
      name,
      `flow takes at most ${edges} edges, layers x N^2 (FLOW_LIMITS), got ${layers} x ${n}^2`,
    );
  }
}

// The graph of the nodes the source reaches, as linked adjacency lists (first[node],
// next[edge]); edge e and e ^ 1 are a pipe and its reverse. Node (l, i) is l * n + i.
function layerGraph(mixed, n, position) {
  const layers = mixed.length;
  const nodes = (layers + 1) * n;
  const from = [];
  const to = [];
  const capacity = [];
  let reached = new Uint8Array(n);
  reached[position] = 1;
  for (let l = layers; l >= 1; l--) {
    const below = new Uint8Array(n);
    const m = mixed[l - 1];
    for (let i = 0; i < n; i++) {
      if (!reached[i]) continue;
      for (let j = 0; j < n; j++) {
        const c = m[i * n + j];
        if (c <= 0) continue; // a masked key: no pipe
        from.push(l * n + i, (l - 1) * n + j);
        to.push((l - 1) * n + j, l * n + i);
        capacity.push(c, 0);
        below[j] = 1;
      }
    }
    reached = below;
  }
  const first = new Int32Array(nodes).fill(-1);
  const next = new Int32Array(to.length);
  for (let e = 0; e < to.length; e++) {
    next[e] = first[from[e]];
    first[from[e]] = e;
  }
  return {
    nodes,
    first,
    next,
    to: Int32Array.from(to),
    capacity: Float64Array.from(capacity),
    source: layers * n + position,
    reached, // the inputs (layer 0) the source reaches
  };
}

// Dinic: breadth-first levels from the source, then blocking flows along level-increasing edges
// with a current-edge pointer per node, until the sink is out of reach. The walk is iterative
// (a path can be as long as the graph has nodes). Each augmentation zeroes its bottleneck edge
// exactly and the levels grow every phase, so it ends after at most nodes phases.
function maxFlow(graph, residual, source, sink) {
  const { nodes, first, next, to, capacity } = graph;
  residual.set(capacity);
  const level = new Int32Array(nodes);
  const current = new Int32Array(nodes);
  const queue = new Int32Array(nodes);
  const path = new Int32Array(nodes);
  let total = 0;
  for (;;) {
    level.fill(-1);
    level[source] = 0;
    let head = 0;
    let tail = 0;
    queue[tail++] = source;
    while (head < tail) {
      const u = queue[head++];
      for (let e = first[u]; e !== -1; e = next[e]) {
        const v = to[e];
        if (level[v] < 0 && residual[e] > DUST) {
          level[v] = level[u] + 1;
          queue[tail++] = v;
        }
      }
    }
    if (level[sink] < 0) return total;
    current.set(first);
    let depth = 0;
    let u = source;
    for (;;) {
      if (u === sink) {
        let bottleneck = Infinity;
        for (let k = 0; k < depth; k++) bottleneck = Math.min(bottleneck, residual[path[k]]);
        let back = depth;
        for (let k = depth - 1; k >= 0; k--) {
          residual[path[k]] -= bottleneck;
          residual[path[k] ^ 1] += bottleneck;
          if (residual[path[k]] <= DUST) back = k; // retreat to the first saturated edge
        }
        total += bottleneck;
        depth = back;
        u = depth === 0 ? source : to[path[depth - 1]];
        continue;
      }
      let e = current[u];
      while (e !== -1 && !(residual[e] > DUST && level[to[e]] === level[u] + 1)) e = next[e];
      current[u] = e;
      if (e !== -1) {
        path[depth++] = e;
        u = to[e];
        continue;
      }
      if (u === source) break; // the phase's blocking flow is complete
      level[u] = -1; // a dead end: nothing through it this phase
      depth -= 1;
      u = depth === 0 ? source : to[path[depth - 1]];
      current[u] = next[current[u]];
    }
  }
}
