// Head ablation (ForwardOptions::ablations): a head's attention output replaced inside the
// shared self-attention block, so every architecture's layers have it.
#pragma once

#include <cstdint>

#include "attnlens/models/transformer.h"

namespace attnlens::models {

struct ForwardPass;

// Replaces the ablated heads of layer l in the pass's heads_out [H][N][d], after attention and
// before the heads are merged and projected: what "the head's output removed before the output
// projection" means in the transformers library's modules (the o_proj / c_proj input).
void ablate_heads(ForwardPass& pass, std::int64_t l);

// forward()'s checks of the ablations: layer and head inside the model, each (layer, head) once,
// mean ablation only over a whole text (no KV cache).
void check_ablations(const TransformerConfig& config, const ForwardOptions& options);

}  // namespace attnlens::models
