#include "attnlens/multihead.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attnlens/errors.h"
#include "attnlens/kernels.h"
#include "parallel.h"
#include "prepare.h"
#include "validate.h"

namespace attnlens {
namespace {

using detail::checked_mul;
using detail::require_finite;
using detail::require_product_length;

void require_optional_length(FloatView bias, const char* name, const char* symbols,
                             std::initializer_list<std::int64_t> factors) {
  if (!bias.empty()) detail::require_product_length(bias.size, name, symbols, factors);
}

// out[rows, cols] = x[rows, inner] * w[inner, cols] + bias, then a finiteness check whose
// message names the product that overflowed. With threads, tasks take runs of rows (each row
// is computed the same way whoever runs it). Returns the threads that took part.
int project(const KernelSet& kernels, FloatView x, std::int64_t rows, std::int64_t inner,
            FloatView w, std::int64_t cols, FloatView bias, std::vector<float>& out,
            const char* what, int threads) {
  out.resize(static_cast<std::size_t>(rows * cols));
  // Tasks are runs of whole 16-row blocks (the GEMM kernel's row block), so every row meets the
  // same code path as in one call over all rows; a few tasks per thread, so a thread that
  // starts late does not hold up the rest.
  constexpr std::int64_t kRowBlock = 16;
  const std::int64_t blocks = detail::div_up(rows, kRowBlock);
  const std::int64_t tasks = std::min<std::int64_t>(blocks, 4 * std::int64_t{threads});
  return detail::parallel_for(tasks, threads, [&](std::int64_t task) {
    const std::int64_t r0 = std::min(rows, blocks * task / tasks * kRowBlock);
    const std::int64_t r1 = std::min(rows, blocks * (task + 1) / tasks * kRowBlock);
    float* o = out.data() + r0 * cols;
    kernels.gemm(static_cast<std::size_t>(r1 - r0), static_cast<std::size_t>(cols),
                 static_cast<std::size_t>(inner), x.data + r0 * inner,
                 static_cast<std::size_t>(inner), w.data, static_cast<std::size_t>(cols), o,
                 static_cast<std::size_t>(cols), false);
    if (!bias.empty()) {
      for (std::int64_t r = r0; r < r1; ++r, o += cols) {
        for (std::int64_t c = 0; c < cols; ++c) o[c] += bias[c];
      }
    }
    for (const float* v = out.data() + r0 * cols; v != out.data() + r1 * cols; ++v) {
      if (!std::isfinite(*v)) {
        throw NonFiniteError(
            what, std::string(what) + " overflowed float32; rescale the inputs or weights");
      }
    }
  });
}

// Token-major [n, heads * d] to head-major [heads, n, d].
void split_heads(const std::vector<float>& tokens, std::int64_t n, std::int64_t heads,
                 std::int64_t d, float* out) {
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t i = 0; i < n; ++i) {
      const float* src = tokens.data() + i * heads * d + h * d;
      float* dst = out + (h * n + i) * d;
      for (std::int64_t c = 0; c < d; ++c) dst[c] = src[c];
    }
  }
}

}  // namespace

