// The compute thread's side of the Translate mode: model.translate() on the loaded Marian, each
// new token posted to the page as it comes (through the request's progress channel), so the
// page draws the alignment as it grows. Greedy decoding: each token stays once it arrives, where
// beam search's leading beam may be overtaken and its tokens replaced (onToken's index). Only
// options translate() declares are passed, so new ones (the cross-attention masks) slot in by
// name.
// A page translation stops here: every token's rows cross to the page, and the matrix stays
// legible.
export const PAGE_TRANSLATE_TOKENS = 64;

/**
 * model: the loaded Marian; params: { key, text, crossMask? } -> { source: [{ text, start,
 * end, special }], steps, translation, encoderAttention, decoderLayers, heads } with steps
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
    beams: 1,
    // The cross-attention surgery the reader picked (translate()'s own names and checks).
    ...(params.crossMask ? { crossMask: params.crossMask } : {}),
    maxTokens: Math.min(PAGE_TRANSLATE_TOKENS, maxPositions - 1),
    signal,
    onToken: ({ id, text, crossAttention }) => {
      // </s> adds no text, but its row is a step the matrix shows: it is named.
      const special = id === eos?.id;
      const step = { id, text: special ? eos.text : text, special, crossAttention };
      steps.push(step);
      progress({ step, index: steps.length - 1, source: sourceTokens, decoderLayers, heads });
    },
  });
  return {
    key: params.key,
    translation: result.text,
    source: sourceTokens,
    steps,
    // For the snapshot of a translation: the source's own attention in the encoder.
    encoderAttention: result.encoderAttention,
    decoderLayers,
    heads,
  };
}
