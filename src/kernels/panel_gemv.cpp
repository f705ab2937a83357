// The one-row panel product (contract in attnlens/kernels.h, PanelGemvFn): y = x * B over the
// same packed column panels the panel GEMM reads, for the linear layers of a decoding step, where
// a 4-row tile would spend 3 of its 4 rows on padding. Each column is summed in the order and
// with the operations of the matching panel GEMM, so a row comes out with the same bits.
#include <cstddef>

#include "kernels/kernels_internal.h"

namespace attnlens::kernels {

namespace {
constexpr std::size_t kCols = kPanelCols;
}  // namespace

void f32_panel_gemv__scalar_1x8(std::size_t panels, std::size_t k, const float* x,
                                std::size_t x_step, const float* b, float* y) noexcept {
  for (std::size_t n = 0; n < panels; ++n, b += k * kCols, y += kCols) {
    float acc[kCols];
    for (std::size_t j = 0; j < kCols; ++j) acc[j] = 0.0f;
    for (std::size_t p = 0; p < k; ++p) {
      for (std::size_t j = 0; j < kCols; ++j) acc[j] += x[p * x_step] * b[p * kCols + j];
    }
    for (std::size_t j = 0; j < kCols; ++j) y[j] = acc[j];
  }
}

#if ATTNLENS_HAVE_SIMD
namespace {
// Two panels at a time: 4 independent accumulator chains (one per half panel) hide the add
// latency, since a column's sum must stay one chain to keep the panel GEMM's order. That is
// 4 accumulators, 4 B vectors, 1 broadcast and 1 product temporary: well inside V8's 15 xmm
// registers. A decoding step streams every weight once, so past this the loop waits on memory.
template <typename M>
void panel_gemv(std::size_t panels, std::size_t k, const float* x, std::size_t x_step,
                const float* b, float* y) {
  using simd::f32x4;
  const std::size_t panel_floats = k * kCols;
  std::size_t n = 0;
  for (; n + 2 <= panels; n += 2, b += 2 * panel_floats, y += 2 * kCols) {
    f32x4 c00 = simd::splat(0.0f), c01 = c00, c10 = c00, c11 = c00;
    const float* xp = x;
    const float* b0 = b;
    const float* b1 = b + panel_floats;
    for (std::size_t p = 0; p < k; ++p, xp += x_step, b0 += kCols, b1 += kCols) {
      const f32x4 v = simd::load_splat(xp);
      c00 = M::apply(v, simd::load(b0), c00);
      c01 = M::apply(v, simd::load(b0 + 4), c01);
      c10 = M::apply(v, simd::load(b1), c10);
      c11 = M::apply(v, simd::load(b1 + 4), c11);
    }
    simd::store(y, c00);
    simd::store(y + 4, c01);
    simd::store(y + 8, c10);
    simd::store(y + 12, c11);
  }
  if (n < panels) {
    f32x4 c0 = simd::splat(0.0f), c1 = c0;
    const float* xp = x;
    const float* bp = b;
    for (std::size_t p = 0; p < k; ++p, xp += x_step, bp += kCols) {
      const f32x4 v = simd::load_splat(xp);
      c0 = M::apply(v, simd::load(bp), c0);
      c1 = M::apply(v, simd::load(bp + 4), c1);
    }
    simd::store(y, c0);
    simd::store(y + 4, c1);
  }
}
}  // namespace

void f32_panel_gemv__simd128_2x8(std::size_t panels, std::size_t k, const float* x,
                                 std::size_t x_step, const float* b, float* y) noexcept {
  panel_gemv<simd::MulAdd>(panels, k, x, x_step, b, y);
}

#if ATTNLENS_HAVE_RELAXED_SIMD
void f32_panel_gemv__relaxedsimd_2x8(std::size_t panels, std::size_t k, const float* x,
                                     std::size_t x_step, const float* b, float* y) noexcept {
  panel_gemv<simd::RelaxedMulAdd>(panels, k, x, x_step, b, y);
}
#endif
#endif  // ATTNLENS_HAVE_SIMD

}  // namespace attnlens::kernels
