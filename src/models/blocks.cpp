// The shared blocks of the model units (blocks.h). Each computes exactly what the transformers
// library's modules do, in the same order, whichever unit calls it.
#include "models/blocks.h"

#include <algorithm>

#include "models/ablation.h"
#include "models/packing.h"
#include "models/rotary.h"
#include "models/units/unit.h"
#include "parallel.h"

namespace attnlens::models {
namespace {

// The caller's mask for layer l, or the layer's own with its window clamped to the keys; the
// queries follow the cached positions.
MaskSpec mask_for(const ForwardPass& p, std::int64_t l) {
  const ForwardOptions& opt = p.options;
  if (opt.masks.size() == 1) return opt.masks[0];
  if (!opt.masks.empty()) return opt.masks[static_cast<std::size_t>(l)];
  MaskSpec mask = p.stack.layer_mask(p.config, l);
  if (mask.window) mask.window->before = std::min(mask.window->before, p.key_len);
  mask.query_offset = p.past;
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

// One layer's keys and values, head-major [KV][capacity][d]: the pass's own (capacity N) or a
// KV cache's.
struct KeysValues {
  const float* k;
  const float* v;
  std::int64_t capacity;
};

// One layer's attention of head-major q [H][N][d] over `kv` (key_len keys) in one attention()
// call: AttentionShape::kv_heads makes query head h read K/V head h / (H / KV), the order the
// transformers library's repeat_kv gives, with K and V never copied per query head.
int attend_layer(const ForwardPass& p, const float* q, const KeysValues& kv,
                 const AttentionOptions& options, float* output, MutableFloatView weights) {
  const std::int64_t d = p.head_dim;
  const auto q_floats = static_cast<std::size_t>(p.heads * p.n * d);
  const auto kv_floats = static_cast<std::size_t>(p.kv_heads * kv.capacity * d);
  AttentionInputs inputs{{p.heads, p.n, p.key_len, d, d, p.kv_heads},
                         FloatView(q, q_floats),
                         FloatView(kv.k, kv_floats),
                         FloatView(kv.v, kv_floats)};
  inputs.kv_capacity = kv.capacity;
  const MutableFloatView out(output, q_floats);
  return attention(inputs, options, AttentionOutputs{out, weights, {}}).threads;
}

// Appends the pass's new keys and values (head-major in p.heads_qkv, after q) to layer l's
// cache rows past .. past + N - 1, and returns the cache's keys and values.
KeysValues append_to_cache(ForwardPass& p, std::int64_t l) {
  KvCache& cache = *p.cache;
  const std::int64_t layer = l - p.first_layer, d = p.head_dim, cap = cache.capacity();
  float* keys = cache.keys(layer);
  float* values = cache.values(layer);
  const float* new_k = p.heads_qkv.data() + p.heads * p.head_block;
  const float* new_v = new_k + p.kv_heads * p.head_block;
  for (std::int64_t g = 0; g < p.kv_heads; ++g) {
    const std::int64_t at = (g * cap + p.past) * d;
    std::copy(new_k + g * p.head_block, new_k + (g + 1) * p.head_block, keys + at);
    std::copy(new_v + g * p.head_block, new_v + (g + 1) * p.head_block, values + at);
  }
  return {keys, values, cap};
}

std::size_t floats(std::int64_t count) { return static_cast<std::size_t>(count); }

// Rows [n][ld] holding `groups` heads of d columns each -> head-major [groups][n][d]: head g of
// row i's columns starting at g * d becomes row i of head g's block.
void split_heads(const float* rows, std::int64_t n, std::int64_t ld, std::int64_t groups,
                 std::int64_t d, float* heads) {
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t g = 0; g < groups; ++g) {
      const float* src = rows + i * ld + g * d;
      std::copy(src, src + d, heads + (g * n + i) * d);
    }
  }
}

// p.heads_out [H][N][d] -> p.context [N][H * d], then the output projection into p.block_out.
void merge_heads_and_project(ForwardPass& p, const AttentionView& w) {
  const std::int64_t n = p.n, d = p.head_dim;
  for (std::int64_t hd = 0; hd < p.heads; ++hd) {
    for (std::int64_t i = 0; i < n; ++i) {
      const float* src = p.heads_out.data() + (hd * n + i) * d;
      std::copy(src, src + d, p.context.data() + i * p.q_width + hd * d);
    }
  }
  pack_rows(p.context.data(), n, p.q_width, p.panels);
  p.note_threads(linear(p.ctx, p.panels, w.out, w.b_out, p.block_out.data(), p.hidden));
}

AttentionOptions attention_options_of(const ForwardPass& p, float scale, MaskSpec mask,
                                      bool materialized) {
  AttentionOptions options;
  options.score = ScoreFunction::kDot;
  options.scale = scale;
  options.mask = std::move(mask);
  options.threads = p.options.threads;
  options.kernels = &p.kernels;
  options.strategy = materialized ? Strategy::kMaterialized : Strategy::kAuto;
  return options;
}

}  // namespace

