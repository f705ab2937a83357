// BERT (BertForMaskedLM, BertModel): word + position + token type embeddings and a LayerNorm,
// post-LN blocks
//   x = ln(x + attn(x));  x = ln(x + mlp(x))   (mlp: output.dense(gelu(intermediate.dense(x))))
// no mask, scores scaled by 1/sqrt(head_dim); the masked-LM head's transform (dense, gelu,
// LayerNorm) before the decoder tied to the word embeddings, plus cls.predictions.bias.
#include "models/packing.h"
#include "models/units/unit.h"

namespace attnlens::models {
namespace {

void add_weights(const TransformerConfig& c, TableBuilder& t) {
  const std::int64_t g = c.layers, h = c.hidden;
  t.add(g, kTokenEmbedding, "token_embedding", {c.vocab, h});
  t.add(g, kPositionEmbedding, "position_embedding", {c.max_positions, h});
  t.add(g, kTokenTypeEmbedding, "token_type_embedding", {c.token_types, h});
  t.norm(g, kEmbeddingNormWeight, kEmbeddingNormBias, "embedding_norm");
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    t.linear(l, kQueryWeight, kQueryBias, p + "attention.query", h, h, false, true);
    t.linear(l, kKeyWeight, kKeyBias, p + "attention.key", h, h, false, true);
    t.linear(l, kValueWeight, kValueBias, p + "attention.value", h, h, false, true);
    t.linear(l, kAttentionOutWeight, kAttentionOutBias, p + "attention.output", h, h, false);
    t.norm(l, kAttentionNormWeight, kAttentionNormBias, p + "attention_norm");
    t.linear(l, kMlpInWeight, kMlpInBias, p + "mlp.input", h, c.intermediate, false);
    t.linear(l, kMlpOutWeight, kMlpOutBias, p + "mlp.output", c.intermediate, h, false);
    t.norm(l, kMlpNormWeight, kMlpNormBias, p + "mlp_norm");
  }
  if (c.lm_head) {
    t.linear(g, kHeadDenseWeight, kHeadDenseBias, "head.dense", h, h, false);
    t.norm(g, kHeadNormWeight, kHeadNormBias, "head.norm");
    t.add(g, kHeadBias, "head.bias", {c.vocab});
  }
}

void embed(ForwardPass& pass, const ForwardInputs& inputs) {
  embed_tokens(pass, inputs, /*token_types=*/true, /*positions=*/true);
  const Norm norm = pass.views.norm(pass.config.layers, kEmbeddingNormWeight, kEmbeddingNormBias);
  normalize(pass, NormKind::kLayerNorm, norm, pass.x.data(), pass.x.data());
}

void post_norm_layer(ForwardPass& pass, std::int64_t l) {
  const LayerView w = pass.views.layer(l);
  float* x = pass.x.data();
  self_attention(pass, w.attention, l, x);
  add_block_output(pass);
  normalize(pass, NormKind::kLayerNorm, w.attention_norm, x, x);
  feed_forward(pass, MlpKind::kPlain, activation_of(pass), w, x);
  add_block_output(pass);
  normalize(pass, NormKind::kLayerNorm, w.mlp_norm, x, x);
}

// BertPredictionHeadTransform: dense, activation, LayerNorm.
const float* head_transform(ForwardPass& pass, std::vector<float>& rows, std::int64_t positions) {
  const TransformerConfig& c = pass.config;
  const std::int64_t h = pass.hidden;
  std::vector<float> transformed(rows.size());
  pack_rows(rows.data(), positions, h, pass.panels);
  pass.note_threads(linear(pass.ctx, pass.panels, pass.views.packed(c.layers, kHeadDenseWeight),
                           pass.views.vector(c.layers, kHeadDenseBias), transformed.data(), h));
  activation_of(pass)(transformed.size(), transformed.data());
  const Norm norm = pass.views.norm(c.layers, kHeadNormWeight, kHeadNormBias);
  pass.ops.layer_norm(static_cast<std::size_t>(positions), static_cast<std::size_t>(h),
                      transformed.data(), norm.weight, norm.bias, c.layer_norm_eps, rows.data());
  return pass.views.vector(c.layers, kHeadBias);
}

MaskSpec layer_mask(const TransformerConfig&, std::int64_t) { return {}; }

}  // namespace

const ModelUnit kBertUnit = {
    "bert",       // name
    add_weights,  // add_weights
    {{
        "encoder",              // name
        all_layers,             // layers
        MlpKind::kPlain,        // mlp
        false,                  // rotary
        false,                  // causal
        embed,                  // embed
        post_norm_layer,        // layer
        nullptr,                // finish
        false,                  // hidden_after_finish
        layer_mask,             // layer_mask
        inverse_sqrt_head_dim,  // attention_scale
    }},
    head_transform,  // head_transform
};

}  // namespace attnlens::models
