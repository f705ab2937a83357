#include "validate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "attention/lsh.h"
#include "attention/mask_eval.h"
#include "attention/top_k.h"
#include "attnlens/errors.h"
#include "parallel.h"

namespace attnlens::detail {

void validate_options(const AttentionShape& shape, const AttentionOptions& options) {
  if (!std::isfinite(options.temperature) || !(options.temperature > 0.0f)) {
    throw RangeError("temperature", "must be a positive finite number, got " +
                                        std::to_string(options.temperature));
  }
  if (options.scale && !std::isfinite(*options.scale)) {
    throw RangeError("scale", "must be finite, got " + std::to_string(*options.scale));
  }
  require_in_range(options.query_block, 0, 1 << 16, "query_block");
  require_in_range(options.key_block, 0, 1 << 16, "key_block");
  require_in_range(options.threads, 0, kMaxThreads, "threads");
  switch (options.score) {
    case ScoreFunction::kScaledDot:
    case ScoreFunction::kDot:
    case ScoreFunction::kCosine:
      break;
    case ScoreFunction::kAdditive: {
      const AdditiveWeights& a = options.additive;
      if (a.w_query.empty() || a.w_key.empty() || a.v.empty()) {
        throw InvalidArgumentError("additive", "the additive score needs w_query, w_key and v");
      }
      if (a.hidden < 1) {
        throw RangeError("additive.hidden", "must be at least 1, got " + std::to_string(a.hidden));
      }
      const std::int64_t ha = checked_mul(shape.heads, a.hidden, "additive.hidden");
      const std::int64_t had = checked_mul(ha, shape.head_dim, "additive.w_query");
      to_size(had, sizeof(float), "additive.w_query");
      require_product_length(a.w_query.size, "additive.w_query", "H*A*D",
                             {shape.heads, a.hidden, shape.head_dim});
      require_product_length(a.w_key.size, "additive.w_key", "H*A*D",
                             {shape.heads, a.hidden, shape.head_dim});
      require_product_length(a.v.size, "additive.v", "H*A", {shape.heads, a.hidden});
      require_finite(a.w_query, "additive.w_query");
      require_finite(a.w_key, "additive.w_key");
      require_finite(a.v, "additive.v");
      break;
    }
    default:
      throw InvalidArgumentError("score", "unknown score function");
  }
  switch (options.strategy) {
    case Strategy::kAuto:
    case Strategy::kMaterialized:
    case Strategy::kStreaming:
      break;
    default:
      throw InvalidArgumentError("strategy", "unknown strategy");
  }
  validate_top_k(options.top_k, shape);
  validate_lsh(options.lsh);
}

std::int64_t kv_rows_per_head(const AttentionInputs& in) {
  return in.kv_capacity > 0 ? in.kv_capacity : in.shape.key_len;
}

float require_finite_rows(FloatView x, std::int64_t heads, std::int64_t capacity, std::int64_t rows,
                          std::int64_t width, const char* name) {
  if (capacity == rows) return require_finite(x, name);
  float largest = 0.0f;
  for (std::int64_t h = 0; h < heads; ++h) {
    const std::size_t first = static_cast<std::size_t>(h * capacity * width);
    const FloatView head(x.data + first, static_cast<std::size_t>(rows * width));
    try {
      largest = std::max(largest, require_finite(head, name));
    } catch (const NonFiniteError&) {
      std::size_t bad = 0;
      while (std::isfinite(head[bad])) ++bad;
      throw NonFiniteError(name, std::string(name) + "[" + std::to_string(first + bad) +
                                     "] is not finite; inputs must be finite");
    }
  }
  return largest;
}

void throw_logit_overflow(std::int64_t head, std::int64_t query, std::int64_t key) {
  throw NonFiniteError("scores", "scale * score / temperature overflowed float32 at head " +
                                     std::to_string(head) + ", query " + std::to_string(query) +
                                     ", key " + std::to_string(key) +
                                     "; rescale the inputs or raise the temperature");
}

void require_finite_result(FloatView values, std::int64_t rows_per_head, std::int64_t row_len,
                           const char* name, const char* row_name, const char* computation) {
  try {
    require_finite(values, name);
  } catch (const NonFiniteError&) {
    std::size_t bad = 0;
    while (bad < values.size && std::isfinite(values[bad])) ++bad;
    const std::int64_t row = static_cast<std::int64_t>(bad) / row_len;
    throw NonFiniteError(name, std::string(computation) + " overflowed float32 at head " +
                                   std::to_string(row / rows_per_head) + ", " + row_name + " " +
                                   std::to_string(row % rows_per_head) + "; rescale the inputs");
  }
}

InputMagnitudes validate_attention(const AttentionInputs& in, const AttentionOptions& options,
                                   const AttentionOutputs& out) {
  const AttentionShape& s = in.shape;
  validate_shape(s);
  require_product_length(in.q.size, "q", "H*Nq*D", {s.heads, s.query_len, s.head_dim});
  const std::int64_t kv = kv_head_count(s);
  if (in.kv_capacity == 0) {
    require_product_length(in.k.size, "k", "Hkv*Nk*D", {kv, s.key_len, s.head_dim});
    require_product_length(in.v.size, "v", "Hkv*Nk*Dv", {kv, s.key_len, s.value_dim});
  } else {
    require_in_range(in.kv_capacity, s.key_len, std::numeric_limits<std::int32_t>::max(),
                     "kv_capacity");
    const std::int64_t rows = checked_mul(kv, in.kv_capacity, "kv_capacity");
    to_size(checked_mul(rows, std::max(s.head_dim, s.value_dim), "kv_capacity"), sizeof(float),
            "kv_capacity");
    require_product_length(in.k.size, "k", "Hkv*capacity*D", {kv, in.kv_capacity, s.head_dim});
    require_product_length(in.v.size, "v", "Hkv*capacity*Dv", {kv, in.kv_capacity, s.value_dim});
  }
  require_product_length(out.output.size, "output", "H*Nq*Dv", {s.heads, s.query_len, s.value_dim});
  if (!out.weights.empty()) {
    require_product_length(out.weights.size, "weights", "H*Nq*Nk",
                           {s.heads, s.query_len, s.key_len});
  }
  if (!out.scores.empty()) {
    require_product_length(out.scores.size, "scores", "H*Nq*Nk", {s.heads, s.query_len, s.key_len});
  }
  if (!out.row_logsumexp.empty()) {
    require_product_length(out.row_logsumexp.size, "row_logsumexp", "H*Nq", {s.heads, s.query_len});
  }
  if (options.strategy == Strategy::kStreaming && (!out.weights.empty() || !out.scores.empty())) {
    throw InvalidArgumentError("strategy",
                               "the streaming strategy never forms the weight matrix; use "
                               "materialized or auto to get weights or scores");
  }
  validate_options(s, options);
  validate_mask(options.mask, s);
  if (out.output.data == nullptr) {
    throw InvalidArgumentError("output", "an output buffer is required");
  }
  InputMagnitudes magnitudes;
  magnitudes.terms = validate_logit_terms(s, options);
  const std::int64_t capacity = kv_rows_per_head(in);
  magnitudes.q = require_finite(in.q, "q");
  magnitudes.k = require_finite_rows(in.k, kv, capacity, s.key_len, s.head_dim, "k");
  magnitudes.v = require_finite_rows(in.v, kv, capacity, s.key_len, s.value_dim, "v");
  return magnitudes;
}

}  // namespace attnlens::detail
