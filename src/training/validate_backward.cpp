// The backward's argument checks: the forward's rules (validate.h) for every tensor it reads,
// plus the saved log-sum-exp, the gradient buffers and the scores it can differentiate.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "attention/mask_eval.h"
#include "backward_internal.h"
#include "validate.h"

namespace attnlens::detail {
namespace {

// InvalidArgumentError when a gradient buffer shares memory with an input (or another gradient).
void require_no_overlap(const AttentionBackwardInputs& in, const AttentionGradients& g) {
  struct Buffer {
    const float* data;
    std::size_t size;
    const char* name;
  };
  const Buffer buffers[] = {{in.forward.q.data, in.forward.q.size, "q"},
                            {in.forward.k.data, in.forward.k.size, "k"},
                            {in.forward.v.data, in.forward.v.size, "v"},
                            {in.output.data, in.output.size, "output"},
                            {in.row_logsumexp.data, in.row_logsumexp.size, "row_logsumexp"},
                            {in.d_output.data, in.d_output.size, "d_output"},
                            {g.dq.data, g.dq.size, "dq"},
                            {g.dk.data, g.dk.size, "dk"},
                            {g.dv.data, g.dv.size, "dv"}};
  const auto address = [](const float* p) { return reinterpret_cast<std::uintptr_t>(p); };
  for (std::size_t out = 6; out < 9; ++out) {
    for (std::size_t other = 0; other < 9; ++other) {
      const Buffer& a = buffers[out];
      const Buffer& b = buffers[other];
      if (other == out || a.size == 0 || b.size == 0) continue;
      if (address(a.data) < address(b.data + b.size) &&
          address(b.data) < address(a.data + a.size)) {
        throw InvalidArgumentError(a.name, std::string("overlaps ") + b.name +
                                               "; the gradients need buffers of their own");
      }
    }
  }
}

}  // namespace

void require_differentiable_score(const AttentionOptions& options) {
  if (options.score == ScoreFunction::kAdditive) {
    throw InvalidArgumentError(
        "score",
        "attention_backward supports the scaled-dot, dot and cosine scores; the additive score's "
        "gradient also belongs to its weights (w_query, w_key, v), which it does not compute");
  }
}

void require_plain_logits(const AttentionInputs& in, const AttentionOptions& options) {
  // Each of these changes the logits or which keys count; differentiating without it would hand
  // back the gradient of another function.
  const auto refuse = [](const char* name) {
    throw InvalidArgumentError(name,
                               "attention_backward differentiates the scaled scores, the "
                               "temperature and the mask; it does not support this option");
  };
  if (options.softcap != 0.0f) refuse("softcap");
  if (!options.bias.empty()) refuse("bias");
  if (!options.alibi_slopes.empty()) refuse("alibi_slopes");
  if (options.top_k != 0) refuse("top_k");
  if (options.lsh.buckets != 0) refuse("lsh.buckets");
  if (in.kv_capacity != 0 && in.kv_capacity != in.shape.key_len) refuse("kv_capacity");
}

InputMagnitudes validate_backward(const AttentionBackwardInputs& in,
                                  const AttentionOptions& options, const AttentionGradients& g) {
  const AttentionShape& s = in.forward.shape;
  validate_shape(s);
  require_product_length(in.forward.q.size, "q", "H*Nq*D", {s.heads, s.query_len, s.head_dim});
  const std::int64_t kv = kv_head_count(s);
  require_product_length(in.forward.k.size, "k", "Hkv*Nk*D", {kv, s.key_len, s.head_dim});
  require_product_length(in.forward.v.size, "v", "Hkv*Nk*Dv", {kv, s.key_len, s.value_dim});
  require_product_length(in.output.size, "output", "H*Nq*Dv", {s.heads, s.query_len, s.value_dim});
  require_product_length(in.row_logsumexp.size, "row_logsumexp", "H*Nq", {s.heads, s.query_len});
  require_product_length(in.d_output.size, "d_output", "H*Nq*Dv",
                         {s.heads, s.query_len, s.value_dim});
  require_product_length(g.dq.size, "dq", "H*Nq*D", {s.heads, s.query_len, s.head_dim});
  require_product_length(g.dk.size, "dk", "Hkv*Nk*D", {kv, s.key_len, s.head_dim});
  require_product_length(g.dv.size, "dv", "Hkv*Nk*Dv", {kv, s.key_len, s.value_dim});
  validate_options(s, options);
  require_differentiable_score(options);
  require_plain_logits(in.forward, options);
  validate_mask(options.mask, s);
  require_no_overlap(in, g);
  InputMagnitudes magnitudes;
  magnitudes.q = require_finite(in.forward.q, "q");
  magnitudes.k = require_finite(in.forward.k, "k");
  require_finite(in.forward.v, "v");
  require_finite(in.output, "output");
  require_finite(in.d_output, "d_output");
  // -inf is what attention() saves for a row that sees no key; NaN and +inf are never saved.
  for (std::size_t i = 0; i < in.row_logsumexp.size; ++i) {
    const float x = in.row_logsumexp[i];
    if (std::isnan(x) || x == std::numeric_limits<float>::infinity()) {
      throw NonFiniteError("row_logsumexp", "row_logsumexp[" + std::to_string(i) + "] is " +
                                                (std::isnan(x) ? "NaN" : "+Infinity") +
                                                "; it must be what attention() saved (finite, "
                                                "or -Infinity for a row that sees no key)");
    }
  }
  return magnitudes;
}

}  // namespace attnlens::detail
