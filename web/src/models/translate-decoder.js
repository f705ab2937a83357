// The decoder translate() steps (translate.js, beam-search.js): one source, its encoder run once
// into a set of KV caches in wasm memory (one per beam), then each step runs only the newest
// target token of a beam against that beam's cache and returns what the token's step saw: its
// logits, its row of the decoder's self-attention [decoder layers, heads, past + 1] and of the
// cross-attention [decoder layers, heads, source tokens]. Nothing of the prefix is re-run: the
// cache holds every decoder layer's keys and values and the cross keys and values the first
// call computed from the encoder's output.

/**
 * @param {{ core, shape, generation, threads }} model
 * @param {number[]} sourceIds the source with </s>
 * @param {{ maxLength: number, beams: number, crossMask: { name, radius } }} opts
 */
export function createDecoder(model, sourceIds, opts) {
  const { core, shape, generation, threads } = model;
  // Every position a beam can feed: the start token .. the one before the last allowed.
  const caches = core.createCaches(Math.max(1, opts.maxLength - 1), opts.beams);
  const lengths = new Array(opts.beams).fill(0);
  const stats = { encoderRuns: 0, decoderTokens: 0 };
  let encoderAttention;
  return {
    generation,
    vocab: shape.vocab,
    maxLength: opts.maxLength,
    stats,
    get encoderAttention() {
      return encoderAttention;
    },
    /**
     * Runs the last token of `ids` (beam `slot`'s target so far, which its cache holds but for
     * that token) and returns { logits (a copy, before any processor), selfAttention,
     * crossAttention } of that position.
     */
    step(slot, ids) {
      const past = lengths[slot];
      if (past !== ids.length - 1) {
        throw new Error(`attnlens: beam ${slot} holds ${past} positions, not ${ids.length - 1}`);
      }
      const out = core.forwardEncoderDecoder({
        sourceIds,
        targetIds: [ids.at(-1)],
        logitPositions: [0],
        threads,
        shape,
        wantAttention: true,
        wantEncoderAttention: past === 0 && encoderAttention === undefined,
        cache: { caches, slot },
        past,
        crossMask: opts.crossMask,
      });
      lengths[slot] = past + 1;
      if (out.encoderTokens > 0) stats.encoderRuns++;
      stats.decoderTokens++;
      if (out.encoderAttention) encoderAttention = out.encoderAttention;
      return {
        logits: out.logits,
        selfAttention: out.decoderAttention,
        crossAttention: out.crossAttention,
      };
    },
    /** Beam k continues from beam parents[k]: its cache takes that beam's state. */
    reorder(parents) {
      caches.reorder(parents);
      const before = [...lengths];
      parents.forEach((p, k) => (lengths[k] = before[p]));
    },
    dispose() {
      caches.destroy();
    },
    // The logits processors the config asks for, in place on one row: bad words (a banned
    // sequence's last token where the target ends with the rest), then EOS forced at the last
    // position max_length allows.
    process(scores, targetIds) {
      for (const words of generation.badWordsIds) {
        const prefix = words.slice(0, -1);
        const at = targetIds.length - prefix.length;
        if (at >= 0 && prefix.every((w, k) => targetIds[at + k] === w)) {
          scores[words.at(-1)] = -Infinity;
        }
      }
      const forced = generation.forcedEosTokenId;
      if (forced !== null && targetIds.length === opts.maxLength - 1) {
        const keep = scores[forced];
        scores.fill(-Infinity);
        scores[forced] = keep;
      }
      return scores;
    },
  };
}
