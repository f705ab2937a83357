// GPT-2 (GPT2LMHeadModel): learned positions, pre-LN blocks
//   x += attn(ln_1(x));  x += mlp(ln_2(x))   (mlp: c_proj(gelu_new(c_fc(x))))
// then ln_f, and the LM head tied to the token embedding. Conv1D weights [in, out]; c_attn packs
// q | k | v along its output. Scores scaled by 1/sqrt(head_dim) (scale_attn_weights) and by
// 1/(layer + 1) (scale_attn_by_inverse_layer_idx); causal.
#include <cmath>

#include "models/units/gpt_blocks.h"
#include "models/units/unit.h"

namespace attnlens::models {
namespace {

void add_weights(const TransformerConfig& c, TableBuilder& t) {
  const std::int64_t g = c.layers, h = c.hidden;
  t.add(g, kTokenEmbedding, "token_embedding", {c.vocab, h});
  t.add(g, kPositionEmbedding, "position_embedding", {c.max_positions, h});
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    t.norm(l, kAttentionNormWeight, kAttentionNormBias, p + "attention_norm");
    t.linear(l, kQkvWeight, kQkvBias, p + "attention.qkv", h, 3 * h, /*conv1d=*/true,
             /*has_bias=*/true, /*groups=*/3);
    t.linear(l, kAttentionOutWeight, kAttentionOutBias, p + "attention.output", h, h, true);
    t.norm(l, kMlpNormWeight, kMlpNormBias, p + "mlp_norm");
    t.linear(l, kMlpInWeight, kMlpInBias, p + "mlp.input", h, c.intermediate, true);
    t.linear(l, kMlpOutWeight, kMlpOutBias, p + "mlp.output", c.intermediate, h, true);
  }
  if (c.final_norm) t.norm(g, kFinalNormWeight, kFinalNormBias, "final_norm");
}

float attention_scale(const TransformerConfig& c, std::int64_t layer) {
  float scale = c.scale_attn_weights ? inverse_sqrt_head_dim(c, layer) : 1.0f;
  if (c.scale_attn_by_inverse_layer_idx) scale /= static_cast<float>(layer + 1);
  return scale;
}

}  // namespace

const ModelUnit kGpt2Unit = {
    "gpt2",       // name
    add_weights,  // add_weights
    {{
        "decoder",        // name
        all_layers,       // layers
        MlpKind::kPlain,  // mlp
        false,            // rotary
        true,             // causal
        gpt_embed,        // embed
        pre_norm_layer,   // layer
        gpt_final_norm,   // finish
        true,             // hidden_after_finish
        causal_mask,      // layer_mask
        attention_scale,  // attention_scale
    }},
    nullptr,  // head_transform
};

}  // namespace attnlens::models
