// The forward pass (transformer.h has the semantics per architecture). Data flow of one call:
//
//   ids -> embeddings x [N, hidden] (+ LayerNorm for BERT)
//   per layer:  a = ln_1(x) (GPT) | x (BERT)
//               q, k, v = a Wq + bq, ... (token-major [N, 3 * hidden]) -> head-major [H, N, d]
//               attention() with the layer's mask -> weights [H, N, N] into the caller's buffer
//               merge heads -> o = ctx Wo + bo;  x += o (GPT) | x = ln(x + o) (BERT)
//               m = act(a2 Wi + bi) with a2 = ln_2(x) (GPT) | x (BERT);  f = m Wo2 + bo2
//               x += f (GPT) | x = ln(x + f) (BERT)
//   GPT: x = ln_f(x);  logits at the asked positions = x . E^T (BERT: after the MLM transform,
//   plus its bias), E the token embedding.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attnlens/kernels.h"
#include "attnlens/models/transformer.h"
#include "models/forward_checks.h"
#include "models/linear.h"
#include "models/ops.h"
#include "models/packing.h"
#include "models/weight_views.h"
#include "models/weights.h"
#include "parallel.h"
#include "validate.h"

namespace attnlens::models {
namespace {

// The caller's mask for layer l, or the layer's own with its window clamped to N.
MaskSpec mask_for(const Transformer& model, const ForwardOptions& opt, std::int64_t l,
                  std::int64_t n) {
  if (opt.masks.size() == 1) return opt.masks[0];
  if (!opt.masks.empty()) return opt.masks[static_cast<std::size_t>(l)];
  MaskSpec mask = model.layer_mask(l);
  if (mask.window) mask.window->before = std::min(mask.window->before, n);
  return mask;
}

// Every layer's output checked for overflow: finite weights can still multiply past float32.
void require_finite_activations(const std::vector<float>& x, const char* where) {
  if (detail::largest_abs_bits(FloatView(x)) >= 0x7f800000u) {
    throw NonFiniteError(where, std::string(where) +
                                    ": the activations overflowed float32 (the checkpoint's "
                                    "weights are out of range)");
  }
}

}  // namespace

ForwardStats Transformer::forward(const ForwardInputs& in, const ForwardOptions& opt,
                                  const ForwardOutputs& out) const {
  check_forward_inputs(*this, in, opt, out);
  const TransformerConfig& c = config_;
  const auto n = static_cast<std::int64_t>(in.token_ids.size);
  const std::int64_t h = c.hidden, heads = c.heads, d = h / heads, inter = c.intermediate;
  const bool bert = c.architecture == Architecture::kBert;
  const KernelSet& kernels = opt.kernels ? *opt.kernels : default_kernel_set();
  const ModelOps& ops = model_ops_for(kernels);
  const ActivationFn activate = c.activation == Activation::kGeluErf ? ops.gelu_erf : ops.gelu_tanh;

  const StepContext ctx{kernels, ops, detail::resolve_threads(opt.threads)};
  const Views views(*this);
  ForwardStats stats;

  // Working buffers, token-major unless named otherwise.
  std::vector<float> x(static_cast<std::size_t>(n * h)), a(x.size()), proj(x.size());
  std::vector<float> qkv(static_cast<std::size_t>(n * 3 * h));
  std::vector<float> heads_qkv(qkv.size());  // [3][H][N][d]
  std::vector<float> heads_out(x.size());    // [H][N][d]
  std::vector<float> mlp(static_cast<std::size_t>(n * inter));
  std::vector<float> row(static_cast<std::size_t>(h));
  RowPanels panels;  // the current linear layers' input, packed
  stats.scratch_bytes =
      static_cast<std::int64_t>((7 * x.size() + 2 * qkv.size() + 2 * mlp.size()) * sizeof(float));

  // Embeddings.
  const EmbeddingMatrix token_embedding = views.embedding(kTokenEmbedding);
  const EmbeddingMatrix position_embedding = views.embedding(kPositionEmbedding);
  const EmbeddingMatrix type_embedding = views.embedding(kTokenTypeEmbedding);
  for (std::int64_t i = 0; i < n; ++i) {
    float* xi = x.data() + i * h;
    const float* t = embedding_row(ops, token_embedding, in.token_ids[i], row.data());
    std::copy(t, t + h, xi);
    if (bert) {  // BertEmbeddings: (word + token type) + position
      const std::int64_t type = in.token_types.empty() ? 0 : in.token_types[i];
      const float* e = embedding_row(ops, type_embedding, type, row.data());
      for (std::int64_t j = 0; j < h; ++j) xi[j] += e[j];
    }
    const float* p = embedding_row(ops, position_embedding, i, row.data());
    for (std::int64_t j = 0; j < h; ++j) xi[j] += p[j];
  }
  if (bert) {
    const Norm norm = views.norm(c.layers, kEmbeddingNormWeight, kEmbeddingNormBias);
    ops.layer_norm(static_cast<std::size_t>(n), static_cast<std::size_t>(h), x.data(), norm.weight,
                   norm.bias, c.layer_norm_eps, x.data());
  }
  const auto save_hidden = [&](std::int64_t index) {
    if (out.hidden_states.empty()) return;
    std::copy(x.begin(), x.end(), out.hidden_states.data + index * n * h);
  };
  save_hidden(0);

  const auto layer_norm = [&](const Norm& norm, const float* src, float* dst) {
    ops.layer_norm(static_cast<std::size_t>(n), static_cast<std::size_t>(h), src, norm.weight,
                   norm.bias, c.layer_norm_eps, dst);
  };
  const auto add_into_x = [&](const std::vector<float>& y) {
    for (std::size_t j = 0; j < x.size(); ++j) x[j] += y[j];
  };
  const auto note_threads = [&](int used) { stats.threads = std::max(stats.threads, used); };

  const std::int64_t head_block = n * d;
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const LayerView w = views.layer(l);
    const float* attn_in = x.data();
    if (!bert) {
      layer_norm(w.attention_norm, x.data(), a.data());
      attn_in = a.data();
    }
    pack_rows(attn_in, n, h, panels);
    note_threads(linear(ctx, panels, w.q, w.bq, qkv.data(), 3 * h));
    note_threads(linear(ctx, panels, w.k, w.bk, qkv.data() + h, 3 * h));
    note_threads(linear(ctx, panels, w.v, w.bv, qkv.data() + 2 * h, 3 * h));
    // [N][3][H][d] -> [3][H][N][d]
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t part = 0; part < 3; ++part) {
        for (std::int64_t hd = 0; hd < heads; ++hd) {
          const float* src = qkv.data() + i * 3 * h + part * h + hd * d;
          float* dst = heads_qkv.data() + (part * heads + hd) * head_block + i * d;
          std::copy(src, src + d, dst);
        }
      }
    }
    if (l == opt.projections_layer && !out.projections.empty()) {
      std::copy(heads_qkv.begin(), heads_qkv.end(), out.projections.data);
    }
    AttentionOptions attention_options;
    attention_options.score = ScoreFunction::kDot;
    attention_options.scale = attention_scale(l);
    attention_options.mask = mask_for(*this, opt, l, n);
    attention_options.threads = opt.threads;
    attention_options.kernels = &kernels;
    attention_options.strategy = out.attention.empty() ? Strategy::kAuto : Strategy::kMaterialized;
    const std::size_t head_floats = static_cast<std::size_t>(heads * head_block);
    const AttentionInputs attention_inputs{
        {heads, n, n, d, d},
        FloatView(heads_qkv.data(), head_floats),
        FloatView(heads_qkv.data() + head_floats, head_floats),
        FloatView(heads_qkv.data() + 2 * head_floats, head_floats)};
    MutableFloatView weights;
    if (!out.attention.empty()) {
      weights = MutableFloatView(out.attention.data + l * heads * n * n,
                                 static_cast<std::size_t>(heads * n * n));
    }
    const AttentionStats attention_stats =
        attention(attention_inputs, attention_options, AttentionOutputs{heads_out, weights, {}});
    note_threads(attention_stats.threads);
    // [H][N][d] -> [N][H * d]
    for (std::int64_t hd = 0; hd < heads; ++hd) {
      for (std::int64_t i = 0; i < n; ++i) {
        const float* src = heads_out.data() + hd * head_block + i * d;
        std::copy(src, src + d, a.data() + i * h + hd * d);
      }
    }
    pack_rows(a.data(), n, h, panels);
    note_threads(linear(ctx, panels, w.attention_out, w.b_attention_out, proj.data(), h));
    add_into_x(proj);
    const float* mlp_in = x.data();
    if (bert) {
      layer_norm(w.attention_norm, x.data(), x.data());
    } else {
      layer_norm(w.mlp_norm, x.data(), a.data());
      mlp_in = a.data();
    }
    pack_rows(mlp_in, n, h, panels);
    note_threads(linear(ctx, panels, w.mlp_in, w.b_mlp_in, mlp.data(), inter));
    activate(mlp.size(), mlp.data());
    pack_rows(mlp.data(), n, inter, panels);
    note_threads(linear(ctx, panels, w.mlp_out, w.b_mlp_out, proj.data(), h));
    add_into_x(proj);
    if (bert) layer_norm(w.mlp_norm, x.data(), x.data());
    const std::string where = "layers." + std::to_string(l);
    require_finite_activations(x, where.c_str());
    if (l + 1 < c.layers || bert) save_hidden(l + 1);
  }
  if (!bert) {
    layer_norm(views.norm(c.layers, kFinalNormWeight, kFinalNormBias), x.data(), x.data());
    save_hidden(c.layers);
  }

  // Logits at the asked positions.
  const auto positions = static_cast<std::int64_t>(opt.logit_positions.size());
  if (positions == 0 || out.logits.empty()) return stats;
  std::vector<float> rows(static_cast<std::size_t>(positions * h));
  for (std::int64_t r = 0; r < positions; ++r) {
    const float* src = x.data() + opt.logit_positions[static_cast<std::size_t>(r)] * h;
    std::copy(src, src + h, rows.data() + r * h);
  }
  const float* head_bias = nullptr;
  if (bert) {  // BertPredictionHeadTransform: dense, activation, LayerNorm
    std::vector<float> transformed(rows.size());
    pack_rows(rows.data(), positions, h, panels);
    note_threads(linear(ctx, panels, views.packed(c.layers, kHeadDenseWeight),
                        views.vector(c.layers, kHeadDenseBias), transformed.data(), h));
    activate(transformed.size(), transformed.data());
    const Norm norm = views.norm(c.layers, kHeadNormWeight, kHeadNormBias);
    ops.layer_norm(static_cast<std::size_t>(positions), static_cast<std::size_t>(h),
                   transformed.data(), norm.weight, norm.bias, c.layer_norm_eps, rows.data());
    head_bias = views.vector(c.layers, kHeadBias);
  }
  note_threads(tied_head(ctx, rows.data(), positions, token_embedding, head_bias, out.logits.data));
  if (detail::largest_abs_bits(FloatView(out.logits.data, out.logits.size)) >= 0x7f800000u) {
    throw NonFiniteError("logits",
                         "logits: overflowed float32 (the checkpoint's weights are "
                         "out of range)");
  }
  if (!out.log_sum_exp.empty()) {  // the softmax's normaliser, on the registry's SIMD exp
    const auto v = static_cast<std::size_t>(c.vocab);
    std::vector<float> exps(v);
    for (std::int64_t r = 0; r < positions; ++r) {
      const float* row = out.logits.data + r * c.vocab;
      const float max = kernels.row_max(row, v);
      out.log_sum_exp[static_cast<std::size_t>(r)] =
          max + std::log(kernels.exp_sum(row, max, exps.data(), v));
    }
  }
  return stats;
}

}  // namespace attnlens::models
