// The two row operations of a numerically stable softmax: the row maximum, and exp(x - max)
// with its sum. Masked entries arrive as -inf and leave as exact zeros.
#include <cmath>
#include <cstddef>
#include <limits>

#include "kernels/kernels_internal.h"

namespace attnlens::kernels {

float f32_row_max__scalar(const float* x, std::size_t n) noexcept {
  float m = -std::numeric_limits<float>::infinity();
  for (std::size_t j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

float f32_exp_sum__scalar(const float* x, float max, float* out, std::size_t n) noexcept {
  float sum = 0.0f;
  for (std::size_t j = 0; j < n; ++j) {
    const float e = std::exp(x[j] - max);
    out[j] = e;
    sum += e;
  }
  return sum;
}

#if ATTNLENS_HAVE_SIMD
using simd::f32x4;

float f32_row_max__simd128_x8(const float* x, std::size_t n) noexcept {
  const float ninf = -std::numeric_limits<float>::infinity();
  f32x4 m0 = simd::splat(ninf), m1 = m0;
  std::size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    m0 = simd::max(m0, simd::load(x + j));
    m1 = simd::max(m1, simd::load(x + j + 4));
  }
  for (; j + 4 <= n; j += 4) m0 = simd::max(m0, simd::load(x + j));
  float m = simd::hmax(simd::max(m0, m1));
  for (; j < n; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

float f32_exp_sum__simd128_x8(const float* x, float max, float* out, std::size_t n) noexcept {
  const f32x4 vmax = simd::splat(max);
  f32x4 s0 = simd::splat(0.0f), s1 = s0;
  std::size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const f32x4 e0 = simd::exp(simd::sub(simd::load(x + j), vmax));
    const f32x4 e1 = simd::exp(simd::sub(simd::load(x + j + 4), vmax));
    simd::store(out + j, e0);
    simd::store(out + j + 4, e1);
    s0 = simd::add(s0, e0);
    s1 = simd::add(s1, e1);
  }
  for (; j + 4 <= n; j += 4) {
    const f32x4 e0 = simd::exp(simd::sub(simd::load(x + j), vmax));
    simd::store(out + j, e0);
    s0 = simd::add(s0, e0);
  }
  if (j < n) {
    // Tail through a padded vector so every element sees the same exp as the body.
    float buf[4] = {
        -std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
        -std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
    for (std::size_t t = 0; j + t < n; ++t) buf[t] = x[j + t];
    const f32x4 e0 = simd::exp(simd::sub(simd::load(buf), vmax));
    simd::store(buf, e0);
    for (std::size_t t = 0; j + t < n; ++t) out[j + t] = buf[t];
    s1 = simd::add(s1, e0);  // padding lanes are exp(-inf) = 0
  }
  return simd::hsum(simd::add(s0, s1));
}
#endif  // ATTNLENS_HAVE_SIMD

}  // namespace attnlens::kernels
