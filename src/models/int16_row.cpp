// Int16Row::quantize: plain scalar code, shared by every kernel set, so the scalar and SIMD
// one-row kernels multiply the same integers (and their outputs have the same bits). A row is
// rounded once per linear layer and read by every column panel: its cost is k against the
// layer's k x out multiply-adds.
#include "models/int16_row.h"

#include <algorithm>
#include <cmath>

namespace attnlens::models {

void Int16Row::quantize(std::size_t k, const float* x, std::size_t x_step) {
  const std::size_t blocks = k / kInt16Block;
  if (values.size() < k) values.resize(k);
  if (scales.size() < blocks) {
    scales.resize(blocks);
    sums.resize(blocks);
  }
  for (std::size_t b = 0; b < blocks; ++b) {
    const float* xb = x + b * kInt16Block * x_step;
    std::int16_t* v = values.data() + b * kInt16Block;
    float amax = 0.0f;
    for (std::size_t i = 0; i < kInt16Block; ++i) {
      const float a = std::fabs(xb[i * x_step]);
      amax = a > amax || std::isnan(a) ? a : amax;  // NaN wins, so the block says so
    }
    if (!std::isfinite(amax) || amax == 0.0f) {
      std::fill(v, v + kInt16Block, std::int16_t{0});
      scales[b] = amax;  // 0: the block adds nothing; NaN / infinity: its outputs are not finite
      sums[b] = 0.0f;
      continue;
    }
    const float inverse = 32767.0f / amax;
    std::int32_t sum = 0;
    for (std::size_t i = 0; i < kInt16Block; ++i) {
      // |x| * inverse <= 32767 (1 + 2^-23): rounds to at most 32767.
      const auto q = static_cast<std::int32_t>(std::nearbyint(xb[i * x_step] * inverse));
      v[i] = static_cast<std::int16_t>(std::clamp(q, -32767, 32767));
      sum += v[i];
    }
    scales[b] = amax / 32767.0f;
    sums[b] = scales[b] * static_cast<float>(sum);  // |sum| < 2^21: exact in f32
  }
}

}  // namespace attnlens::models
