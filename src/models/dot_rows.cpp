// C = A B^T over row-major A [m, k] and B [n, k]: the tied LM head, where B is the token
// embedding matrix [vocab, hidden] read in place. With few rows of A (one position's logits)
// the product is a stream over B, so each B row is loaded once and used for every row of A.
#include <cstddef>

#include "models/ops.h"

namespace attnlens::models {

void f32_dot_rows__scalar(std::size_t m, std::size_t n, std::size_t k, const float* a,
                          std::size_t lda, const float* b, std::size_t ldb, float* c,
                          std::size_t ldc) noexcept {
  for (std::size_t j = 0; j < n; ++j) {
    const float* brow = b + j * ldb;
    for (std::size_t i = 0; i < m; ++i) {
      const float* arow = a + i * lda;
      float s = 0.0f;
      for (std::size_t p = 0; p < k; ++p) s += arow[p] * brow[p];
      c[i * ldc + j] = s;
    }
  }
}

#if ATTNLENS_HAVE_SIMD
// Four rows of B at a time against one row of A: four vector accumulators over k, transposed
// and added so the four dot products leave as one vector.
void f32_dot_rows__simd128_4x1(std::size_t m, std::size_t n, std::size_t k, const float* a,
                               std::size_t lda, const float* b, std::size_t ldb, float* c,
                               std::size_t ldc) noexcept {
  using simd::f32x4;
  const std::size_t k4 = k / 4 * 4;
  std::size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const float* b0 = b + j * ldb;
    const float* b1 = b0 + ldb;
    const float* b2 = b1 + ldb;
    const float* b3 = b2 + ldb;
    for (std::size_t i = 0; i < m; ++i) {
      const float* arow = a + i * lda;
      f32x4 s0 = simd::splat(0.0f), s1 = s0, s2 = s0, s3 = s0;
      for (std::size_t p = 0; p < k4; p += 4) {
        const f32x4 x = simd::load(arow + p);
        s0 = simd::mul_add(x, simd::load(b0 + p), s0);
        s1 = simd::mul_add(x, simd::load(b1 + p), s1);
        s2 = simd::mul_add(x, simd::load(b2 + p), s2);
        s3 = simd::mul_add(x, simd::load(b3 + p), s3);
      }
      simd::transpose4(s0, s1, s2, s3);
      alignas(16) float sums[4];
      simd::store(sums, simd::add(simd::add(s0, s1), simd::add(s2, s3)));
      for (std::size_t p = k4; p < k; ++p) {
        sums[0] += arow[p] * b0[p];
        sums[1] += arow[p] * b1[p];
        sums[2] += arow[p] * b2[p];
        sums[3] += arow[p] * b3[p];
      }
      for (int r = 0; r < 4; ++r) c[i * ldc + j + r] = sums[r];
    }
  }
  for (; j < n; ++j) {
    const float* brow = b + j * ldb;
    for (std::size_t i = 0; i < m; ++i) {
      const float* arow = a + i * lda;
      f32x4 acc = simd::splat(0.0f);
      for (std::size_t p = 0; p < k4; p += 4) {
        acc = simd::mul_add(simd::load(arow + p), simd::load(brow + p), acc);
      }
      float s = simd::hsum(acc);
      for (std::size_t p = k4; p < k; ++p) s += arow[p] * brow[p];
      c[i * ldc + j] = s;
    }
  }
}
#endif

}  // namespace attnlens::models
