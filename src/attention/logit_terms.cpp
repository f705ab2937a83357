#include "logit_terms.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "attnlens/errors.h"
#include "checks.h"

namespace attnlens::detail {

LogitTerms logit_terms(const AttentionShape& shape, const AttentionOptions& options, float scale) {
  constexpr double kLog2e = 1.4426950408889634;
  const double per_temperature = kLog2e / static_cast<double>(options.temperature);
  LogitTerms t;
  t.query_len = shape.query_len;
  t.key_len = shape.key_len;
  t.query_offset = options.mask.query_offset;
  if (options.softcap > 0.0f) {
    t.query_fold = static_cast<float>(static_cast<double>(scale) / options.softcap);
    t.softcap_factor = static_cast<float>(options.softcap * per_temperature);
  } else {
    t.query_fold = base2_logit_factor(scale / options.temperature);
  }
  t.bias_factor = static_cast<float>(per_temperature);
  if (!options.bias.empty()) {
    t.bias = options.bias.data;
    const std::int64_t matrix = shape.query_len * shape.key_len;
    t.bias_head_stride = static_cast<std::int64_t>(options.bias.size) == matrix ? 0 : matrix;
  }
  if (!options.alibi_slopes.empty()) t.slopes = options.alibi_slopes.data;
  return t;
}

void LogitTerms::apply(const KernelSet& kernels, std::int64_t h, std::int64_t q0, std::int64_t rows,
                       std::int64_t k0, std::int64_t k1, std::int64_t key_step,
                       std::int64_t query_step, float* s) const noexcept {
  if (k1 <= k0 || rows <= 0) return;
  if (softcap_factor != 0.0f) {
    // Every element of the block: those outside are masked afterwards anyway.
    const std::int64_t last = (k1 - 1 - k0) * key_step + (rows - 1) * query_step;
    kernels.softcap(static_cast<std::size_t>(last + 1), softcap_factor, s);
  }
  if (bias != nullptr) {
    const float* rows_of = bias + h * bias_head_stride + q0 * key_len;
    for (std::int64_t j = 0; j < rows; ++j) {
      const float* row = rows_of + j * key_len;
      float* out = s + j * query_step;
      for (std::int64_t k = k0; k < k1; ++k) out[(k - k0) * key_step] += bias_factor * row[k];
    }
  }
  if (slopes != nullptr) {
    const float m = bias_factor * slopes[h];
    for (std::int64_t j = 0; j < rows; ++j) {
      const std::int64_t position = q0 + j + query_offset;
      float* out = s + j * query_step;
      for (std::int64_t k = k0; k < k1; ++k) {
        out[(k - k0) * key_step] -= m * static_cast<float>(std::abs(position - k));
      }
    }
  }
}

TermMagnitudes validate_logit_terms(const AttentionShape& shape, const AttentionOptions& options) {
  if (!std::isfinite(options.softcap) || options.softcap < 0.0f) {
    throw RangeError("softcap", "must be 0 (none) or a positive finite number, got " +
                                    std::to_string(options.softcap));
  }
  TermMagnitudes m;
  if (!options.bias.empty()) {
    const std::int64_t matrix = checked_mul(shape.query_len, shape.key_len, "bias");
    const std::int64_t per_head = checked_mul(shape.heads, matrix, "bias");
    const auto size = static_cast<std::int64_t>(options.bias.size);
    if (size != matrix && size != per_head) {
      throw ShapeError("bias", "expected H*Nq*Nk = " +
                                   product_text({shape.heads, shape.query_len, shape.key_len}) +
                                   " or Nq*Nk = " + product_text({shape.query_len, shape.key_len}) +
                                   " elements, got " + std::to_string(size));
    }
    // -inf hides a key (as the mask does); +inf and NaN have no meaning as a bias.
    for (std::size_t i = 0; i < options.bias.size; ++i) {
      const float x = options.bias[i];
      if (std::isnan(x) || x == std::numeric_limits<float>::infinity()) {
        throw NonFiniteError("bias", "bias[" + std::to_string(i) + "] is " +
                                         (std::isnan(x) ? "NaN" : "+Infinity") +
                                         "; a bias is finite, or -Infinity to hide a key");
      }
      if (x > m.bias) m.bias = x;
    }
  }
  if (!options.alibi_slopes.empty()) {
    require_product_length(options.alibi_slopes.size, "alibi_slopes", "H", {shape.heads});
    m.slope = require_finite(options.alibi_slopes, "alibi_slopes");
  }
  return m;
}

bool terms_may_overflow(const AttentionShape& shape, const AttentionOptions& options, float scale,
                        double max_abs_score, const TermMagnitudes& magnitudes) {
  if (options.bias.empty() && options.alibi_slopes.empty()) return false;
  const double limit = std::numeric_limits<float>::max() / 4.0;
  const double capped = options.softcap > 0.0f ? static_cast<double>(options.softcap)
                                               : max_abs_score * std::fabs(double(scale));
  const double distance =
      static_cast<double>(std::max(shape.query_len + options.mask.query_offset, shape.key_len));
  const double sum = capped + static_cast<double>(magnitudes.bias) +
                     static_cast<double>(magnitudes.slope) * distance;
  // In base 2 (x log2(e)), divided by the temperature.
  return sum * 1.4426950408889634 / static_cast<double>(options.temperature) > limit;
}

}  // namespace attnlens::detail
