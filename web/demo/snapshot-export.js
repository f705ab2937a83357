// "Snapshot": the real model's run as the page shows it (its tokens or words, the mask surgery's
// run when there is one), written in the snapshot format (src/snapshot/) for <attn-lens
// snapshot="...">, which draws it again with no model and no compute.
import { downloadBlob } from '../src/views/export.js';
import { writeSnapshot } from '../src/snapshot/write.js';
import { shownHead } from './model/view.js';

/**
 * The snapshot of `result` (model/compute.js runModel) holding `scope`: 'head', 'layer', 'all';
 * with `rollout` (Float32Array [N, N]) when the page computed it.
 */
export function pageSnapshot(state, result, info, scope, rollout = null) {
  const run = result.surgery ?? result.own;
  const { layer, head } = shownHead(state, info);
  const n = result.rows.length;
  const size = n * n;
  const all = (count) => Array.from({ length: count }, (_, i) => i);
  const layers = scope === 'all' ? all(info.layers) : [layer];
  const heads = scope === 'head' ? [head] : all(info.heads);
  const fromHub = state.model !== 'files';
  return writeSnapshot(
    {
      model: {
        id: fromHub ? state.model : null,
        revision: fromHub ? state.revision || 'main' : null,
        modelType: info.modelType,
        layers: info.layers,
        heads: info.heads,
        causal: info.causal,
      },
      text: result.text,
      pair: result.pair,
      tokens: result.rows,
      attention: run.attention,
      visible: all(info.layers).map((l) => run.visible.subarray(l * size, (l + 1) * size)),
      layerMasks: run.layerMasks,
      surgery: result.surgery
        ? { mask: state.surgery, layer: state.surgeryLayer >= 0 ? state.surgeryLayer : null }
        : null,
      predictions: run.predictions,
      selected: { layer, head },
      rollout,
    },
    { layers, heads },
  );
}

// The rollout of every token (one head's size), which the snapshot's layers alone could not give;
// none over words (it is computed over tokens) or past the rollout's work cap.
async function runRollout(result, info) {
  if (result.words) return null;
  const { attentionRollout } = await import('../src/interpret/rollout.js');
  const shape = { layers: info.layers, heads: info.heads, n: result.rows.length };
  try {
    return attentionRollout((result.surgery ?? result.own).attention, shape);
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw error;
  }
}

/** extra: what the "Which heads matter" and "Logit lens" panels add ({ ablation, logitLens }). */
export async function downloadSnapshot(state, result, info, scope, extra = {}) {
  const rollout = await runRollout(result, info);
  const snapshot = { ...pageSnapshot(state, result, info, scope, rollout), ...extra };
  const name = (state.model === 'files' ? 'model' : state.model).replace(/[^\w.-]+/g, '-');
  const { layer, head } = snapshot.selected;
  downloadBlob(
    new Blob([JSON.stringify(snapshot)], { type: 'application/json' }),
    `attnlens-snapshot-${name}-layer${layer + 1}-head${head + 1}-${scope}.json`,
  );
}
