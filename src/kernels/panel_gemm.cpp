// The panel GEMM micro-kernel (contract in attnlens/kernels.h): C_t[4][8] (scaled) += A_t * B over
// packed panels. Attention spends almost all its arithmetic here.
#include <cstddef>

#include "kernels/kernels_internal.h"

namespace attnlens::kernels {

namespace {
constexpr std::size_t kRows = kPanelRows, kCols = kPanelCols;
}  // namespace

void f32_panel_gemm__scalar_4x8(std::size_t tiles, std::size_t k, const float* a,
                                std::size_t a_stride, const float* b, float* c,
                                const float* c_scale) noexcept {
  for (std::size_t t = 0; t < tiles; ++t, a += a_stride, c += kRows * kCols) {
    float acc[kRows][kCols];
    for (std::size_t r = 0; r < kRows; ++r) {
      for (std::size_t j = 0; j < kCols; ++j) acc[r][j] = c_scale ? c[r * kCols + j] * c_scale[j] : 0.0f;
    }
    for (std::size_t p = 0; p < k; ++p) {
      for (std::size_t r = 0; r < kRows; ++r) {
        for (std::size_t j = 0; j < kCols; ++j) acc[r][j] += a[p * kRows + r] * b[p * kCols + j];
      }
    }
    for (std::size_t r = 0; r < kRows; ++r) {
      for (std::size_t j = 0; j < kCols; ++j) c[r * kCols + j] = acc[r][j];
    }
  }
}

#if ATTNLENS_HAVE_SIMD
namespace {
// Register budget under V8 on x86 (15 usable xmm registers): 8 accumulators, the 2 B vectors
// and 4 broadcasts of A, which V8 loads at the top of the loop body, plus 1 product
// temporary (none with relaxed_madd) = 15. One k step per loop iteration on purpose: unrolling
// in the source puts the loads of several steps into one basic block, V8 hoists them all and
// spills; V8 unrolls the loop itself, keeping each step's loads in their own block. Every
// address is a pointer plus a constant offset, so the loop carries two pointer increments and a
// compare, and runs at ~97% of the register-only mul+add peak.
template <typename M>
void panel_gemm(std::size_t tiles, std::size_t k, const float* a, std::size_t a_stride,
                const float* b, float* c, const float* c_scale) {
  using simd::f32x4;
  for (std::size_t t = 0; t < tiles; ++t, a += a_stride, c += kRows * kCols) {
    f32x4 c00, c01, c10, c11, c20, c21, c30, c31;
    if (c_scale != nullptr) {
      const f32x4 s0 = simd::load(c_scale), s1 = simd::load(c_scale + 4);
      c00 = simd::mul(simd::load(c + 0), s0);
      c01 = simd::mul(simd::load(c + 4), s1);
      c10 = simd::mul(simd::load(c + 8), s0);
      c11 = simd::mul(simd::load(c + 12), s1);
      c20 = simd::mul(simd::load(c + 16), s0);
      c21 = simd::mul(simd::load(c + 20), s1);
      c30 = simd::mul(simd::load(c + 24), s0);
      c31 = simd::mul(simd::load(c + 28), s1);
    } else {
      c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = simd::splat(0.0f);
    }
    const float* ap = a;
    const float* bp = b;
    for (const float* const a_end = a + k * kRows; ap != a_end; ap += kRows, bp += kCols) {
      const f32x4 b0 = simd::load(bp), b1 = simd::load(bp + 4);
      f32x4 x = simd::load_splat(ap);
      c00 = M::apply(x, b0, c00);
      c01 = M::apply(x, b1, c01);
      x = simd::load_splat(ap + 1);
      c10 = M::apply(x, b0, c10);
      c11 = M::apply(x, b1, c11);
      x = simd::load_splat(ap + 2);
      c20 = M::apply(x, b0, c20);
      c21 = M::apply(x, b1, c21);
      x = simd::load_splat(ap + 3);
      c30 = M::apply(x, b0, c30);
      c31 = M::apply(x, b1, c31);
    }
    simd::store(c + 0, c00);
    simd::store(c + 4, c01);
    simd::store(c + 8, c10);
    simd::store(c + 12, c11);
    simd::store(c + 16, c20);
    simd::store(c + 20, c21);
    simd::store(c + 24, c30);
    simd::store(c + 28, c31);
  }
}
}  // namespace

void f32_panel_gemm__simd128_4x8(std::size_t tiles, std::size_t k, const float* a,
                                 std::size_t a_stride, const float* b, float* c,
                                 const float* c_scale) noexcept {
  panel_gemm<simd::MulAdd>(tiles, k, a, a_stride, b, c, c_scale);
}

#if ATTNLENS_HAVE_RELAXED_SIMD
void f32_panel_gemm__relaxedsimd_4x8(std::size_t tiles, std::size_t k, const float* a,
                                     std::size_t a_stride, const float* b, float* c,
                                     const float* c_scale) noexcept {
  panel_gemm<simd::RelaxedMulAdd>(tiles, k, a, a_stride, b, c, c_scale);
}
#endif
#endif  // ATTNLENS_HAVE_SIMD

}  // namespace attnlens::kernels
