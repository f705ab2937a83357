// The forward pass (transformer.h has the semantics per architecture). Data flow of one call:
//
//   ids -> embeddings x [N, hidden] (+ positions for GPT and BERT, + a LayerNorm for BERT)
//   per layer:  a = norm_1(x) (GPT: LayerNorm, llama: RMSNorm) | x (BERT)
//               q, k, v = a Wq + bq, ... (token-major [N, q | k | v]) -> head-major [H, N, d]
//               llama: rotary embedding of every q and k head
//               attention() with the layer's mask -> weights [H, N, N] into the caller's buffer
//               merge heads -> o = ctx Wo + bo;  x += o (GPT, llama) | x = ln(x + o) (BERT)
//               a2 = norm_2(x) (GPT, llama) | x (BERT)
//               m = act(a2 Wi + bi) | llama: silu(a2 Wg + bg) * (a2 Wi + bi);  f = m Wo2 + bo2
//               x += f (GPT, llama) | x = ln(x + f) (BERT)
//   GPT, llama: x = norm_f(x);  logits at the asked positions = x . E^T (BERT: after the MLM
//   transform, plus its bias), E the token embedding or llama's own lm_head.
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
#include "models/rotary.h"
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

// q, k and v as [3][H][N][d] for the caller, grouped K/V heads repeated per query head (head h
// reads K/V head h / (H / KV), as attention() does), so the layout never depends on kv_heads.
void copy_projections(std::int64_t heads, std::int64_t kv_heads, std::int64_t head_block,
                      const float* qkv, float* out) {
  const std::int64_t group = heads / kv_heads;
  std::copy(qkv, qkv + heads * head_block, out);
  for (std::int64_t part = 1; part <= 2; ++part) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const float* src = qkv + (heads + (part - 1) * kv_heads + h / group) * head_block;
      std::copy(src, src + head_block, out + (part * heads + h) * head_block);
    }
  }
}

