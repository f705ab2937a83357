// The logit lens (ForwardOptions::lens_top_k, nostalgebraist 2020): each hidden state put
// through the model's own finish (its final norm) and LM head, of which only each position's
// top k tokens and their probabilities leave the pass.
#pragma once

#include <cstdint>

#include "attnlens/models/transformer.h"

namespace attnlens::models {

struct ForwardPass;

// Writes the lens of hidden state `state` (0: the embeddings', l + 1: layer l's output) from
// pass.x, which it leaves as it was. Nothing when the lens is off.
void lens_state(ForwardPass& pass, std::int64_t state);

// forward()'s checks of the lens: k in 1 .. min(1024, vocab), an LM head, the outputs' sizes.
void check_lens(const TransformerConfig& config, const ForwardOptions& options,
                const ForwardOutputs& outputs, std::int64_t n);

}  // namespace attnlens::models
