// C[m, n] (+)= A[m, k] * B[k, n], row-major. The workhorse of attention: scores are
// Q * K^T with K^T packed per tile, the weighted sum is P * V, projections are X * W.
#include <cstddef>

#include "kernels/kernels_internal.h"

namespace attnlens::kernels {

void f32_gemm__scalar(std::size_t m, std::size_t n, std::size_t k, const float* a,
                      std::size_t lda, const float* b, std::size_t ldb, float* c,
                      std::size_t ldc, bool accumulate) noexcept {
  for (std::size_t i = 0; i < m; ++i) {
    float* crow = c + i * ldc;
    if (!accumulate) {
      for (std::size_t j = 0; j < n; ++j) crow[j] = 0.0f;
    }
    for (std::size_t p = 0; p < k; ++p) {
      const float aip = a[i * lda + p];
      const float* brow = b + p * ldb;
      for (std::size_t j = 0; j < n; ++j) crow[j] += aip * brow[j];
    }
  }
}

#if ATTNLENS_HAVE_SIMD
namespace {

using simd::f32x4;

// An MR x (4*NV) register tile of C: each step over k broadcasts one A element per row and
// multiplies it into NV vectors of one B row. Accumulators live in registers for the whole k
// loop, so C is read and written once per tile.
template <int MR, int NV>
__attribute__((always_inline)) inline void tile(std::size_t k, const float* a, std::size_t lda,
                                                const float* b, std::size_t ldb, float* c,
                                                std::size_t ldc, bool accumulate) {
  f32x4 acc[MR][NV];
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < NV; ++v) {
      acc[r][v] = accumulate ? simd::load(c + r * ldc + 4 * v) : simd::splat(0.0f);
    }
  }
  for (std::size_t p = 0; p < k; ++p) {
    f32x4 bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = simd::load(b + p * ldb + 4 * v);
    for (int r = 0; r < MR; ++r) {
      const f32x4 ar = simd::load_splat(a + r * lda + p);
      for (int v = 0; v < NV; ++v) acc[r][v] = simd::mul_add(ar, bv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < NV; ++v) simd::store(c + r * ldc + 4 * v, acc[r][v]);
  }
}

// Columns past the last full vector: plain dot products.
template <int MR>
inline void tail_columns(std::size_t rows, std::size_t j0, std::size_t n, std::size_t k,
                         const float* a, std::size_t lda, const float* b, std::size_t ldb,
                         float* c, std::size_t ldc, bool accumulate) {
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t j = j0; j < n; ++j) {
      float s = accumulate ? c[r * ldc + j] : 0.0f;
      for (std::size_t p = 0; p < k; ++p) s += a[r * lda + p] * b[p * ldb + j];
      c[r * ldc + j] = s;
    }
  }
}

// One band of MR rows: full NV-vector tiles, then one-vector tiles, then scalar columns.
template <int MR, int NV>
inline void row_band(std::size_t n, std::size_t k, const float* a, std::size_t lda,
                     const float* b, std::size_t ldb, float* c, std::size_t ldc,
                     bool accumulate) {
  std::size_t j = 0;
  for (; j + 4 * NV <= n; j += 4 * NV) tile<MR, NV>(k, a, lda, b + j, ldb, c + j, ldc, accumulate);
  for (; j + 4 <= n; j += 4) tile<MR, 1>(k, a, lda, b + j, ldb, c + j, ldc, accumulate);
  if (j < n) tail_columns<MR>(MR, j, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

template <int MR, int NV>
void gemm_simd(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
               const float* b, std::size_t ldb, float* c, std::size_t ldc, bool accumulate) {
  std::size_t i = 0;
  for (; i + MR <= m; i += MR) {
    row_band<MR, NV>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, accumulate);
  }
  // Leftover rows one at a time, still vectorised across columns.
  for (; i < m; ++i) row_band<1, NV>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, accumulate);
}

}  // namespace

void f32_gemm__simd128_4x8(std::size_t m, std::size_t n, std::size_t k, const float* a,
                           std::size_t lda, const float* b, std::size_t ldb, float* c,
                           std::size_t ldc, bool accumulate) noexcept {
  gemm_simd<4, 2>(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

void f32_gemm__simd128_6x8(std::size_t m, std::size_t n, std::size_t k, const float* a,
                           std::size_t lda, const float* b, std::size_t ldb, float* c,
                           std::size_t ldc, bool accumulate) noexcept {
  gemm_simd<6, 2>(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

void f32_gemm__simd128_4x16(std::size_t m, std::size_t n, std::size_t k, const float* a,
                            std::size_t lda, const float* b, std::size_t ldb, float* c,
                            std::size_t ldc, bool accumulate) noexcept {
  gemm_simd<4, 4>(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}
#endif  // ATTNLENS_HAVE_SIMD

}  // namespace attnlens::kernels
