// The compute thread's side of the Translate mode: model.translate() on the loaded Marian, each
// new token posted to the page as it comes (through the request's progress channel), so the
// page draws the alignment as it grows. Greedy decoding: each token stays once it arrives; beam
// search (the model's num_beams) streams its leading beam, which may be overtaken: its tokens
// from onToken's `index` on are replaced, and the page drops them as well. Only
// options translate() declares are passed, so new ones (the cross-attention masks) slot in by
// name.
// A page translation stops here: every token's rows cross to the page, and the matrix stays
// legible.
export const PAGE_TRANSLATE_TOKENS = 64;

/**
 * model: the loaded Marian; params: { key, text, crossMask?, decoding?: 'greedy' | 'beams' } ->
 * { source: [{ text, start,
 * end, special }], steps, translation, beams, encoderAttention, decoderLayers, heads } with steps
 * [{ id, text, special, crossAttention [decoder layers, heads, source] }]. Each step also
 * reaches progress() as it comes: { step, index, source, decoderLayers, heads }.
 */
export async function translateWith(model, params, { signal, progress }) {
  const { heads, layers, encoderLayers, maxPositions } = model.info;
  const decoderLayers = layers - encoderLayers;
  const source = model.tokenizer.encode(params.text).tokens;
  const sourceTokens = source.map(({ text, start, end, special }) => ({
    text,
    start,
    end,
    special,
  }));
  const eos = model.tokenizer.special.eos;
  const steps = [];
  const result = await model.translate(params.text, {
    // 'beams': translate()'s default, the model's own num_beams.
    ...(params.decoding === 'beams' ? {} : { beams: 1 }),
    // The cross-attention surgery the reader picked (translate()'s own names and checks).
    ...(params.crossMask ? { crossMask: params.crossMask } : {}),
    maxTokens: Math.min(PAGE_TRANSLATE_TOKENS, maxPositions - 1),
    signal,
    onToken: ({ id, text, crossAttention, index }) => {
      // </s> adds no text, but its row is a step the matrix shows: it is named.
      const special = id === eos?.id;
      const step = { id, text: special ? eos.text : text, special, crossAttention };
      steps.length = index;
      steps.push(step);
      progress({ step, index, source: sourceTokens, decoderLayers, heads });
    },
  });
  return {
    key: params.key,
    translation: result.text,
    beams: result.beams,
    source: sourceTokens,
    steps,
    // For the snapshot of a translation: the source's own attention in the encoder.
    encoderAttention: result.encoderAttention,
    decoderLayers,
    heads,
  };
}