ForwardPass::ForwardPass(const Transformer& m, const StackUnit& s, const ForwardInputs& in,
                         const ForwardOptions& opt, const ForwardOutputs& out)
    : model(m),
      stack(s),
      config(m.config()),
      options(opt),
      outputs(out),
      first_layer(s.layers(config).first),
      cache(opt.cache),
      past(opt.cache ? opt.cache->length() : 0),
      n(sequence_length(m.config(), in)),
      key_len(past + n),
      hidden(config.hidden),
      heads(config.heads),
      kv_heads(kv_heads_of(config)),
      head_dim(head_dim_of(config)),
      intermediate(config.intermediate),
      q_width(heads * head_dim),
      kv_width(kv_heads * head_dim),
      qkv_width(q_width + 2 * kv_width),
      head_block(n * head_dim),
      kernels(opt.kernels ? *opt.kernels : default_kernel_set()),
      ops(model_ops_for(kernels)),
      ctx{kernels, ops, detail::resolve_threads(opt.threads)},
      views(m),
      x(floats(n * hidden)),
      normed(x.size()),
      block_out(x.size()),
      context(floats(n * q_width)),
      qkv(floats(n * qkv_width)),
      heads_qkv(qkv.size()),
      heads_out(context.size()),
      mlp(floats(n * intermediate)),
      gate(s.mlp == MlpKind::kGated ? mlp.size() : 0),
      row(floats(hidden)) {
  if (s.rotary) {
    rotary_tables(inverse_frequencies(config.rotary, head_dim), n, cos, sin, past);
  }
  stats.scratch_bytes =
      static_cast<std::int64_t>((5 * x.size() + 3 * context.size() + 2 * qkv.size() +
                                 2 * mlp.size() + gate.size() + cos.size() + sin.size()) *
                                sizeof(float));
}

void embed_tokens(ForwardPass& p, const ForwardInputs& in, bool token_types, bool positions) {
  const std::int64_t h = p.hidden;
  const EmbeddingMatrix token_embedding = p.views.embedding(kTokenEmbedding);
  const EmbeddingMatrix position_embedding = p.views.embedding(kPositionEmbedding);
  const EmbeddingMatrix type_embedding = p.views.embedding(kTokenTypeEmbedding);
  for (std::int64_t i = 0; i < p.n; ++i) {
    float* xi = p.x.data() + i * h;
    const float* t = embedding_row(p.ops, token_embedding, in.token_ids[i], p.row.data());
    std::copy(t, t + h, xi);
    if (token_types) {  // BertEmbeddings: (word + token type) + position
      const std::int64_t type = in.token_types.empty() ? 0 : in.token_types[i];
      const float* e = embedding_row(p.ops, type_embedding, type, p.row.data());
      for (std::int64_t j = 0; j < h; ++j) xi[j] += e[j];
    }
    if (!positions) continue;
    const float* e = embedding_row(p.ops, position_embedding, p.past + i, p.row.data());
    for (std::int64_t j = 0; j < h; ++j) xi[j] += e[j];
  }
}

void normalize(ForwardPass& p, NormKind kind, const Norm& norm, const float* src, float* dst) {
  const auto rows = static_cast<std::size_t>(p.n), width = static_cast<std::size_t>(p.hidden);
  const float eps = p.config.layer_norm_eps;
  if (kind == NormKind::kRmsNorm) {
    p.ops.rms_norm(rows, width, src, norm.weight, eps, dst);
  } else {
    p.ops.layer_norm(rows, width, src, norm.weight, norm.bias, eps, dst);
  }
}

void self_attention(ForwardPass& p, const AttentionView& w, std::int64_t l, const float* input) {
  const std::int64_t n = p.n, d = p.head_dim, head_block = p.head_block;
  pack_rows(input, n, p.hidden, p.panels);
  p.note_threads(linear(p.ctx, p.panels, w.q, w.bq, p.qkv.data(), p.qkv_width));
  p.note_threads(linear(p.ctx, p.panels, w.k, w.bk, p.qkv.data() + p.q_width, p.qkv_width));
  p.note_threads(
      linear(p.ctx, p.panels, w.v, w.bv, p.qkv.data() + p.q_width + p.kv_width, p.qkv_width));
  // [N][q | k | v] -> q [H][N][d], k [KV][N][d], v [KV][N][d].
  split_heads(p.qkv.data(), n, p.qkv_width, p.qkv_width / d, d, p.heads_qkv.data());
  if (!p.cos.empty()) {  // q and k heads, one after the other, row i at position past + i
    for (std::int64_t g = 0; g < (p.q_width + p.kv_width) / d; ++g) {
      p.ops.rotary(static_cast<std::size_t>(n), static_cast<std::size_t>(d / 2),
                   p.heads_qkv.data() + g * head_block, static_cast<std::size_t>(d), p.cos.data(),
                   p.sin.data());
    }
  }
  const ForwardOutputs& out = p.outputs;
  if (l == p.options.projections_layer && !out.projections.empty()) {
    copy_projections(p.heads, p.kv_heads, head_block, p.heads_qkv.data(), out.projections.data);
  }
  const AttentionOptions attention_options = attention_options_of(
      p, p.stack.attention_scale(p.config, l), mask_for(p, l), !out.attention.empty());
  MutableFloatView weights;
  if (!out.attention.empty()) {
    const std::int64_t per_layer = p.heads * n * p.key_len;
    weights = MutableFloatView(out.attention.data + (l - p.first_layer) * per_layer,
                               static_cast<std::size_t>(per_layer));
  }
  const float* k = p.heads_qkv.data() + p.heads * head_block;
  const KeysValues kv =
      p.cache ? append_to_cache(p, l) : KeysValues{k, k + p.kv_heads * head_block, n};
  p.note_threads(
      attend_layer(p, p.heads_qkv.data(), kv, attention_options, p.heads_out.data(), weights));
  ablate_heads(p, l);
  merge_heads_and_project(p, w);
}