// One layer's attention over head-major q [H][N][d], then k and v [KV][N][d], in one
// attention() call: AttentionShape::kv_heads makes query head h read K/V head h / (H / KV), the
// order the transformers library's repeat_kv gives, with K and V never copied per query head.
int attend_layer(std::int64_t heads, std::int64_t kv_heads, std::int64_t n, std::int64_t d,
                 const float* qkv, const AttentionOptions& options, float* output,
                 MutableFloatView weights) {
  const auto floats = [&](std::int64_t head_count) {
    return static_cast<std::size_t>(head_count * n * d);
  };
  const float* k = qkv + floats(heads);
  const float* v = k + floats(kv_heads);
  const AttentionInputs inputs{{heads, n, n, d, d, kv_heads},
                               FloatView(qkv, floats(heads)),
                               FloatView(k, floats(kv_heads)),
                               FloatView(v, floats(kv_heads))};
  const MutableFloatView out(output, floats(heads));
  return attention(inputs, options, AttentionOutputs{out, weights, {}}).threads;
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
  const std::int64_t h = c.hidden, heads = c.heads, d = head_dim_of(c), inter = c.intermediate;
  const std::int64_t q_width = heads * d, kv_width = kv_heads_of(c) * d;
  const std::int64_t qkv_width = q_width + 2 * kv_width;
  const bool bert = c.architecture == Architecture::kBert;
  const bool llama = c.architecture == Architecture::kLlama;
  const KernelSet& kernels = opt.kernels ? *opt.kernels : default_kernel_set();
  const ModelOps& ops = model_ops_for(kernels);
  const ActivationFn activate = c.activation == Activation::kGeluErf ? ops.gelu_erf : ops.gelu_tanh;

  const StepContext ctx{kernels, ops, detail::resolve_threads(opt.threads)};
  const Views views(*this);
  ForwardStats stats;

  // Working buffers, token-major unless named otherwise.
  std::vector<float> x(static_cast<std::size_t>(n * h)), a(x.size()), proj(x.size());
  std::vector<float> context(static_cast<std::size_t>(n * q_width));  // merged heads
  std::vector<float> qkv(static_cast<std::size_t>(n * qkv_width));
  std::vector<float> heads_qkv(qkv.size());      // q [H][N][d], then k and v [KV][N][d]
  std::vector<float> heads_out(context.size());  // [H][N][d]
  std::vector<float> mlp(static_cast<std::size_t>(n * inter));
  std::vector<float> gate(llama ? mlp.size() : 0);
  std::vector<float> row(static_cast<std::size_t>(h));
  std::vector<float> cos, sin;  // llama: the rotary tables of positions 0..N-1
  if (llama) rotary_tables(inverse_frequencies(c.rotary, d), n, cos, sin);
  RowPanels panels;  // the current linear layers' input, packed
  stats.scratch_bytes =
      static_cast<std::int64_t>((5 * x.size() + 3 * context.size() + 2 * qkv.size() +
                                 2 * mlp.size() + gate.size() + cos.size() + sin.size()) *
                                sizeof(float));

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
    if (llama) continue;  // positions enter through the rotary embedding instead
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

  const auto normalize = [&](const Norm& norm, const float* src, float* dst) {
    const auto rows = static_cast<std::size_t>(n), width = static_cast<std::size_t>(h);
    if (llama) {
      ops.rms_norm(rows, width, src, norm.weight, c.layer_norm_eps, dst);
    } else {
      ops.layer_norm(rows, width, src, norm.weight, norm.bias, c.layer_norm_eps, dst);
    }
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
      normalize(w.attention_norm, x.data(), a.data());
      attn_in = a.data();
    }
    pack_rows(attn_in, n, h, panels);
    note_threads(linear(ctx, panels, w.q, w.bq, qkv.data(), qkv_width));
    note_threads(linear(ctx, panels, w.k, w.bk, qkv.data() + q_width, qkv_width));
    note_threads(linear(ctx, panels, w.v, w.bv, qkv.data() + q_width + kv_width, qkv_width));
    // [N][q | k | v] -> q [H][N][d], k [KV][N][d], v [KV][N][d]: head g of the row's columns
    // starting at g * d becomes row i of head g's block.
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t g = 0; g < qkv_width / d; ++g) {
        const float* src = qkv.data() + i * qkv_width + g * d;
        std::copy(src, src + d, heads_qkv.data() + g * head_block + i * d);
      }
    }
    if (llama) {  // q and k heads, one after the other, each row i at position i
      for (std::int64_t g = 0; g < (q_width + kv_width) / d; ++g) {
        ops.rotary(static_cast<std::size_t>(n), static_cast<std::size_t>(d / 2),
                   heads_qkv.data() + g * head_block, static_cast<std::size_t>(d), cos.data(),
                   sin.data());
      }
    }
    if (l == opt.projections_layer && !out.projections.empty()) {
      copy_projections(heads, kv_heads_of(c), head_block, heads_qkv.data(), out.projections.data);
    }
    AttentionOptions attention_options;
    attention_options.score = ScoreFunction::kDot;
    attention_options.scale = attention_scale(l);
    attention_options.mask = mask_for(*this, opt, l, n);
    attention_options.threads = opt.threads;
    attention_options.kernels = &kernels;
    attention_options.strategy = out.attention.empty() ? Strategy::kAuto : Strategy::kMaterialized;
    MutableFloatView weights;
    if (!out.attention.empty()) {
      weights = MutableFloatView(out.attention.data + l * heads * n * n,
                                 static_cast<std::size_t>(heads * n * n));
    }
    note_threads(attend_layer(heads, kv_heads_of(c), n, d, heads_qkv.data(), attention_options,
                              heads_out.data(), weights));
    // [H][N][d] -> [N][H * d]
    for (std::int64_t hd = 0; hd < heads; ++hd) {
      for (std::int64_t i = 0; i < n; ++i) {
        const float* src = heads_out.data() + hd * head_block + i * d;
        std::copy(src, src + d, context.data() + i * q_width + hd * d);
      }
    }
    pack_rows(context.data(), n, q_width, panels);
    note_threads(linear(ctx, panels, w.attention_out, w.b_attention_out, proj.data(), h));
    add_into_x(proj);
    const float* mlp_in = x.data();
    if (bert) {
      normalize(w.attention_norm, x.data(), x.data());
    } else {
      normalize(w.mlp_norm, x.data(), a.data());
      mlp_in = a.data();
    }
    pack_rows(mlp_in, n, h, panels);
    note_threads(linear(ctx, panels, w.mlp_in, w.b_mlp_in, mlp.data(), inter));
    if (llama) {  // down(silu(gate(a2)) * up(a2))
      note_threads(linear(ctx, panels, w.mlp_gate, w.b_mlp_gate, gate.data(), inter));
      ops.silu_gate(gate.size(), gate.data(), mlp.data());
      pack_rows(gate.data(), n, inter, panels);
    } else {
      activate(mlp.size(), mlp.data());
      pack_rows(mlp.data(), n, inter, panels);
    }
    note_threads(linear(ctx, panels, w.mlp_out, w.b_mlp_out, proj.data(), h));
    add_into_x(proj);
    if (bert) normalize(w.mlp_norm, x.data(), x.data());
    const std::string where = "layers." + std::to_string(l);
    require_finite_activations(x, where.c_str());
    if (l + 1 < c.layers || bert) save_hidden(l + 1);
  }
  if (!bert) {
    if (c.final_norm) {
      normalize(views.norm(c.layers, kFinalNormWeight, kFinalNormBias), x.data(), x.data());
    }
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
  // llama's own lm_head [vocab, hidden] is read like the embedding it would otherwise be tied to.
  const EmbeddingMatrix lm_head = views.embedding(kLmHead);
  note_threads(tied_head(ctx, rows.data(), positions, lm_head.rows > 0 ? lm_head : token_embedding,
                         head_bias, out.logits.data));
  if (detail::largest_abs_bits(FloatView(out.logits.data, out.logits.size)) >= 0x7f800000u) {
    throw NonFiniteError("logits",
                         "logits: overflowed float32 (the checkpoint's weights are "
                         "out of range)");
  }
  if (!out.log_sum_exp.empty()) {  // the softmax's normaliser, on the registry's SIMD exp
    const auto v = static_cast<std::size_t>(c.vocab);
    std::vector<float> exps(v);
    for (std::int64_t r = 0; r < positions; ++r) {
      const float* logits_row = out.logits.data + r * c.vocab;
      const float max = kernels.row_max(logits_row, v);
      out.log_sum_exp[static_cast<std::size_t>(r)] =
          max + std::log(kernels.exp_sum(logits_row, max, exps.data(), v));
    }
  }
  return stats;
}

}  // namespace attnlens::models
