// Attention backward's element-wise step (contract in attnlens/kernels.h): a [n][8] block whose
// rows are queries and whose columns are the 8 keys of one key panel. The weights come back from
// the forward's row log-sum-exp, the logit gradient is formed in place, and it is also written
// transposed per 4 rows, the A-panel layout in which dQ += dS K runs on the panel GEMM (with
// t_stride apart, several key panels' blocks share one A panel).
#include <cmath>
#include <cstddef>

#include "kernels/kernels_internal.h"

namespace attnlens::kernels {

namespace {
constexpr std::size_t kCols = kPanelCols;
constexpr std::size_t kGroup = kPanelRows;  // rows transposed together
}  // namespace

void f32_softmax_backward__scalar_x8(std::size_t n, float* s, float* dp, const float* base,
                                     const float* delta, float* ds_t,
                                     std::size_t t_stride) noexcept {
  const std::size_t padded = (n + kGroup - 1) / kGroup * kGroup;
  for (std::size_t i = 0; i < padded; ++i) {
    float* t = ds_t + (i / kGroup) * t_stride + i % kGroup;
    for (std::size_t j = 0; j < kCols; ++j) {
      if (i >= n) {
        t[j * kGroup] = 0.0f;
        continue;
      }
      float x = s[i * kCols + j] - base[i];
      x = x > 0.0f ? 0.0f : x;  // weights are at most 1; a NaN stays NaN
      const float p = std::exp2(x);
      const float g = p * (dp[i * kCols + j] - delta[i]);
      s[i * kCols + j] = p;
      dp[i * kCols + j] = g;
      t[j * kGroup] = g;
    }
  }
}

#if ATTNLENS_HAVE_SIMD
namespace {
using simd::f32x4;

// One row: its weights into s, its gradient into dp and into g0 (keys 0..3), g1 (keys 4..7).
template <typename M>
ATTNLENS_VEC_INLINE void row(float* s, float* dp, float base, float delta, f32x4& g0, f32x4& g1) {
  const f32x4 b = simd::splat(base), d = simd::splat(delta), zero = simd::splat(0.0f);
  // min() lets a NaN in its first operand through, so an overflowed logit stays visible.
  const f32x4 p0 = simd::exp2<M>(simd::min(simd::sub(simd::load(s), b), zero));
  const f32x4 p1 = simd::exp2<M>(simd::min(simd::sub(simd::load(s + 4), b), zero));
  simd::store(s, p0);
  simd::store(s + 4, p1);
  g0 = simd::mul(p0, simd::sub(simd::load(dp), d));
  g1 = simd::mul(p1, simd::sub(simd::load(dp + 4), d));
  simd::store(dp, g0);
  simd::store(dp + 4, g1);
}

template <typename M>
void softmax_backward(std::size_t n, float* s, float* dp, const float* base, const float* delta,
                      float* ds_t, std::size_t t_stride) {
  for (std::size_t i = 0; i < n; i += kGroup, ds_t += t_stride) {
    f32x4 a0, a1, b0, b1, c0, c1, d0, d1;
    const f32x4 zero = simd::splat(0.0f);
    a1 = b0 = b1 = c0 = c1 = d0 = d1 = zero;
    row<M>(s + i * kCols, dp + i * kCols, base[i], delta[i], a0, a1);
    // The last group may hold fewer than 4 rows: the missing ones transpose as zeros.
    if (i + 1 < n)
      row<M>(s + (i + 1) * kCols, dp + (i + 1) * kCols, base[i + 1], delta[i + 1], b0, b1);
    if (i + 2 < n)
      row<M>(s + (i + 2) * kCols, dp + (i + 2) * kCols, base[i + 2], delta[i + 2], c0, c1);
    if (i + 3 < n)
      row<M>(s + (i + 3) * kCols, dp + (i + 3) * kCols, base[i + 3], delta[i + 3], d0, d1);
    simd::transpose4(a0, b0, c0, d0);  // a0: key 0 of the 4 rows, b0: key 1, ...
    simd::transpose4(a1, b1, c1, d1);
    simd::store(ds_t + 0, a0);
    simd::store(ds_t + 4, b0);
    simd::store(ds_t + 8, c0);
    simd::store(ds_t + 12, d0);
    simd::store(ds_t + 16, a1);
    simd::store(ds_t + 20, b1);
    simd::store(ds_t + 24, c1);
    simd::store(ds_t + 28, d1);
  }
}
}  // namespace

void f32_softmax_backward__simd128_x8(std::size_t n, float* s, float* dp, const float* base,
                                      const float* delta, float* ds_t,
                                      std::size_t t_stride) noexcept {
  softmax_backward<simd::MulAdd>(n, s, dp, base, delta, ds_t, t_stride);
}

#if ATTNLENS_HAVE_RELAXED_SIMD
void f32_softmax_backward__relaxedsimd_x8(std::size_t n, float* s, float* dp, const float* base,
                                          const float* delta, float* ds_t,
                                          std::size_t t_stride) noexcept {
  softmax_backward<simd::RelaxedMulAdd>(n, s, dp, base, delta, ds_t, t_stride);
}
#endif
#endif  // ATTNLENS_HAVE_SIMD

}  // namespace attnlens::kernels
