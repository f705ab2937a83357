// The backward pass of a Gpt (the forward is gpt_pass.cpp), from dL/dlogits that loss(true)
// left in the logits buffer:
//
//   tied head     d ln_f = dlogits wte;  d wte = dlogits^T ln_f (then + the embedding's share)
//   ln_f          dx  = ln_f'(d ln_f), or d ln_f without it (dx: the residual stream's gradient)
//   per layer, last first:
//     MLP models  d act = dx Wp^T, d pre = gelu'(d act), d ln_2 = d pre Wfc^T, dx += ln_2'(.)
//     attention   d merged = dx Wo^T -> d att heads -> attention_backward() -> dq, dk, dv
//                 -> d qkv (token-major) -> d ln_1 = d qkv Wqkv^T, dx += ln_1'(.)
//   embeddings    d wte[ids] += dx, d wpe[t] += dx
#include <algorithm>
#include <cmath>

#include "attnlens/attention.h"
#include "attnlens/training/attention_backward.h"
#include "gpt_pass.h"

namespace attnlens::training {
using models::PackedMatrix;

void GptPass::backward() {
  const GptConfig& c = model.config_;
  const std::int64_t r = batch * t_len, cw = c.width, heads = c.heads, d = cw / heads;
  const std::int64_t f = c.attention_only ? 0 : mlp_width_of(c);
  const std::int64_t g = c.layers;
  const auto rc = static_cast<std::size_t>(r * cw);
  const auto rf = static_cast<std::size_t>(r * f);
  std::fill(model.gradients_.begin(), model.gradients_.end(), 0.0f);
  float* dx = ws.residual_grad.data();
  float* scratch = ws.proj.data();  // [R][max(3C, F)]
  float* d_ln = ws.qkv.data();      // [R][C] (qkv's buffer is free in the backward)

  // The tied head, then ln_f.
  const float* dlogits = ws.logits.data();
  const float* wte = value(g, models::kTokenEmbedding);
  linear_forward(ctx, dlogits, r, c.vocab, ws.panels, pack_weight(wte, c.vocab, cw, 1, ws.pack),
                 nullptr, d_ln, cw);
  transposed_product(ctx, dlogits, r, c.vocab, ws.lnf.data(), cw,
                     gradient(g, models::kTokenEmbedding));
  if (c.final_norm) {
    std::fill(dx, dx + rc, 0.0f);
    layer_norm_backward(ctx, d_ln, ws.x_in.data() + static_cast<std::size_t>(c.layers) * rc, r, cw,
                        value(g, models::kFinalNormWeight), c.layer_norm_eps, dx,
                        gradient(g, models::kFinalNormWeight), gradient(g, models::kFinalNormBias));
  } else {
    std::copy(d_ln, d_ln + rc, dx);
  }

  for (std::int64_t l = c.layers - 1; l >= 0; --l) {
    const auto L = static_cast<std::size_t>(l);
    if (!c.attention_only) {
      float* d_act = scratch;
      const PackedMatrix wp_t =
          pack_weight_transposed(value(l, models::kMlpOutWeight), f, cw, ws.pack);
      linear_backward(ctx, dx, r, cw, ws.fc_act.data() + L * rf, f, wp_t, d_act,
                      gradient(l, models::kMlpOutWeight), gradient(l, models::kMlpOutBias));
      gelu_backward(d_act, ws.fc_pre.data() + L * rf, r * f, d_act);
      const PackedMatrix wfc_t =
          pack_weight_transposed(value(l, models::kMlpInWeight), cw, f, ws.pack);
      linear_backward(ctx, d_act, r, f, ws.ln2.data() + L * rc, cw, wfc_t, d_ln,
                      gradient(l, models::kMlpInWeight), gradient(l, models::kMlpInBias));
      layer_norm_backward(ctx, d_ln, ws.x_mid.data() + L * rc, r, cw,
                          value(l, models::kMlpNormWeight), c.layer_norm_eps, dx,
                          gradient(l, models::kMlpNormWeight), gradient(l, models::kMlpNormBias));
    }
    // The attention block: its output projection, attention itself, then q | k | v.
    float* d_merged = d_ln;
    const PackedMatrix wo_t =
        pack_weight_transposed(value(l, models::kAttentionOutWeight), cw, cw, ws.pack);
    linear_backward(ctx, dx, r, cw, ws.merged.data() + L * rc, cw, wo_t, d_merged,
                    gradient(l, models::kAttentionOutWeight),
                    gradient(l, models::kAttentionOutBias));
    float* d_att = scratch;  // [B * H][T][d]
    split_heads(d_merged, cw, batch, t_len, heads, d, d_att);
    const float* q = ws.heads.data() + L * 3 * rc;
    const auto lse_size = static_cast<std::size_t>(r * heads);
    const AttentionBackwardInputs inputs{{{batch * heads, t_len, t_len, d, d},
                                          FloatView(q, rc),
                                          FloatView(q + rc, rc),
                                          FloatView(q + 2 * rc, rc)},
                                         FloatView(ws.att.data() + L * rc, rc),
                                         FloatView(ws.lse.data() + L * lse_size, lse_size),
                                         FloatView(d_att, rc)};
    float* dq = ws.grad_heads.data();
    attention_backward(inputs, attention_options(),
                       {MutableFloatView(dq, rc), MutableFloatView(dq + rc, rc),
                        MutableFloatView(dq + 2 * rc, rc)});
    float* d_qkv = scratch;  // [R][3C]: d_att is no longer needed
    for (std::int64_t part = 0; part < 3; ++part) {
      merge_heads(dq + part * rc, batch, t_len, heads, d, d_qkv + part * cw, 3 * cw);
    }
    const PackedMatrix wqkv_t =
        pack_weight_transposed(value(l, models::kQkvWeight), cw, 3 * cw, ws.pack);
    linear_backward(ctx, d_qkv, r, 3 * cw, ws.ln1.data() + L * rc, cw, wqkv_t, d_ln,
                    gradient(l, models::kQkvWeight), gradient(l, models::kQkvBias));
    layer_norm_backward(ctx, d_ln, ws.x_in.data() + L * rc, r, cw,
                        value(l, models::kAttentionNormWeight), c.layer_norm_eps, dx,
                        gradient(l, models::kAttentionNormWeight),
                        gradient(l, models::kAttentionNormBias));
  }
  embedding_backward(dx, ids, batch, t_len, id_stride, cw, gradient(g, models::kTokenEmbedding),
                     gradient(g, models::kPositionEmbedding));
}

}  // namespace attnlens::training
