// C[m, n] (+)= A[m, k] * B[k, n], row-major with any leading dimensions: the projections
// (X * W, and Q Wq^T, K Wk^T for the additive score). Attention itself runs on panel_gemm.
#include <cstddef>

#include "kernels/kernels_internal.h"

namespace attnlens::kernels {

void f32_gemm__scalar(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                      const float* b, std::size_t ldb, float* c, std::size_t ldc,
                      bool accumulate) noexcept {
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

// Blocking: a B panel of [kKc][8] floats (8 KiB, on the stack) is packed per block of kMb rows
// of A, whose kMb x kKc floats (16 KiB) then stay in L1 across all of B's column panels.
constexpr std::size_t kKc = 256;
constexpr std::size_t kMb = 16;

// A MR x 8 register tile of C over a packed B panel ([k][8], contiguous): each k step
// broadcasts one A element per row and multiplies it into the panel's two vectors.
// Accumulators live in registers for the whole k loop. The loop advances one pointer per A
// row and one for the panel (Emscripten runs LLVM without loop strength reduction), one k step
// per iteration (V8 hoists a block's loads, so unrolling here would spill). MR = 4 fits V8's 15
// xmm registers: 8 accumulators, 2 B vectors, 4 broadcasts, 1 product.
template <int MR, typename M>
__attribute__((always_inline)) inline void panel_tile(std::size_t k, const float* a,
                                                      std::size_t lda, const float* bpanel,
                                                      float* c, std::size_t ldc, bool accumulate) {
  f32x4 acc[MR][2];
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < 2; ++v) {
      acc[r][v] = accumulate ? simd::load(c + r * ldc + 4 * v) : simd::splat(0.0f);
    }
  }
  const float* ar[MR];
  for (int r = 0; r < MR; ++r) ar[r] = a + r * lda;
  const float* bp = bpanel;
  for (const float* const a_end = a + k; ar[0] != a_end; bp += 8) {
    const f32x4 b0 = simd::load(bp), b1 = simd::load(bp + 4);
    for (int r = 0; r < MR; ++r) {
      const f32x4 x = simd::load_splat(ar[r]++);
      acc[r][0] = M::apply(x, b0, acc[r][0]);
      acc[r][1] = M::apply(x, b1, acc[r][1]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < 2; ++v) simd::store(c + r * ldc + 4 * v, acc[r][v]);
  }
}

// C[m, 4] (+)= A * B[:, 4 columns] read in place, for a last group of 4 columns.
template <typename M>
void four_columns(std::size_t m, std::size_t k, const float* a, std::size_t lda, const float* b,
                  std::size_t ldb, float* c, std::size_t ldc, bool accumulate) {
  for (std::size_t i = 0; i < m; ++i, a += lda, c += ldc) {
    f32x4 acc = accumulate ? simd::load(c) : simd::splat(0.0f);
    const float* bp = b;
    for (const float *ap = a, *const a_end = a + k; ap != a_end; ++ap, bp += ldb) {
      acc = M::apply(simd::load_splat(ap), simd::load(bp), acc);
    }
    simd::store(c, acc);
  }
}

// Columns past the last group of 4: plain dot products.
void tail_columns(std::size_t m, std::size_t j0, std::size_t n, std::size_t k, const float* a,
                  std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
                  bool accumulate) {
  for (std::size_t r = 0; r < m; ++r) {
    for (std::size_t j = j0; j < n; ++j) {
      float s = accumulate ? c[r * ldc + j] : 0.0f;
      for (std::size_t p = 0; p < k; ++p) s += a[r * lda + p] * b[p * ldb + j];
      c[r * ldc + j] = s;
    }
  }
}

// B is copied 8 columns x kKc rows at a time into a contiguous panel (read in place, B's rows
// lie ldb floats apart, and for ldb a multiple of 256 all of a tile's rows share 4 of the L1's
// 64 sets), and the rows of A go in blocks small enough to stay in L1 across B's panels
// (without both, a 256 x 256 x 256 product ran at 8 GFLOP/s).
template <typename M>
void gemm_simd(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
               const float* b, std::size_t ldb, float* c, std::size_t ldc, bool accumulate) {
  if (k == 0) {  // C = 0, or unchanged when accumulating
    for (std::size_t i = 0; i < m && !accumulate; ++i) {
      for (std::size_t j = 0; j < n; ++j) c[i * ldc + j] = 0.0f;
    }
    return;
  }
  alignas(16) float panel[kKc * 8];
  const std::size_t n8 = n / 8 * 8;
  for (std::size_t p0 = 0; p0 < k; p0 += kKc) {
    const std::size_t kc = k - p0 < kKc ? k - p0 : kKc;
    const bool acc_mode = accumulate || p0 > 0;
    const float* a_p = a + p0;
    const float* b_p = b + p0 * ldb;
    for (std::size_t i0 = 0; i0 < m; i0 += kMb) {
      const std::size_t i1 = m - i0 < kMb ? m : i0 + kMb;
      for (std::size_t j = 0; j < n8; j += 8) {
        for (std::size_t p = 0; p < kc; ++p) {
          simd::store(panel + 8 * p, simd::load(b_p + p * ldb + j));
          simd::store(panel + 8 * p + 4, simd::load(b_p + p * ldb + j + 4));
        }
        std::size_t i = i0;
        for (; i + 4 <= i1; i += 4) {
          panel_tile<4, M>(kc, a_p + i * lda, lda, panel, c + i * ldc + j, ldc, acc_mode);
        }
        for (; i < i1; ++i) {
          panel_tile<1, M>(kc, a_p + i * lda, lda, panel, c + i * ldc + j, ldc, acc_mode);
        }
      }
    }
    std::size_t j = n8;
    if (j + 4 <= n) {
      four_columns<M>(m, kc, a_p, lda, b_p + j, ldb, c + j, ldc, acc_mode);
      j += 4;
    }
    if (j < n) tail_columns(m, j, n, kc, a_p, lda, b_p, ldb, c, ldc, acc_mode);
  }
}

}  // namespace

void f32_gemm__simd128_4x8(std::size_t m, std::size_t n, std::size_t k, const float* a,
                           std::size_t lda, const float* b, std::size_t ldb, float* c,
                           std::size_t ldc, bool accumulate) noexcept {
  gemm_simd<simd::MulAdd>(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

#if ATTNLENS_HAVE_RELAXED_SIMD
void f32_gemm__relaxedsimd_4x8(std::size_t m, std::size_t n, std::size_t k, const float* a,
                               std::size_t lda, const float* b, std::size_t ldb, float* c,
                               std::size_t ldc, bool accumulate) noexcept {
  gemm_simd<simd::RelaxedMulAdd>(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}
#endif
#endif  // ATTNLENS_HAVE_SIMD

}  // namespace attnlens::kernels
