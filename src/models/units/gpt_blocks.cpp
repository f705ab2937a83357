// GPT-2's and GPT-Neo's shared embeddings, layer and final norm (gpt_blocks.h).
#include "models/units/gpt_blocks.h"

#include "models/units/unit.h"

namespace attnlens::models {

void gpt_embed(ForwardPass& pass, const ForwardInputs& inputs) {
  embed_tokens(pass, inputs, /*token_types=*/false, /*positions=*/true);
}

void pre_norm_layer(ForwardPass& pass, std::int64_t l) {
  const LayerView w = pass.views.layer(l);
  normalize(pass, NormKind::kLayerNorm, w.attention_norm, pass.x.data(), pass.normed.data());
  self_attention(pass, w.attention, l, pass.normed.data());
  add_block_output(pass);
  normalize(pass, NormKind::kLayerNorm, w.mlp_norm, pass.x.data(), pass.normed.data());
  feed_forward(pass, MlpKind::kPlain, activation_of(pass), w, pass.normed.data());
  add_block_output(pass);
}

void gpt_final_norm(ForwardPass& pass) { final_norm(pass, NormKind::kLayerNorm); }

}  // namespace attnlens::models
