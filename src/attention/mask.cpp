#include "attnlens/mask.h"

#include <algorithm>
#include <string>

#include "attnlens/attention.h"
#include "attnlens/errors.h"
#include "checks.h"
#include "mask_eval.h"

namespace attnlens {
namespace detail {

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

}  // namespace detail

bool MaskSpec::is_global() const {
  return !causal && !window && sparse.pattern == SparsePattern::kNone && key_lengths.empty() &&
         key_valid.empty() && custom.empty();
}

void mask_matrix(const MaskSpec& mask, const AttentionShape& shape, std::int64_t head,
                 Span<unsigned char> out) {
  detail::validate_shape(shape);
  detail::validate_mask(mask, shape);
  detail::require_in_range(head, 0, shape.heads - 1, "head");
  detail::require_length(
      out.size, shape.query_len * shape.key_len, "out",
      "query_len*key_len = " + detail::product_text({shape.query_len, shape.key_len}));
  const detail::MaskEvaluator eval(mask, shape);
  for (std::int64_t i = 0; i < shape.query_len; ++i) {
    for (std::int64_t j = 0; j < shape.key_len; ++j) {
      out[static_cast<std::size_t>(i * shape.key_len + j)] = eval.visible(head, i, j) ? 1 : 0;
    }
  }
}

std::vector<unsigned char> mask_matrix(const MaskSpec& mask, const AttentionShape& shape,
                                       std::int64_t head) {
  detail::validate_shape(shape);
  std::vector<unsigned char> out(
      detail::to_size(shape.query_len * shape.key_len, 1, "query_len*key_len"));
  mask_matrix(mask, shape, head, Span<unsigned char>(out.data(), out.size()));
  return out;
}

namespace detail {

MaskEvaluator::MaskEvaluator(const MaskSpec& mask, const AttentionShape& shape)
    : query_len_(shape.query_len),
      key_len_(shape.key_len),
      offset_(mask.query_offset),
      causal_(mask.causal),
      sparse_(mask.sparse.pattern),
      restricts_nothing_(mask.is_global()) {
  if (mask.window) {
    windowed_ = true;
    before_ = mask.window->before;
    after_ = mask.window->after;
    dilation_ = mask.window->dilation;
  }
  if (sparse_ != SparsePattern::kNone) {
    stride_ = mask.sparse.stride;
    summary_ = mask.sparse.summary;
  }
  if (!mask.key_lengths.empty()) key_lengths_ = mask.key_lengths.data();
  if (!mask.key_valid.empty()) key_valid_ = mask.key_valid.data;
  if (!mask.custom.empty()) custom_ = mask.custom.data;
  // Prefix counts over the queries' positions (index + offset) and over the keys', each kept
  // only when some listed position falls there.
  const auto prefix_over = [&](std::int64_t first, std::int64_t length) {
    std::vector<unsigned char> flags(static_cast<std::size_t>(length), 0);
    bool any = false;
    for (std::int64_t p : mask.global_tokens) {
      if (p >= first && p < first + length) {
        flags[static_cast<std::size_t>(p - first)] = 1;
        any = true;
      }
    }
    std::vector<std::int64_t> prefix;
    if (!any) return prefix;
    prefix.assign(flags.size() + 1, 0);
    for (std::size_t i = 0; i < flags.size(); ++i) prefix[i + 1] = prefix[i] + flags[i];
    return prefix;
  };
  if (!mask.global_tokens.empty()) {
    query_global_prefix_ = prefix_over(offset_, query_len_);
    key_global_prefix_ = prefix_over(0, key_len_);
  }
}

std::int64_t MaskEvaluator::count(const std::vector<std::int64_t>& prefix, std::int64_t b,
                                  std::int64_t e) noexcept {
  if (prefix.empty()) return 0;
  const auto n = static_cast<std::int64_t>(prefix.size()) - 1;
  b = std::clamp<std::int64_t>(b, 0, n);
  e = std::clamp<std::int64_t>(e, 0, n);
  return e > b ? prefix[static_cast<std::size_t>(e)] - prefix[static_cast<std::size_t>(b)] : 0;
}

KeyRange MaskEvaluator::reachable(std::int64_t head, std::int64_t /*q0*/,
                                  std::int64_t q1) const noexcept {
  KeyRange r{0, key_limit(head)};
  if (causal_) r.end = std::min(r.end, q1 + offset_);  // keys j <= i + offset < q1 + offset
  return r;
}

KeyRange MaskEvaluator::band(std::int64_t head, std::int64_t q0, std::int64_t q1) const noexcept {
  KeyRange r = reachable(head, q0, q1);
  if (windowed_) {
    r.begin = std::max(r.begin, q0 + offset_ - before_ * dilation_);
    r.end = std::min(r.end, (q1 - 1 + offset_) + after_ * dilation_ + 1);
  }
  return r;
}

bool MaskEvaluator::block_fully_visible(std::int64_t head, std::int64_t q0, std::int64_t q1,
                                        std::int64_t k0, std::int64_t k1) const noexcept {
  if (restricts_nothing_) return true;
  if (key_valid_ || custom_ || sparse_ != SparsePattern::kNone) return false;
  if (k1 > key_limit(head)) return false;
  if (causal_ && k1 - 1 > q0 + offset_) return false;
  if (windowed_) {
    if (dilation_ != 1) return false;
    if (k0 < (q1 - 1 + offset_) - before_ || k1 - 1 > q0 + offset_ + after_) return false;
  }
  return true;
}

}  // namespace detail
}  // namespace attnlens
