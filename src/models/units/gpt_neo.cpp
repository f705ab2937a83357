// GPT-Neo (GPTNeoForCausalLM): GPT-2's blocks (units/gpt_blocks.h) over nn.Linear weights, q, k
// and v without biases, scores NOT scaled by 1/sqrt(head_dim); each layer global (causal) or
// local (query i sees keys i - window_size < j <= i, local_windows).
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
    t.linear(l, kQueryWeight, kQueryBias, p + "attention.query", h, h, false, false);
    t.linear(l, kKeyWeight, kKeyBias, p + "attention.key", h, h, false, false);
    t.linear(l, kValueWeight, kValueBias, p + "attention.value", h, h, false, false);
    t.linear(l, kAttentionOutWeight, kAttentionOutBias, p + "attention.output", h, h, false);
    t.norm(l, kMlpNormWeight, kMlpNormBias, p + "mlp_norm");
    t.linear(l, kMlpInWeight, kMlpInBias, p + "mlp.input", h, c.intermediate, false);
    t.linear(l, kMlpOutWeight, kMlpOutBias, p + "mlp.output", c.intermediate, h, false);
  }
  if (c.final_norm) t.norm(g, kFinalNormWeight, kFinalNormBias, "final_norm");
}

float attention_scale(const TransformerConfig&, std::int64_t) { return 1.0f; }

}  // namespace

const ModelUnit kGptNeoUnit = {
    "gpt_neo",    // name
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
