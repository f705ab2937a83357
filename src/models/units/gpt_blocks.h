// What GPT-2 and GPT-Neo share (units/gpt2.cpp, units/gpt_neo.cpp): learned positions added to
// the token embeddings, pre-LN blocks with a plain MLP, and ln_f.
#pragma once

#include "models/blocks.h"

namespace attnlens::models {

// x = wte[ids] + wpe[0..N-1].
void gpt_embed(ForwardPass& pass, const ForwardInputs& inputs);
// x += attn(ln_1(x));  x += mlp(ln_2(x)).
void pre_norm_layer(ForwardPass& pass, std::int64_t l);
// x = ln_f(x).
void gpt_final_norm(ForwardPass& pass);

}  // namespace attnlens::models