MultiHeadShape resolve_shape(const MultiHeadShape& shape) {
  MultiHeadShape r = shape;
  if (r.value_dim == 0) r.value_dim = r.head_dim;
  if (r.key_len == 0) r.key_len = r.query_len;
  if (r.key_model_dim == 0) r.key_model_dim = r.model_dim;
  if (r.out_dim == 0) r.out_dim = r.model_dim;
  if (r.kv_heads == 0) r.kv_heads = r.heads;
  struct Dim {
    std::int64_t value;
    const char* name;
  };
  for (const Dim& d :
       {Dim{r.heads, "heads"}, Dim{r.head_dim, "head_dim"}, Dim{r.value_dim, "value_dim"},
        Dim{r.query_len, "query_len"}, Dim{r.key_len, "key_len"}, Dim{r.model_dim, "model_dim"},
        Dim{r.key_model_dim, "key_model_dim"}, Dim{r.out_dim, "out_dim"}}) {
    if (d.value < 1) throw RangeError(d.name, "must be at least 1, got " + std::to_string(d.value));
  }
  if (r.kv_heads < 1 || r.kv_heads > r.heads || r.heads % r.kv_heads != 0) {
    throw RangeError("kv_heads", "must be 0 (as many as heads) or a divisor of heads = " +
                                     std::to_string(r.heads) + ", got " +
                                     std::to_string(shape.kv_heads));
  }
  // Every size the call allocates or reads, checked once.
  const std::int64_t hd = checked_mul(r.heads, r.head_dim, "heads*head_dim");
  const std::int64_t hdv = checked_mul(r.heads, r.value_dim, "heads*value_dim");
  const std::int64_t kvd = r.kv_heads * r.head_dim, kvdv = r.kv_heads * r.value_dim;
  detail::to_size(checked_mul(r.model_dim, hd, "w_query"), sizeof(float), "w_query");
  detail::to_size(checked_mul(r.key_model_dim, kvd, "w_key"), sizeof(float), "w_key");
  detail::to_size(checked_mul(r.key_model_dim, kvdv, "w_value"), sizeof(float), "w_value");
  detail::to_size(checked_mul(hdv, r.out_dim, "w_out"), sizeof(float), "w_out");
  detail::to_size(checked_mul(r.query_len, r.model_dim, "x_query"), sizeof(float), "x_query");
  detail::to_size(checked_mul(r.key_len, r.key_model_dim, "x_key_value"), sizeof(float),
                  "x_key_value");
  detail::to_size(checked_mul(r.query_len, r.out_dim, "output"), sizeof(float), "output");
  detail::to_size(checked_mul(r.query_len, hd, "heads*query_len*head_dim"), sizeof(float), "q");
  detail::to_size(checked_mul(r.key_len, std::max(hd, hdv), "heads*key_len*head_dim"),
                  sizeof(float), "k");
  return r;
}

