#include "validate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "attention/lsh.h"
#include "attnlens/errors.h"
#include "parallel.h"

namespace attnlens::detail {

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw OverflowError(
        what, "size product " + std::to_string(a) + "*" + std::to_string(b) + " overflows 64 bits");
  }
  return r;
}

std::size_t to_size(std::int64_t count, std::size_t element_bytes, const char* what) {
  const auto max_elems =
      static_cast<std::uint64_t>(std::numeric_limits<std::size_t>::max() / 2) / element_bytes;
  if (count < 0 || static_cast<std::uint64_t>(count) > max_elems) {
    throw OverflowError(what, std::to_string(count) + " elements of " +
                                  std::to_string(element_bytes) +
                                  " bytes do not fit in this platform's address space");
  }
  return static_cast<std::size_t>(count);
}

void require_in_range(std::int64_t value, std::int64_t lo, std::int64_t hi, const char* name) {
  if (value < lo || value > hi) {
    throw RangeError(name, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                               ", got " + std::to_string(value));
  }
}

void require_length(std::size_t actual, std::int64_t expected, const char* name,
                    const std::string& formula) {
  if (static_cast<std::uint64_t>(actual) != static_cast<std::uint64_t>(expected)) {
    throw ShapeError(name, "expected " + formula + " elements, got " + std::to_string(actual));
  }
}

std::uint32_t largest_abs_bits(FloatView values) {
  std::uint32_t largest = 0;
  for (std::size_t i = 0; i < values.size; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &values.data[i], sizeof bits);
    bits &= 0x7fffffffu;
    largest = bits > largest ? bits : largest;
  }
  return largest;
}

namespace {
float float_from_bits(std::uint32_t bits) {
  float result;
  std::memcpy(&result, &bits, sizeof result);
  return result;
}
}  // namespace

float max_abs(FloatView values) { return float_from_bits(largest_abs_bits(values)); }

float require_finite(FloatView values, const char* name) {
  // One branch-free sweep (Inf and NaN patterns exceed every finite one); the exact index is
  // looked for only when something is wrong.
  const std::uint32_t largest = largest_abs_bits(values);
  if (largest < 0x7f800000u) return float_from_bits(largest);
  for (std::size_t i = 0; i < values.size; ++i) {
    const float x = values[i];
    if (!std::isfinite(x)) {
      const char* what = std::isnan(x) ? "NaN" : (x > 0 ? "+Infinity" : "-Infinity");
      throw NonFiniteError(name, std::string(name) + "[" + std::to_string(i) + "] is " + what +
                                     "; inputs must be finite");
    }
  }
  return 0.0f;  // not reached: some value was not finite
}

void require_product_length(std::size_t actual, const char* name, const char* symbols,
                            std::initializer_list<std::int64_t> factors) {
  std::int64_t expected = 1;
  for (std::int64_t f : factors) expected *= f;
  if (static_cast<std::uint64_t>(actual) != static_cast<std::uint64_t>(expected)) {
    require_length(actual, expected, name, std::string(symbols) + " = " + product_text(factors));
  }
}

// Built with std::to_string rather than an ostringstream: streams pull libc++'s locale and
// iostream machinery into the wasm module (about 100 KiB, a third of it).
std::string product_text(std::initializer_list<std::int64_t> factors) {
  std::string s;
  std::int64_t p = 1;
  for (auto f : factors) {
    if (!s.empty()) s += '*';
    s += std::to_string(f);
    p *= f;
  }
  if (factors.size() > 1) s += " = " + std::to_string(p);
  return s;
}