void cross_attention(ForwardPass& p, const AttentionView& w, std::int64_t l, float scale,
                     MaskSpec mask, const float* input, MutableFloatView weights) {
  const EncoderOutput& encoder = p.encoder;
  const std::int64_t n = p.n, m = encoder.n, d = p.head_dim;
  // q from the decoder's rows, as self-attention's (heads_qkv's first H * N * d floats).
  pack_rows(input, n, p.hidden, p.panels);
  p.note_threads(linear(p.ctx, p.panels, w.q, w.bq, p.qkv.data(), p.qkv_width));
  split_heads(p.qkv.data(), n, p.qkv_width, p.heads, d, p.heads_qkv.data());
  // Head-major k [KV][M][d], then v [KV][M][d]: the cache's, kept by the call that ran the
  // encoder (a step has no encoder rows), or projected from the encoder's rows now.
  const auto kv_floats = floats(p.kv_heads * m * d);
  std::vector<float> own;
  const float* kv_heads = nullptr;
  if (p.cache && p.past > 0) {
    kv_heads = p.cache->cross(l - p.first_layer);
  } else {
    const std::int64_t kv_row = 2 * p.kv_width;
    std::vector<float> kv(floats(m * kv_row));
    own.resize(kv.size());
    RowPanels encoder_panels;
    pack_rows(encoder.rows, m, encoder.width, encoder_panels);
    p.note_threads(linear(p.ctx, encoder_panels, w.k, w.bk, kv.data(), kv_row));
    p.note_threads(linear(p.ctx, encoder_panels, w.v, w.bv, kv.data() + p.kv_width, kv_row));
    split_heads(kv.data(), m, kv_row, 2 * p.kv_heads, d, own.data());
    if (p.cache) std::copy(own.begin(), own.end(), p.cache->cross(l - p.first_layer));
    kv_heads = own.data();
  }
  if (!encoder.key_valid.empty()) mask.key_valid = encoder.key_valid;
  const auto q_floats = floats(p.heads * n * d);
  const AttentionInputs inputs{{p.heads, n, m, d, d, p.kv_heads},
                               FloatView(p.heads_qkv.data(), q_floats),
                               FloatView(kv_heads, kv_floats),
                               FloatView(kv_heads + kv_floats, kv_floats)};
  const AttentionOptions options =
      attention_options_of(p, scale, std::move(mask), !weights.empty());
  const MutableFloatView output(p.heads_out.data(), q_floats);
  p.note_threads(attention(inputs, options, AttentionOutputs{output, weights, {}}).threads);
  merge_heads_and_project(p, w);
}

void feed_forward(ForwardPass& p, MlpKind kind, ActivationFn activate, const LayerView& w,
                  const float* input) {
  const std::int64_t n = p.n, inter = p.intermediate;
  pack_rows(input, n, p.hidden, p.panels);
  p.note_threads(linear(p.ctx, p.panels, w.mlp_in, w.b_mlp_in, p.mlp.data(), inter));
  if (kind == MlpKind::kGated) {  // down(silu(gate(a2)) * up(a2))
    p.note_threads(linear(p.ctx, p.panels, w.mlp_gate, w.b_mlp_gate, p.gate.data(), inter));
    p.ops.silu_gate(p.gate.size(), p.gate.data(), p.mlp.data());
    pack_rows(p.gate.data(), n, inter, p.panels);
  } else {
    activate(p.mlp.size(), p.mlp.data());
    pack_rows(p.mlp.data(), n, inter, p.panels);
  }
  p.note_threads(linear(p.ctx, p.panels, w.mlp_out, w.b_mlp_out, p.block_out.data(), p.hidden));
}

void add_block_output(ForwardPass& p) {
  for (std::size_t j = 0; j < p.x.size(); ++j) p.x[j] += p.block_out[j];
}

ActivationFn activation_of(const ForwardPass& p) {
  switch (p.config.activation) {
    case Activation::kGeluErf:
      return p.ops.gelu_erf;
    case Activation::kSilu:  // Marian's "swish" (the llama family's gate uses silu_gate)
      return p.ops.silu;
    case Activation::kGeluTanh:
      break;
  }
  return p.ops.gelu_tanh;
}

}  // namespace attnlens::models
