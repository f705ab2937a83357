// One online-softmax step over a [n][8] block of base-2 logits, column by column (contract in
// attnlens/kernels.h). The columns are 8 queries side by side, so in the SIMD kernel every
// reduction (max, sum) runs down the block on whole vectors.
#include <cmath>
#include <cstddef>
#include <limits>

#include "kernels/kernels_internal.h"

namespace attnlens::kernels {

namespace {
constexpr std::size_t kCols = kPanelCols;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
}  // namespace

void f32_online_softmax__scalar_x8(std::size_t n, float* s, float* max, float* sum,
                                   float* rescale) noexcept {
  for (std::size_t j = 0; j < kCols; ++j) {
    float m = max[j];
    for (std::size_t i = 0; i < n; ++i) m = s[i * kCols + j] > m ? s[i * kCols + j] : m;
    const float base = m == kNegInf ? 0.0f : m;
    rescale[j] = std::exp2(max[j] - base);
    float block_sum = 0.0f;
    for (std::size_t i = 0; i < n; ++i) {
      const float e = std::exp2(s[i * kCols + j] - base);
      s[i * kCols + j] = e;
      block_sum += e;
    }
    sum[j] = sum[j] * rescale[j] + block_sum;
    max[j] = m;
  }
}

#if ATTNLENS_HAVE_SIMD
namespace {
template <typename M>
void online_softmax(std::size_t n, float* s, float* max, float* sum, float* rescale) {
  using simd::f32x4;
  const f32x4 old0 = simd::load(max), old1 = simd::load(max + 4);
  // Two accumulators per half so the max chain does not wait on its own latency.
  f32x4 m0 = old0, m1 = old1, m2 = old0, m3 = old1;
  std::size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    m0 = simd::max(m0, simd::load(s + i * kCols));
    m1 = simd::max(m1, simd::load(s + i * kCols + 4));
    m2 = simd::max(m2, simd::load(s + i * kCols + 8));
    m3 = simd::max(m3, simd::load(s + i * kCols + 12));
  }
  if (i < n) {
    m0 = simd::max(m0, simd::load(s + i * kCols));
    m1 = simd::max(m1, simd::load(s + i * kCols + 4));
  }
  // max() lets a NaN in its first operand through; max(m0, m2) keeps an overflow NaN visible.
  m0 = simd::max(m0, m2);
  m1 = simd::max(m1, m3);
  simd::store(max, m0);
  simd::store(max + 4, m1);

  // base = m where m > -inf, else 0: a column with nothing visible yet keeps exp(-inf) = 0.
  const f32x4 ninf = simd::splat(kNegInf);
  const f32x4 base0 = simd::and_not(m0, simd::equal(m0, ninf));
  const f32x4 base1 = simd::and_not(m1, simd::equal(m1, ninf));
  const f32x4 r0 = simd::exp2<M>(simd::sub(old0, base0)),
              r1 = simd::exp2<M>(simd::sub(old1, base1));
  simd::store(rescale, r0);
  simd::store(rescale + 4, r1);

  f32x4 sum0 = simd::splat(0.0f), sum1 = sum0;
  float* row = s;
  for (float* const end = s + n * kCols; row != end; row += kCols) {
    const f32x4 e0 = simd::exp2<M>(simd::sub(simd::load(row), base0));
    const f32x4 e1 = simd::exp2<M>(simd::sub(simd::load(row + 4), base1));
    simd::store(row, e0);
    simd::store(row + 4, e1);
    sum0 = simd::add(sum0, e0);
    sum1 = simd::add(sum1, e1);
  }
  simd::store(sum, M::apply(simd::load(sum), r0, sum0));
  simd::store(sum + 4, M::apply(simd::load(sum + 4), r1, sum1));
}
}  // namespace

void f32_online_softmax__simd128_x8(std::size_t n, float* s, float* max, float* sum,
                                    float* rescale) noexcept {
  online_softmax<simd::MulAdd>(n, s, max, sum, rescale);
}

#if ATTNLENS_HAVE_RELAXED_SIMD
void f32_online_softmax__relaxedsimd_x8(std::size_t n, float* s, float* max, float* sum,
                                        float* rescale) noexcept {
  online_softmax<simd::RelaxedMulAdd>(n, s, max, sum, rescale);
}
#endif
#endif  // ATTNLENS_HAVE_SIMD

}  // namespace attnlens::kernels
