// Writing a snapshot (format.js) of one model run: the chosen layers and heads of its attention,
// each included layer's visibility and mask, the tokens, the predictions and where it came from.

import { float32Bytes, packBits, SNAPSHOT_FORMAT, SNAPSHOT_VERSION, toBase64 } from './format.js';

/**
 * @param {object} run
 *   model        { id, revision, modelType, layers, heads, causal } (id/revision null for files)
 *   text, pair   the texts (pair null without one)
 *   tokens       [{ text, start, end, special, segment }]
 *   attention    Float32Array [model.layers, model.heads, N, N]
 *   visible      per model layer, the 0/1 [N, N] its mask allowed
 *   layerMasks   per model layer, the mask notation it ran with
 *   surgery      { mask, layer } of a mask applied by the reader, or null
 *   predictions  as model.run() returned them
 *   selected     { layer, head }
 *   rollout      optional Float32Array [N, N]: attentionRollout() of every position
 * @param {{ layers: number[], heads: number[], created?: Date }} pick what to include
 * @returns {object} the snapshot, ready for JSON.stringify
 */
export function writeSnapshot(run, { layers, heads, created = new Date() }) {
  const { model, tokens } = run;
  const n = tokens.length;
  const size = n * n;
  const weights = new Float32Array(layers.length * heads.length * size);
  const visible = new Uint8Array(layers.length * size);
  layers.forEach((layer, a) => {
    visible.set(run.visible[layer], a * size);
    heads.forEach((head, b) => {
      const from = (layer * model.heads + head) * size;
      weights.set(run.attention.subarray(from, from + size), (a * heads.length + b) * size);
    });
  });
  return {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    created: created.toISOString(),
    model: {
      id: model.id ?? null,
      revision: model.revision ?? null,
      modelType: model.modelType,
      layers: model.layers,
      heads: model.heads,
      causal: model.causal,
    },
    text: run.text,
    pair: run.pair ?? null,
    tokens: tokens.map(({ text, start, end, special, segment }) => ({
      text,
      start,
      end,
      special: Boolean(special),
      segment: segment ?? 0,
    })),
    layers: [...layers],
    heads: [...heads],
    attention: float32Field(weights),
    visible: { encoding: 'base64-bits', data: toBase64(packBits(visible)) },
    masks: {
      surgery: run.surgery?.mask ?? null,
      surgeryLayer: run.surgery?.layer ?? null,
      layerMasks: layers.map((layer) => run.layerMasks[layer]),
    },
    predictions: run.predictions,
    selected: { ...run.selected },
    ...(run.rollout ? { rollout: float32Field(run.rollout) } : {}),
  };
}

const float32Field = (values) => ({
  dtype: 'float32',
  encoding: 'base64',
  data: toBase64(float32Bytes(values)),
});
