// The panel GEMM micro-kernel (contract in attnlens/kernels.h): C_t[4][8] (scaled) += A_t * B over
// packed panels, and its strided form on A read in place (the same operations in the same order,
// so the same bits). Attention spends almost all its arithmetic here.
#include <cstddef>

#include "kernels/kernels_internal.h"

namespace attnlens::kernels {

namespace {
constexpr std::size_t kRows = kPanelRows, kCols = kPanelCols;
}  // namespace

void f32_panel_gemm_strided__scalar_4x8(std::size_t tiles, std::size_t k, const float* a,
                                        std::size_t a_stride, std::size_t a_step, std::size_t a_row,
                                        const float* b, float* c, const float* c_scale) noexcept {
  for (std::size_t t = 0; t < tiles; ++t, a += a_stride, c += kRows * kCols) {
    float acc[kRows][kCols];
    for (std::size_t r = 0; r < kRows; ++r) {
      for (std::size_t j = 0; j < kCols; ++j)
        acc[r][j] = c_scale ? c[r * kCols + j] * c_scale[j] : 0.0f;
    }
    for (std::size_t p = 0; p < k; ++p) {
      for (std::size_t r = 0; r < kRows; ++r) {
        for (std::size_t j = 0; j < kCols; ++j)
          acc[r][j] += a[p * a_step + r * a_row] * b[p * kCols + j];
      }
    }
    for (std::size_t r = 0; r < kRows; ++r) {
      for (std::size_t j = 0; j < kCols; ++j) c[r * kCols + j] = acc[r][j];
    }
  }
}

void f32_panel_gemm__scalar_4x8(std::size_t tiles, std::size_t k, const float* a,
                                std::size_t a_stride, const float* b, float* c,
                                const float* c_scale) noexcept {
  f32_panel_gemm_strided__scalar_4x8(tiles, k, a, a_stride, kRows, 1, b, c, c_scale);
}

#if ATTNLENS_HAVE_SIMD
namespace {
// The 4x8 register tile: 8 accumulators, C row r = columns [0, 4) and [4, 8).
struct Tile {
  simd::f32x4 c00, c01, c10, c11, c20, c21, c30, c31;
};

// C scaled by c_scale per column, or 0 without c_scale.
ATTNLENS_VEC_INLINE Tile load_tile(const float* c, const float* c_scale) {
  using simd::f32x4;
  Tile acc;
  if (c_scale != nullptr) {
    const f32x4 s0 = simd::load(c_scale), s1 = simd::load(c_scale + 4);
    acc.c00 = simd::mul(simd::load(c + 0), s0);
    acc.c01 = simd::mul(simd::load(c + 4), s1);
    acc.c10 = simd::mul(simd::load(c + 8), s0);
    acc.c11 = simd::mul(simd::load(c + 12), s1);
    acc.c20 = simd::mul(simd::load(c + 16), s0);
    acc.c21 = simd::mul(simd::load(c + 20), s1);
    acc.c30 = simd::mul(simd::load(c + 24), s0);
    acc.c31 = simd::mul(simd::load(c + 28), s1);
  } else {
    acc.c00 = acc.c01 = acc.c10 = acc.c11 = acc.c20 = acc.c21 = acc.c30 = acc.c31 =
        simd::splat(0.0f);
  }
  return acc;
}

ATTNLENS_VEC_INLINE void store_tile(float* c, const Tile& acc) {
  simd::store(c + 0, acc.c00);
  simd::store(c + 4, acc.c01);
  simd::store(c + 8, acc.c10);
  simd::store(c + 12, acc.c11);
  simd::store(c + 16, acc.c20);
  simd::store(c + 20, acc.c21);
  simd::store(c + 24, acc.c30);
  simd::store(c + 28, acc.c31);
}

// One k step: C += A[p][0..4) (broadcast; A[p][r] at ap[r * row]) x B[p][0..8).
template <typename M>
ATTNLENS_VEC_INLINE void step(Tile& t, const float* ap, std::size_t row, const float* bp) {
  using simd::f32x4;
  const f32x4 b0 = simd::load(bp), b1 = simd::load(bp + 4);
  f32x4 x = simd::load_splat(ap);
  t.c00 = M::apply(x, b0, t.c00);
  t.c01 = M::apply(x, b1, t.c01);
  x = simd::load_splat(ap + row);
  t.c10 = M::apply(x, b0, t.c10);
  t.c11 = M::apply(x, b1, t.c11);
  x = simd::load_splat(ap + 2 * row);
  t.c20 = M::apply(x, b0, t.c20);
  t.c21 = M::apply(x, b1, t.c21);
  x = simd::load_splat(ap + 3 * row);
  t.c30 = M::apply(x, b0, t.c30);
  t.c31 = M::apply(x, b1, t.c31);
}

// Register budget under V8 on x86 (15 usable xmm registers): 8 accumulators, the 2 B vectors
// and 4 broadcasts of A, which V8 hoists to the top of their basic block, plus 1 product
// temporary (none with relaxed_madd) = 15. So a basic block may hold only one k step: two steps
// in one block would hoist 12 loads and spill.
//
// mul + add (16 arithmetic instructions a step) is bound by the arithmetic ports: one step per
// loop iteration, which V8 unrolls by two itself, runs at ~97% of the register-only peak.
// relaxed_madd does the same work in 8 instructions, and then the loop's own instructions
// (pointer increments, V8's stack check each iteration, compare and branch) cost ~12%: so that
// loop runs four steps an iteration, with an exit test before each later step. The tests split
// the body into four basic blocks (one step each, no spills) and handle any k; the stack check
// and the increments of B then come once per four steps. Two steps an iteration ran at ~95% of
// the relaxed_madd peak instead of ~88%; four took 4-9% off the panel_gemm lines' times again,
// eight nothing more (bench/README.md, "What the kernels' design choices measured").
template <typename M, int kStepsPerIteration>
void panel_gemm(std::size_t tiles, std::size_t k, const float* a, std::size_t a_stride,
                const float* b, float* c, const float* c_scale) {
  using simd::f32x4;
  static_assert(kStepsPerIteration == 1 || kStepsPerIteration == 4);
  for (std::size_t t = 0; t < tiles; ++t, a += a_stride, c += kRows * kCols) {
    Tile acc = load_tile(c, c_scale);
    const float* ap = a;
    const float* bp = b;
    const float* const a_end = a + k * kRows;
    if constexpr (kStepsPerIteration > 1) {
      while (ap != a_end) {
        step<M>(acc, ap, 1, bp);
        ap += kRows;
        // Each later step follows an exit test, which ends the basic block before it.
        for (int s = 1; s < kStepsPerIteration; ++s) {
          if (ap == a_end) break;
          // An empty asm hides that ap moved by a constant, so every step's broadcasts use
          // the same wasm offsets (0, 4, 8, 12) as the first: V8 keeps one loop-invariant base
          // register per offset, and four more offsets would cost an address add per broadcast.
          __asm__("" : "+r"(ap));
          step<M>(acc, ap, 1, bp + s * kCols);
          ap += kRows;
        }
        bp += kStepsPerIteration * kCols;
      }
    } else {
      for (; ap != a_end; ap += kRows, bp += kCols) step<M>(acc, ap, 1, bp);
    }
    store_tile(c, acc);
  }
}

// A in place: one step per iteration (the unpacked rows serve calls with few queries, where the
// loop overhead matters less than not packing).
template <typename M>
void panel_gemm_strided(std::size_t tiles, std::size_t k, const float* a, std::size_t a_stride,
                        std::size_t a_step, std::size_t a_row, const float* b, float* c,
                        const float* c_scale) {
  for (std::size_t t = 0; t < tiles; ++t, a += a_stride, c += kRows * kCols) {
    Tile acc = load_tile(c, c_scale);
    const float* ap = a;
    const float* bp = b;
    for (std::size_t p = 0; p < k; ++p, ap += a_step, bp += kCols) step<M>(acc, ap, a_row, bp);
    store_tile(c, acc);
  }
}
}  // namespace

void f32_panel_gemm_strided__simd128_4x8(std::size_t tiles, std::size_t k, const float* a,
                                         std::size_t a_stride, std::size_t a_step,
                                         std::size_t a_row, const float* b, float* c,
                                         const float* c_scale) noexcept {
  panel_gemm_strided<simd::MulAdd>(tiles, k, a, a_stride, a_step, a_row, b, c, c_scale);
}

void f32_panel_gemm__simd128_4x8(std::size_t tiles, std::size_t k, const float* a,
                                 std::size_t a_stride, const float* b, float* c,
                                 const float* c_scale) noexcept {
  panel_gemm<simd::MulAdd, 1>(tiles, k, a, a_stride, b, c, c_scale);
}

#if ATTNLENS_HAVE_RELAXED_SIMD
void f32_panel_gemm__relaxedsimd_4x8(std::size_t tiles, std::size_t k, const float* a,
                                     std::size_t a_stride, const float* b, float* c,
                                     const float* c_scale) noexcept {
  panel_gemm<simd::RelaxedMulAdd, 4>(tiles, k, a, a_stride, b, c, c_scale);
}

void f32_panel_gemm_strided__relaxedsimd_4x8(std::size_t tiles, std::size_t k, const float* a,
                                             std::size_t a_stride, std::size_t a_step,
                                             std::size_t a_row, const float* b, float* c,
                                             const float* c_scale) noexcept {
  panel_gemm_strided<simd::RelaxedMulAdd>(tiles, k, a, a_stride, a_step, a_row, b, c, c_scale);
}
#endif
#endif  // ATTNLENS_HAVE_SIMD

}  // namespace attnlens::kernels
