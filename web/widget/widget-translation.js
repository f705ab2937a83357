// What <attn-lens> shows of a translation (an encoder-decoder model such as Marian, or a
// snapshot of its translation): the translated tokens as rows, the source's as columns, and each
// decoder head's cross-attention, so the widget's matrix, lines and heads views draw the
// alignment as they draw cross-attention. A live translation goes through the snapshot's own
// writer and reader, so it and its snapshot are one form.
import { readClampedInteger } from '../src/argument-checks.js';
import { readSnapshot, translationHead } from '../src/snapshot/read.js';
import { translationRun, writeSnapshot } from '../src/snapshot/write.js';

/** Translates `text` with a loaded Marian; the lens in the snapshot's form. */
export async function translationLens(model, { id, revision, text }) {
  const result = await model.translate(text);
  const { info } = model;
  const eos = model.tokenizer.special.eos?.id;
  const run = translationRun({
    model: { id, revision: revision ?? 'main', ...info },
    text,
    source: result.source.tokens,
    encoderAttention: result.encoderAttention,
    steps: result.steps.map((step) => ({
      ...step,
      text: step.id === eos ? model.tokenizer.special.eos.text : step.text,
      special: step.id === eos,
    })),
    translation: result.text,
  });
  const all = (count) => Array.from({ length: count }, (_, i) => i);
  const lens = readSnapshot(
    writeSnapshot(run, { layers: all(info.encoderLayers), heads: all(info.heads) }),
  );
  return { ...lens, backend: info.backend };
}

// The target tokens with their spans in the translation (</s> adds none).
function targetTokens(target) {
  let at = 0;
  return target.map(({ text, special }) => {
    const start = at;
    if (!special) at += text.length;
    return { text, start, end: at };
  });
}

/**
 * lensResult() for a translation: the decoder layer asked (1-based), else the last (where
 * alignment tends to be sharpest in trained models).
 */
export function translationResult(lens, { layer, head, settings, t }) {
  const { translation } = lens;
  const last = translation.layers.at(-1);
  const asked =
    layer === null ? last : readClampedInteger(layer, 1, translation.decoderLayers, last + 1) - 1;
  const shown = translation.layers.includes(asked) ? asked : last;
  const indices = translation.heads;
  const headAsked = head === null ? 0 : readClampedInteger(head, 1, lens.model.heads, 1) - 1;
  return {
    rowTokens: targetTokens(translation.target),
    colTokens: lens.tokens.map(({ text, start, end }) => ({ text, start, end })),
    heads: indices.map((h) => translationHead(lens, shown, h)),
    settings: { ...settings, head: Math.max(0, indices.indexOf(headAsked)) },
    cross: true,
    backend:
      lens.backend ??
      t('widgetSnapshotAbout', {
        model: lens.model.id ?? lens.model.modelType,
        date: lens.created?.slice(0, 10) ?? '',
      }),
    lens: {
      layer: shown,
      layers: translation.layers,
      indices,
      mask: t('widgetCrossAttention'),
      model: lens.model,
      translation: translation.text,
    },
  };
}
