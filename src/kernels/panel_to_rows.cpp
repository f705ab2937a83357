// A [n][8] panel block written out as scaled rows (contract in attnlens/kernels.h): how outputs,
// weights and scores leave attention's panel layout.
#include <cstddef>

#include "kernels/kernels_internal.h"

namespace attnlens::kernels {

namespace {
constexpr std::size_t kCols = kPanelCols;
}  // namespace

void f32_panel_to_rows__scalar_x8(std::size_t n, const float* panel, std::size_t rows,
                                  const float* scale, float* out, std::size_t ldo) noexcept {
  for (std::size_t j = 0; j < rows; ++j) {
    for (std::size_t i = 0; i < n; ++i) out[j * ldo + i] = panel[i * kCols + j] * scale[j];
  }
}

#if ATTNLENS_HAVE_SIMD
// 4 x 4 blocks: four vector loads down the panel, a register transpose, four scaled vector
// stores along the rows; remainders go element by element.
void f32_panel_to_rows__simd128_x8(std::size_t n, const float* panel, std::size_t rows,
                                   const float* scale, float* out, std::size_t ldo) noexcept {
  using simd::f32x4;
  const std::size_t n4 = n / 4 * 4;
  std::size_t j = 0;
  for (; j + 4 <= rows; j += 4) {
    const f32x4 s0 = simd::splat(scale[j]), s1 = simd::splat(scale[j + 1]),
                s2 = simd::splat(scale[j + 2]), s3 = simd::splat(scale[j + 3]);
    float* o = out + j * ldo;
    const float* p = panel + j;
    for (std::size_t i = 0; i < n4; i += 4, p += 4 * kCols) {
      f32x4 r0 = simd::load(p), r1 = simd::load(p + kCols), r2 = simd::load(p + 2 * kCols),
            r3 = simd::load(p + 3 * kCols);
      simd::transpose4(r0, r1, r2, r3);
      simd::store(o + i, simd::mul(r0, s0));
      simd::store(o + ldo + i, simd::mul(r1, s1));
      simd::store(o + 2 * ldo + i, simd::mul(r2, s2));
      simd::store(o + 3 * ldo + i, simd::mul(r3, s3));
    }
  }
  for (std::size_t jj = 0; jj < rows; ++jj) {
    // Rows past the last group of 4 entirely, then every row's last n % 4 entries.
    for (std::size_t i = jj < j ? n4 : 0; i < n; ++i) {
      out[jj * ldo + i] = panel[i * kCols + jj] * scale[jj];
    }
  }
}
#endif  // ATTNLENS_HAVE_SIMD

}  // namespace attnlens::kernels