AttentionStats multi_head_attention(const MultiHeadInputs& in, const AttentionOptions& options,
                                    const MultiHeadOutputs& out) {
  const bool self = in.x_key_value.empty();
  if (self && in.shape.key_len != 0 && in.shape.key_len != in.shape.query_len) {
    throw InvalidArgumentError("x_key_value", "key_len " + std::to_string(in.shape.key_len) +
                                                  " differs from query_len but no x_key_value "
                                                  "was given");
  }
  if (self && in.shape.key_model_dim != 0 && in.shape.key_model_dim != in.shape.model_dim) {
    throw InvalidArgumentError("x_key_value",
                               "key_model_dim differs from model_dim but no "
                               "x_key_value was given");
  }
  const MultiHeadShape s = resolve_shape(in.shape);
  // attention() checks the options again; the projections need `threads` before it runs.
  detail::require_in_range(options.threads, 0, detail::kMaxThreads, "threads");
  const std::int64_t hd = s.heads * s.head_dim, hdv = s.heads * s.value_dim;
  const std::int64_t kv = s.kv_heads, kvd = kv * s.head_dim, kvdv = kv * s.value_dim;
  const MultiHeadWeights& w = in.weights;
  require_product_length(in.x_query.size, "x_query", "query_len*model_dim",
                         {s.query_len, s.model_dim});
  if (!self) {
    require_product_length(in.x_key_value.size, "x_key_value", "key_len*key_model_dim",
                           {s.key_len, s.key_model_dim});
  }
  require_product_length(w.w_query.size, "w_query", "model_dim*heads*head_dim",
                         {s.model_dim, s.heads, s.head_dim});
  require_product_length(w.w_key.size, "w_key", "key_model_dim*kv_heads*head_dim",
                         {s.key_model_dim, kv, s.head_dim});
  require_product_length(w.w_value.size, "w_value", "key_model_dim*kv_heads*value_dim",
                         {s.key_model_dim, kv, s.value_dim});
  require_product_length(w.w_out.size, "w_out", "heads*value_dim*out_dim",
                         {s.heads, s.value_dim, s.out_dim});
  require_optional_length(w.b_query, "b_query", "heads*head_dim", {s.heads, s.head_dim});
  require_optional_length(w.b_key, "b_key", "kv_heads*head_dim", {kv, s.head_dim});
  require_optional_length(w.b_value, "b_value", "kv_heads*value_dim", {kv, s.value_dim});
  require_optional_length(w.b_out, "b_out", "out_dim", {s.out_dim});
  require_product_length(out.output.size, "output", "query_len*out_dim", {s.query_len, s.out_dim});
  const AttentionShape heads_shape{s.heads,    s.query_len, s.key_len,
                                   s.head_dim, s.value_dim, s.kv_heads};
  if (!out.q.empty())
    require_product_length(out.q.size, "q", "H*Nq*D", {s.heads, s.query_len, s.head_dim});
  if (!out.k.empty())
    require_product_length(out.k.size, "k", "Hkv*Nk*D", {kv, s.key_len, s.head_dim});
  if (!out.v.empty())
    require_product_length(out.v.size, "v", "Hkv*Nk*Dv", {kv, s.key_len, s.value_dim});
  for (const auto& [view, name] : {std::pair{in.x_query, "x_query"},
                                   {in.x_key_value, "x_key_value"},
                                   {w.w_query, "w_query"},
                                   {w.w_key, "w_key"},
                                   {w.w_value, "w_value"},
                                   {w.w_out, "w_out"},
                                   {w.b_query, "b_query"},
                                   {w.b_key, "b_key"},
                                   {w.b_value, "b_value"},
                                   {w.b_out, "b_out"}}) {
    require_finite(view, name);
  }

  const KernelSet& kernels = options.kernels ? *options.kernels : default_kernel_set();
  const FloatView x_kv = self ? in.x_query : in.x_key_value;
  std::vector<float> tokens;
  std::vector<float> q_storage, k_storage, v_storage;
  auto head_major = [](MutableFloatView given, std::vector<float>& storage, std::int64_t size) {
    if (!given.empty()) return given.data;
    storage.resize(static_cast<std::size_t>(size));
    return storage.data();
  };
  float* q = head_major(out.q, q_storage, s.heads * s.query_len * s.head_dim);
  float* k = head_major(out.k, k_storage, kv * s.key_len * s.head_dim);
  float* v = head_major(out.v, v_storage, kv * s.key_len * s.value_dim);
  const int threads = detail::resolve_threads(options.threads);
  int used = project(kernels, in.x_query, s.query_len, s.model_dim, w.w_query, hd, w.b_query,
                     tokens, "x_query*w_query", threads);
  split_heads(tokens, s.query_len, s.heads, s.head_dim, q);
  used = std::max(used, project(kernels, x_kv, s.key_len, s.key_model_dim, w.w_key, kvd, w.b_key,
                                tokens, "x_key_value*w_key", threads));
  split_heads(tokens, s.key_len, kv, s.head_dim, k);
  used = std::max(used, project(kernels, x_kv, s.key_len, s.key_model_dim, w.w_value, kvdv,
                                w.b_value, tokens, "x_key_value*w_value", threads));
  split_heads(tokens, s.key_len, kv, s.value_dim, v);

  std::vector<float> heads_out(static_cast<std::size_t>(s.heads * s.query_len * s.value_dim));
  const AttentionInputs attn_in{
      heads_shape, FloatView(q, static_cast<std::size_t>(s.heads * s.query_len * s.head_dim)),
      FloatView(k, static_cast<std::size_t>(kv * s.key_len * s.head_dim)),
      FloatView(v, static_cast<std::size_t>(kv * s.key_len * s.value_dim))};
  AttentionStats stats = attention(
      attn_in, options, AttentionOutputs{MutableFloatView(heads_out), out.weights, out.scores});

  // Concatenate heads token-major, then the output projection.
  std::vector<float> concat(static_cast<std::size_t>(s.query_len * hdv));
  for (std::int64_t h = 0; h < s.heads; ++h) {
    for (std::int64_t i = 0; i < s.query_len; ++i) {
      const float* src = heads_out.data() + (h * s.query_len + i) * s.value_dim;
      float* dst = concat.data() + i * hdv + h * s.value_dim;
      for (std::int64_t c = 0; c < s.value_dim; ++c) dst[c] = src[c];
    }
  }
  used = std::max(used, project(kernels, FloatView(concat), s.query_len, hdv, w.w_out, s.out_dim,
                                w.b_out, tokens, "heads*w_out", threads));
  stats.threads = std::max(stats.threads, used);
  std::copy(tokens.begin(), tokens.end(), out.output.data);
  stats.scratch_bytes +=
      static_cast<std::int64_t>((tokens.capacity() + q_storage.size() + k_storage.size() +
                                 v_storage.size() + heads_out.size() + concat.size()) *
                                sizeof(float));
  return stats;
}

}  // namespace attnlens