void validate_shape(const AttentionShape& shape) {
  struct Dim {
    std::int64_t value;
    const char* name;
  };
  for (const Dim& d :
       {Dim{shape.heads, "heads"}, Dim{shape.query_len, "query_len"}, Dim{shape.key_len, "key_len"},
        Dim{shape.head_dim, "head_dim"}, Dim{shape.value_dim, "value_dim"}}) {
    if (d.value < 1) {
      throw RangeError(d.name, "must be at least 1, got " + std::to_string(d.value));
    }
  }
  if (shape.kv_heads < 0 || shape.kv_heads > shape.heads ||
      (shape.kv_heads > 0 && shape.heads % shape.kv_heads != 0)) {
    throw RangeError("kv_heads", "must be 0 (as many as heads) or a divisor of heads = " +
                                     std::to_string(shape.heads) + ", got " +
                                     std::to_string(shape.kv_heads));
  }
  // Every buffer size the call can touch, checked once so later arithmetic cannot overflow.
  const std::int64_t hq = checked_mul(shape.heads, shape.query_len, "heads*query_len");
  const std::int64_t hk = checked_mul(kv_head_count(shape), shape.key_len, "kv_heads*key_len");
  // The weight matrix need only count in 64 bits (tile and flop counts): the streaming strategy
  // never forms it, so it may exceed the address space (N = 8192, H = 8 in wasm32). Where it is
  // formed (weights or scores requested, a materialized head) its size is checked there.
  checked_mul(hq, shape.key_len, "heads*query_len*key_len");
  to_size(checked_mul(hq, shape.head_dim, "heads*query_len*head_dim"), sizeof(float),
          "heads*query_len*head_dim");
  to_size(checked_mul(hq, shape.value_dim, "heads*query_len*value_dim"), sizeof(float),
          "heads*query_len*value_dim");
  to_size(checked_mul(hk, shape.head_dim, "kv_heads*key_len*head_dim"), sizeof(float),
          "kv_heads*key_len*head_dim");
  to_size(checked_mul(hk, shape.value_dim, "kv_heads*key_len*value_dim"), sizeof(float),
          "kv_heads*key_len*value_dim");
}

void validate_mask(const MaskSpec& mask, const AttentionShape& shape) {
  // Positions fit in 31 bits (the WebGPU kernels' and the bindings' integers).
  require_in_range(mask.query_offset, 0, (std::int64_t{1} << 31) - 1 - shape.query_len,
                   "query_offset");
  const std::int64_t longest = std::max(shape.query_len + mask.query_offset, shape.key_len);
  if (mask.window) {
    require_in_range(mask.window->before, 0, longest, "window.before");
    require_in_range(mask.window->after, 0, longest, "window.after");
    require_in_range(mask.window->dilation, 1, longest, "window.dilation");
  }
  if (mask.sparse.pattern != SparsePattern::kNone) {
    require_in_range(mask.sparse.stride, 1, longest, "sparse.stride");
    if (mask.sparse.pattern == SparsePattern::kFixed) {
      require_in_range(mask.sparse.summary, 1, mask.sparse.stride, "sparse.summary");
    }
  }
  for (std::size_t t = 0; t < mask.global_tokens.size(); ++t) {
    const std::int64_t p = mask.global_tokens[t];
    if (p < 0 || p >= longest) {
      throw RangeError("global_tokens",
                       "global_tokens[" + std::to_string(t) + "] = " + std::to_string(p) +
                           " is not a position in 0.." + std::to_string(longest - 1));
    }
  }
  if (!mask.key_lengths.empty()) {
    require_length(mask.key_lengths.size(), shape.heads, "key_lengths",
                   "one per head: " + std::to_string(shape.heads));
    for (std::size_t h = 0; h < mask.key_lengths.size(); ++h) {
      const std::int64_t len = mask.key_lengths[h];
      if (len < 0 || len > shape.key_len) {
        throw RangeError("key_lengths", "key_lengths[" + std::to_string(h) +
                                            "] = " + std::to_string(len) + " is outside 0.." +
                                            std::to_string(shape.key_len));
      }
    }
  }
  if (!mask.key_valid.empty()) {
    require_length(mask.key_valid.size, shape.key_len, "key_valid",
                   "key_len = " + std::to_string(shape.key_len));
  }
  if (!mask.custom.empty()) {
    checked_mul(shape.query_len, shape.key_len, "custom");
    require_product_length(mask.custom.size, "custom", "query_len*key_len",
                           {shape.query_len, shape.key_len});
  }
}

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
  require_in_range(options.top_k, 0, shape.key_len, "top_k");
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
