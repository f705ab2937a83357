// Writing a snapshot (format.js) of one model run: the chosen layers and heads of its attention,
// each included layer's visibility and mask, the tokens, the predictions and where it came from.

import { float32Bytes, packBits, SNAPSHOT_FORMAT, SNAPSHOT_VERSION, toBase64 } from './format.js';
import { writePicture } from './picture.js';

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
 *   picture      for a picture only (picture.js pictureRun()): the picture and the vision
 *                model's run; then only model and selected besides it are read
 *   translation  for a translation only: { text, decoderLayers, target: [{ text, special }],
 *                cross: Float32Array [decoderLayers, model.heads, T, N] } (every layer and head
 *                of the decoder is kept)
 * @param {{ layers: number[], heads: number[], created?: Date }} pick what to include
 * @returns {object} the snapshot, ready for JSON.stringify
 */
export function writeSnapshot(run, { layers, heads, created = new Date() }) {
  if (run.picture) return writePictureSnapshot(run, { layers, heads, created });
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
    model: modelField(model),
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
    ...(run.translation ? { translation: writeTranslation(run.translation, model.heads, n) } : {}),
  };
}

function writeTranslation({ text, decoderLayers, target, cross }, heads, n) {
  const all = (count) => Array.from({ length: count }, (_, i) => i);
  if (cross.length !== decoderLayers * heads * target.length * n) {
    throw new RangeError('translation.cross must be [decoderLayers, heads, target tokens, N]');
  }
  return {
    text,
    decoderLayers,
    target: target.map((token) => ({ text: token.text, special: Boolean(token.special) })),
    layers: all(decoderLayers),
    heads: all(heads),
    cross: float32Field(cross),
  };
}

/**
 * The run writeSnapshot() takes for a translation (Model.translate()'s result, or the pieces
 * of it a page kept): the source's tokens and the encoder's self-attention (nothing masked), and
 * the generated tokens with every decoder layer's and head's cross-attention rows.
 * @param {object} parts
 *   model             { id, revision, modelType, layers, heads, encoderLayers, layerMasks? }
 *                     as Model.info has them (layers counts both stacks)
 *   text, source      the source text and its tokens [{ text, start, end, special }]
 *   encoderAttention  Float32Array [encoder layers, heads, N, N]
 *   steps             [{ text, special, crossAttention [decoder layers, heads, N] }]
 *   translation       the translated text
 */
export function translationRun({ model, text, source, encoderAttention, steps, translation }) {
  const n = source.length;
  const { heads, encoderLayers } = model;
  const decoderLayers = model.layers - encoderLayers;
  const t = steps.length;
  const cross = new Float32Array(decoderLayers * heads * t * n);
  steps.forEach((step, i) => {
    for (let lh = 0; lh < decoderLayers * heads; lh++) {
      cross.set(step.crossAttention.subarray(lh * n, (lh + 1) * n), (lh * t + i) * n);
    }
  });
  const layers = Array.from({ length: encoderLayers }, (_, l) => l);
  return {
    model: { ...model, layers: encoderLayers, causal: false },
    text,
    pair: null,
    tokens: source.map((token) => ({ ...token, segment: 0 })),
    attention: encoderAttention,
    visible: layers.map(() => new Uint8Array(n * n).fill(1)),
    layerMasks: layers.map((l) => model.layerMasks?.[l] ?? 'full'),
    surgery: null,
    predictions: [],
    selected: { layer: 0, head: 0 },
    translation: {
      text: translation,
      decoderLayers,
      target: steps.map(({ text: piece, special }) => ({ text: piece, special })),
      cross,
    },
  };
}

const float32Field = (values) => ({
  dtype: 'float32',
  encoding: 'base64',
  data: toBase64(float32Bytes(values)),
});

// A picture's snapshot (picture.js): the common head of every snapshot, then the picture.
function writePictureSnapshot({ model, selected, picture }, { layers, heads, created }) {
  return {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    created: created.toISOString(),
    model: modelField({ ...model, causal: false }),
    layers: [...layers],
    heads: [...heads],
    selected: { ...selected },
    picture: writePicture(picture, { layers, heads, modelHeads: model.heads }),
  };
}

const modelField = ({ id, revision, modelType, layers, heads, causal }) => ({
  id: id ?? null,
  revision: revision ?? null,
  modelType,
  layers,
  heads,
  causal,
});
