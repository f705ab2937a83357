// The forward and backward pass of a Gpt. Forward, as attnlens/models' forward pass computes a
// GPT-2 (same ops in the same order, so the attention weights are the same bits):
//
//   x = wte[ids] + wpe[t]
//   per layer:  a = ln_1(x);  q | k | v = a Wqkv + b  -> heads [B * H][T][d]
//               o = attention(q, k, v, causal, logits q.k / (sqrt(d) temperature)) -> merged
//               x = x + (merged Wo + bo)
//               MLP models: m = gelu(ln_2(x) Wfc + bfc);  x = x + (m Wp + bp)
//   logits = ln_f(x) wte^T (x wte^T without final_norm);  loss = mean cross-entropy of the next
//   token
//
// Backward, in reverse, with the residual stream's gradient in one buffer that every block's
// backward adds into (layer_ops.h).
#include "gpt_pass.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "attnlens/attention.h"
#include "attnlens/training/attention_backward.h"
#include "models/packing.h"
#include "parallel.h"
#include "validate.h"

namespace attnlens::training {
namespace {

using models::PackedMatrix;
using models::Role;

void require_finite_activations(const std::vector<float>& x, std::size_t begin, std::size_t n,
                                const std::string& where) {
  if (detail::largest_abs_bits(FloatView(x.data() + begin, n)) >= 0x7f800000u) {
    throw NonFiniteError(where, where +
                                    ": the activations overflowed float32 (the parameters "
                                    "are out of range: lower the learning rate)");
  }
}

}  // namespace

GptPass::GptPass(Gpt& m, const ForwardSettings& s, Span<const std::int32_t> tokens, std::int64_t b,
                 std::int64_t t, std::int64_t stride)
    : model(m),
      settings(s),
      ctx{s.kernels ? *s.kernels : default_kernel_set(),
          models::model_ops_for(s.kernels ? *s.kernels : default_kernel_set()),
          detail::resolve_threads(s.threads)},
      ws(*m.workspace_),
      batch(b),
      t_len(t),
      id_stride(stride),
      ids(tokens.data) {
  ws.resize(m.config_, b, t);
}

float* GptPass::value(std::int64_t row, Role role) const {
  const std::int64_t i = models::role_of(model.role_index_, row, role);
  return model.values_.data() + model.infos_[static_cast<std::size_t>(i)].offset;
}

float* GptPass::gradient(std::int64_t row, Role role) const {
  const std::int64_t i = models::role_of(model.role_index_, row, role);
  return model.gradients_.data() + model.infos_[static_cast<std::size_t>(i)].offset;
}

// GPT-2's attention: causal, the dot product scaled by 1/sqrt(d), over the temperature.
AttentionOptions GptPass::attention_options() const {
  AttentionOptions o;
  o.score = ScoreFunction::kDot;
  o.scale = 1.0f / std::sqrt(static_cast<float>(model.config_.width / model.config_.heads));
  o.temperature = settings.temperature;
  o.mask.causal = true;
  o.threads = settings.threads;
  o.kernels = &ctx.kernels;
  return o;
}

void GptPass::forward(MutableFloatView weights) {
  const GptConfig& c = model.config_;
  const std::int64_t r = batch * t_len, cw = c.width, heads = c.heads, d = cw / heads;
  const std::int64_t f = c.attention_only ? 0 : mlp_width_of(c);
  const std::int64_t g = c.layers;  // the model-wide row of the role index
  const auto rc = static_cast<std::size_t>(r * cw);
  const auto rf = static_cast<std::size_t>(r * f);
  embedding_forward(ids, batch, t_len, id_stride, value(g, models::kTokenEmbedding),
                    value(g, models::kPositionEmbedding), cw, ws.x_in.data());
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const auto L = static_cast<std::size_t>(l);
    float* x = ws.x_in.data() + L * rc;
    float* a = ws.ln1.data() + L * rc;
    layer_norm_forward(ctx, x, r, cw, value(l, models::kAttentionNormWeight),
                       value(l, models::kAttentionNormBias), c.layer_norm_eps, a);
    // q | k | v packed as three groups of whole panels, each its own product (as the models do).
    const PackedMatrix qkv = pack_weight(value(l, models::kQkvWeight), cw, 3 * cw, 3, ws.pack);
    const std::int64_t group = models::panels_of(cw) * models::kPanelWidth * cw;
    const float* bias = value(l, models::kQkvBias);
    for (std::int64_t part = 0; part < 3; ++part) {
      const PackedMatrix w{qkv.f32 + part * group, nullptr, cw, cw, nullptr};
      linear_forward(ctx, part == 0 ? a : nullptr, r, cw, ws.panels, w, bias + part * cw,
                     ws.qkv.data() + part * cw, 3 * cw);
    }
    float* q = ws.heads.data() + L * 3 * rc;
    for (std::int64_t part = 0; part < 3; ++part) {
      split_heads(ws.qkv.data() + part * cw, 3 * cw, batch, t_len, heads, d, q + part * rc);
    }
    AttentionOptions options = attention_options();
    const AttentionInputs inputs{{batch * heads, t_len, t_len, d, d},
                                 FloatView(q, rc),
                                 FloatView(q + rc, rc),
                                 FloatView(q + 2 * rc, rc)};
    float* att = ws.att.data() + L * rc;
    if (weights.empty()) {
      const MutableFloatView lse(ws.lse.data() + L * static_cast<std::size_t>(r * heads),
                                 static_cast<std::size_t>(r * heads));
      attention(inputs, options, AttentionOutputs{MutableFloatView(att, rc), {}, {}, lse});
    } else {
      options.strategy = Strategy::kMaterialized;
      const auto per_layer = static_cast<std::size_t>(heads * t_len * t_len);
      attention(inputs, options,
                AttentionOutputs{MutableFloatView(att, rc),
                                 MutableFloatView(weights.data + L * per_layer, per_layer),
                                 {}});
    }
    float* merged = ws.merged.data() + L * rc;
    merge_heads(att, batch, t_len, heads, d, merged, cw);
    const PackedMatrix wo = pack_weight(value(l, models::kAttentionOutWeight), cw, cw, 1, ws.pack);
    linear_forward(ctx, merged, r, cw, ws.panels, wo, value(l, models::kAttentionOutBias),
                   ws.proj.data(), cw);
    float* next = ws.x_in.data() + (L + 1) * rc;
    if (c.attention_only) {
      residual_forward(x, ws.proj.data(), r * cw, next);
    } else {
      float* mid = ws.x_mid.data() + L * rc;
      residual_forward(x, ws.proj.data(), r * cw, mid);
      float* a2 = ws.ln2.data() + L * rc;
      layer_norm_forward(ctx, mid, r, cw, value(l, models::kMlpNormWeight),
                         value(l, models::kMlpNormBias), c.layer_norm_eps, a2);
      float* pre = ws.fc_pre.data() + L * rf;
      float* act = ws.fc_act.data() + L * rf;
      const PackedMatrix wfc = pack_weight(value(l, models::kMlpInWeight), cw, f, 1, ws.pack);
      linear_forward(ctx, a2, r, cw, ws.panels, wfc, value(l, models::kMlpInBias), pre, f);
      gelu_forward(ctx, pre, r * f, act);
      const PackedMatrix wp = pack_weight(value(l, models::kMlpOutWeight), f, cw, 1, ws.pack);
      linear_forward(ctx, act, r, f, ws.panels, wp, value(l, models::kMlpOutBias), ws.proj.data(),
                     cw);
      residual_forward(mid, ws.proj.data(), r * cw, next);
    }
    require_finite_activations(ws.x_in, (L + 1) * rc, rc, "layers." + std::to_string(l));
  }
  if (!weights.empty()) return;
  const float* last = ws.x_in.data() + static_cast<std::size_t>(c.layers) * rc;
  if (c.final_norm) {
    layer_norm_forward(ctx, last, r, cw, value(g, models::kFinalNormWeight),
                       value(g, models::kFinalNormBias), c.layer_norm_eps, ws.lnf.data());
  } else {
    std::copy(last, last + rc, ws.lnf.data());
  }
  // The tied head: logits = ln_f(x) wte^T.
  const PackedMatrix head =
      pack_weight_transposed(value(g, models::kTokenEmbedding), c.vocab, cw, ws.pack);
  linear_forward(ctx, ws.lnf.data(), r, cw, ws.panels, head, nullptr, ws.logits.data(), c.vocab);
  require_finite_activations(ws.logits, 0, ws.logits.size(), "logits");
}

double GptPass::loss(bool gradient) {
  const std::int64_t rows = batch * t_len;
  const double total = cross_entropy(ctx, ws.logits.data(), batch, t_len, model.config_.vocab, ids,
                                     id_stride, 1.0f / static_cast<float>(rows), gradient);
  return total / static_cast<double>(rows);
}

}  // namespace attnlens::training
