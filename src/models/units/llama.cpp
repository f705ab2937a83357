// The llama family (LlamaForCausalLM, Qwen2ForCausalLM): no position table (rotary embeddings
// on q and k, rotate_half form), pre-RMSNorm blocks
//   x += attn(rms(x));  x += down(silu(gate(rms(x))) * up(rms(x)))
// a final RMSNorm; grouped-query attention (kv_heads); causal, or a sliding window on the layers
// local_windows names; scores scaled by 1/sqrt(head_dim); optional biases (Qwen2: q, k, v); the
// LM head tied to the token embeddings or its own lm_head.
#include "models/units/unit.h"

namespace attnlens::models {
namespace {

// nn.Linear everywhere, RMSNorms (weights only), the gated MLP, and lm_head unless it is tied
// to the token embedding.
void add_weights(const TransformerConfig& c, TableBuilder& t) {
  const std::int64_t g = c.layers, h = c.hidden, d = head_dim_of(c);
  const std::int64_t q_width = c.heads * d, kv_width = kv_heads_of(c) * d;
  t.add(g, kTokenEmbedding, "token_embedding", {c.vocab, h});
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    t.rms_norm(l, kAttentionNormWeight, p + "attention_norm");
    t.linear(l, kQueryWeight, kQueryBias, p + "attention.query", h, q_width, false, c.qkv_bias);
    t.linear(l, kKeyWeight, kKeyBias, p + "attention.key", h, kv_width, false, c.qkv_bias);
    t.linear(l, kValueWeight, kValueBias, p + "attention.value", h, kv_width, false, c.qkv_bias);
    t.linear(l, kAttentionOutWeight, kAttentionOutBias, p + "attention.output", q_width, h, false,
             c.output_bias);
    t.rms_norm(l, kMlpNormWeight, p + "mlp_norm");
    t.linear(l, kMlpGateWeight, kMlpGateBias, p + "mlp.gate", h, c.intermediate, false, c.mlp_bias);
    t.linear(l, kMlpInWeight, kMlpInBias, p + "mlp.input", h, c.intermediate, false, c.mlp_bias);
    t.linear(l, kMlpOutWeight, kMlpOutBias, p + "mlp.output", c.intermediate, h, false, c.mlp_bias);
  }
  t.rms_norm(g, kFinalNormWeight, "final_norm");
  if (!c.tie_word_embeddings) t.add(g, kLmHead, "lm_head", {c.vocab, h});
}

// Positions enter through the rotary embedding (self_attention(), the pass's tables).
void embed(ForwardPass& pass, const ForwardInputs& inputs) {
  embed_tokens(pass, inputs, /*token_types=*/false, /*positions=*/false);
}

void layer(ForwardPass& pass, std::int64_t l) {
  const LayerView w = pass.views.layer(l);
  normalize(pass, NormKind::kRmsNorm, w.attention_norm, pass.x.data(), pass.normed.data());
  self_attention(pass, w.attention, l, pass.normed.data());
  add_block_output(pass);
  normalize(pass, NormKind::kRmsNorm, w.mlp_norm, pass.x.data(), pass.normed.data());
  feed_forward(pass, MlpKind::kGated, nullptr, w, pass.normed.data());
  add_block_output(pass);
}

void finish(ForwardPass& pass) { final_norm(pass, NormKind::kRmsNorm); }

}  // namespace

const ModelUnit kLlamaUnit = {
    "llama",      // name
    add_weights,  // add_weights
    {{
        "decoder",              // name
        all_layers,             // layers
        MlpKind::kGated,        // mlp
        true,                   // rotary
        true,                   // causal
        embed,                  // embed
        layer,                  // layer
        finish,                 // finish
        true,                   // hidden_after_finish
        causal_mask,            // layer_mask
        inverse_sqrt_head_dim,  // attention_scale
    }},
    nullptr,  // head_transform
};

}  // namespace attnlens::models
