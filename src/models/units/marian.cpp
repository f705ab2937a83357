// Marian (MarianMTModel, Helsinki-NLP/opus-mt-*): an encoder stack and a decoder stack of
// post-LN layers, as the transformers library's modeling_marian.py computes them:
//   both:     x = E[id] * sqrt(hidden) (scale_embedding) + P[position]   (P static sinusoids)
//   encoder:  x = ln(x + self_attn(x));  x = ln(x + fc2(act(fc1(x))))
//   decoder:  x = ln(x + causal_self_attn(x));  x = ln(x + cross_attn(x, encoder));
//             x = ln(x + fc2(act(fc1(x))))
// act is config.json's activation (SiLU, "swish", in every opus-mt model); no final norm on
// either stack; logits = x . E^T + final_logits_bias (the shared embeddings are the LM head).
// Scores scaled by 1/sqrt(head_dim). The weight table's rows 0 .. encoder_layers-1 are the
// encoder's layers, the rest the decoder's (their cross-attention in the kCross* roles).
#include <cmath>
#include <utility>
#include <vector>

#include "models/cross_mask.h"
#include "models/units/unit.h"

namespace attnlens::models {
namespace {

void add_attention(TableBuilder& t, std::int64_t l, const std::string& name, std::int64_t h,
                   bool cross) {
  const Role q = cross ? kCrossQueryWeight : kQueryWeight;
  const Role qb = cross ? kCrossQueryBias : kQueryBias;
  t.linear(l, q, qb, name + ".query", h, h, false);
  t.linear(l, cross ? kCrossKeyWeight : kKeyWeight, cross ? kCrossKeyBias : kKeyBias, name + ".key",
           h, h, false);
  t.linear(l, cross ? kCrossValueWeight : kValueWeight, cross ? kCrossValueBias : kValueBias,
           name + ".value", h, h, false);
  t.linear(l, cross ? kCrossOutWeight : kAttentionOutWeight,
           cross ? kCrossOutBias : kAttentionOutBias, name + ".output", h, h, false);
  t.norm(l, cross ? kCrossNormWeight : kAttentionNormWeight,
         cross ? kCrossNormBias : kAttentionNormBias, name + "_norm");
}

void add_weights(const TransformerConfig& c, TableBuilder& t) {
  const std::int64_t g = c.layers, h = c.hidden;
  t.add(g, kTokenEmbedding, "token_embedding", {c.vocab, h});
  t.add(g, kPositionEmbedding, "position_embedding", {c.max_positions, h});
  t.add(g, kHeadBias, "final_logits_bias", {c.vocab});
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const bool decoder = l >= c.encoder_layers;
    const std::string p = "layers." + std::to_string(l) + ".";
    add_attention(t, l, p + "attention", h, false);
    if (decoder) add_attention(t, l, p + "cross_attention", h, true);
    t.linear(l, kMlpInWeight, kMlpInBias, p + "mlp.input", h, c.intermediate, false);
    t.linear(l, kMlpOutWeight, kMlpOutBias, p + "mlp.output", c.intermediate, h, false);
    t.norm(l, kMlpNormWeight, kMlpNormBias, p + "mlp_norm");
  }
}

LayerRange encoder_layers(const TransformerConfig& c) { return {0, c.encoder_layers}; }
LayerRange decoder_layers(const TransformerConfig& c) {
  return {c.encoder_layers, c.layers - c.encoder_layers};
}

// MarianSinusoidalPositionalEmbedding is a fixed table the caller writes as position_embedding;
// row i is position pass.past + i (after a KV cache's positions).
void embed(ForwardPass& pass, const ForwardInputs& inputs) {
  const std::int64_t h = pass.hidden;
  const float scale = pass.config.scale_embedding ? std::sqrt(static_cast<float>(h)) : 1.0f;
  const EmbeddingMatrix tokens = pass.views.embedding(kTokenEmbedding);
  const EmbeddingMatrix positions = pass.views.embedding(kPositionEmbedding);
  std::vector<float> position_row(static_cast<std::size_t>(h));
  for (std::int64_t i = 0; i < pass.n; ++i) {
    float* xi = pass.x.data() + i * h;
    const float* t = embedding_row(pass.ops, tokens, inputs.token_ids[i], pass.row.data());
    const float* e = embedding_row(pass.ops, positions, pass.past + i, position_row.data());
    for (std::int64_t j = 0; j < h; ++j) xi[j] = t[j] * scale + e[j];
  }
}

// x = ln(x + fc2(act(fc1(x)))), act SiLU in every opus-mt model.
void post_norm_mlp(ForwardPass& pass, const LayerView& w) {
  float* x = pass.x.data();
  feed_forward(pass, MlpKind::kPlain, activation_of(pass), w, x);
  add_block_output(pass);
  normalize(pass, NormKind::kLayerNorm, w.mlp_norm, x, x);
}

void encoder_layer(ForwardPass& pass, std::int64_t l) {
  const LayerView w = pass.views.layer(l);
  float* x = pass.x.data();
  self_attention(pass, w.attention, l, x);
  add_block_output(pass);
  normalize(pass, NormKind::kLayerNorm, w.attention_norm, x, x);
  post_norm_mlp(pass, w);
}

void decoder_layer(ForwardPass& pass, std::int64_t l) {
  const LayerView w = pass.views.layer(l);
  float* x = pass.x.data();
  self_attention(pass, w.attention, l, x);
  add_block_output(pass);
  normalize(pass, NormKind::kLayerNorm, w.attention_norm, x, x);
  // The cross-attention weights of this decoder layer: [H, T, N] at its place in the output.
  const MutableFloatView& all = pass.outputs.cross_attention;
  MutableFloatView weights;
  if (!all.empty()) {
    const std::int64_t size = pass.heads * pass.n * pass.encoder.n;
    weights =
        MutableFloatView(all.data + (l - pass.first_layer) * size, static_cast<std::size_t>(size));
  }
  // The caller's surgery on it (ForwardOptions::cross_mask), full attention by default.
  std::vector<unsigned char> flags;
  CrossAttentionMask cross =
      cross_attention_mask(pass.options.cross_mask, pass.past, pass.n, pass.encoder.n,
                           inverse_sqrt_head_dim(pass.config, l), flags);
  cross_attention(pass, w.cross, l, cross.scale, std::move(cross.mask), x, weights);
  add_block_output(pass);
  normalize(pass, NormKind::kLayerNorm, w.cross_norm, x, x);
  post_norm_mlp(pass, w);
}

MaskSpec no_mask(const TransformerConfig&, std::int64_t) { return {}; }

// The LM head reads the decoder's rows as they are; final_logits_bias is added to the logits.
const float* head_transform(ForwardPass& pass, std::vector<float>&, std::int64_t) {
  return pass.views.vector(pass.config.layers, kHeadBias);
}

}  // namespace

const ModelUnit kMarianUnit = {
    "marian",     // name
    add_weights,  // add_weights
    {
        {
            "encoder",              // name
            encoder_layers,         // layers
            MlpKind::kPlain,        // mlp
            false,                  // rotary
            false,                  // causal
            embed,                  // embed
            encoder_layer,          // layer
            nullptr,                // finish
            false,                  // hidden_after_finish
            no_mask,                // layer_mask
            inverse_sqrt_head_dim,  // attention_scale
        },
        {
            "decoder",              // name
            decoder_layers,         // layers
            MlpKind::kPlain,        // mlp
            false,                  // rotary
            true,                   // causal
            embed,                  // embed
            decoder_layer,          // layer
            nullptr,                // finish
            false,                  // hidden_after_finish
            causal_mask,            // layer_mask
            inverse_sqrt_head_dim,  // attention_scale
        },
    },
    head_transform,  // head_transform
};

}  // namespace attnlens::models
