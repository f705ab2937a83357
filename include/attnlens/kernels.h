// The kernel registry: every micro-kernel variant compiled into this build, by name.
//
// Names follow `f32_<op>__<isa>[_<tile>]`, e.g. f32_gemm__simd128_4x8. "simd128" kernels are
// written once against a 128-bit vector abstraction (src/kernels/vec128.h) that maps to
// wasm_simd128.h under Emscripten and SSE2/NEON natively; "scalar" kernels are the plain C++
// twins; "relaxedsimd" kernels are simd128 ones that multiply-add with relaxed SIMD's
// f32x4.relaxed_madd (wasm builds with ATTNLENS_RELAXED_SIMD only). Building with
// ATTNLENS_NO_SIMD leaves only the scalar ones. Tests and benchmarks both expand this registry,
// so no variant goes untested or unmeasured.
#pragma once

#include <cstddef>

#include "attnlens/span.h"

namespace attnlens {

// C[m, n] (+)= A[m, k] * B[k, n]; row-major with leading dimensions; accumulate adds to C.
using GemmFn = void (*)(std::size_t m, std::size_t n, std::size_t k, const float* a,
                        std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
                        bool accumulate) noexcept;
// max(x[0..n)); -inf for n == 0.
using RowMaxFn = float (*)(const float* x, std::size_t n) noexcept;
// out[j] = exp(x[j] - max) (out may alias x), returns the sum; exp(-inf) is exactly 0.
using ExpSumFn = float (*)(const float* x, float max, float* out, std::size_t n) noexcept;
// out[j] = sum_a v[a] * tanh(qa[a] + kat[a * ldk + j]) for j < n (additive score of one query).
using AdditiveRowFn = void (*)(std::size_t hidden, const float* qa, const float* kat,
                               std::size_t ldk, const float* v, std::size_t n, float* out) noexcept;

// The panel GEMM micro-kernel that both products of attention run on (scores and weights * V).
// Operands are packed so that every load is contiguous: for t < tiles,
//   C_t[r][j] = (c_scale ? C_t[r][j] * c_scale[j] : 0) + sum_{p < k} A_t[p][r] * B[p][j]
// with A_t = a + t * a_stride laid out [k][kPanelRows], B = b laid out [k][kPanelCols] and
// C_t = c + t * kPanelRows * kPanelCols laid out [kPanelRows][kPanelCols]. Attention packs keys
// (or values) as A panels of 4 rows and 8 queries as B, so C holds scores or outputs of 8
// queries side by side and the softmax runs down columns without horizontal reductions.
constexpr std::size_t kPanelRows = 4;
constexpr std::size_t kPanelCols = 8;
using PanelGemmFn = void (*)(std::size_t tiles, std::size_t k, const float* a, std::size_t a_stride,
                             const float* b, float* c, const float* c_scale) noexcept;
// The same product with A read where it lies instead of packed: A_t[p][r] is
// a[t * a_stride + p * a_step + r * a_row]. With a_step = kPanelRows and a_row = 1 it is
// PanelGemmFn, and it computes the same bits (the same operations in the same order). Attention
// reads a KV cache's key rows (a_step 1, a_row = depth) and value rows (a_step = value depth,
// a_row 1) this way when it has too few queries for packing them to pay.
using PanelGemmStridedFn = void (*)(std::size_t tiles, std::size_t k, const float* a,
                                    std::size_t a_stride, std::size_t a_step, std::size_t a_row,
                                    const float* b, float* c, const float* c_scale) noexcept;
// The panel product for one row: for n < panels,
//   y[n * kPanelCols + j] = sum_{p < k} x[p * x_step] * B_n[p][j],  B_n = b + n * k * kPanelCols
// over the column panels panel_gemm reads as B. A row of a row panel (x = a + r, x_step =
// kPanelRows) gives the same bits as row r of the set's panel_gemm without c_scale (the same
// operations in the same order): linear layers run their one-token decoding steps on it.
using PanelGemvFn = void (*)(std::size_t panels, std::size_t k, const float* x, std::size_t x_step,
                             const float* b, float* y) noexcept;
// One step of the online softmax over a [n][kPanelCols] block of logits in base 2 (natural
// logits times log2(e), which attention folds into the query scale), column by column (each
// column is one query). Per column j, with m = max(max[j], max_i s[i][j]) and base = m, or 0
// when m is -inf (nothing visible yet):
//   rescale[j] = 2^(max[j] - base)                 (what earlier partial sums must be scaled by)
//   s[i][j]    = 2^(s[i][j] - base)                (in place; -inf becomes exactly 0)
//   sum[j]     = sum[j] * rescale[j] + sum_i s[i][j]
//   max[j]     = m
// Starting from max = -inf, sum = 0 and normalising by sum at the end gives the plain softmax.
using OnlineSoftmaxFn = void (*)(std::size_t n, float* s, float* max, float* sum,
                                 float* rescale) noexcept;

// A [n][kPanelCols] block written out as rows (the layout callers see), each row scaled:
//   out[j * ldo + i] = panel[i * kPanelCols + j] * scale[j]   for i < n, j < rows <= kPanelCols.
// Outputs, weights and scores leave attention's panel layout through it.
using PanelToRowsFn = void (*)(std::size_t n, const float* panel, std::size_t rows,
                               const float* scale, float* out, std::size_t ldo) noexcept;

// Attention backward's element-wise step over a [n][kPanelCols] block whose rows are queries and
// whose columns are the 8 keys of one key panel (the backward runs a panel of keys against a run
// of queries). Per row i, with s the base-2 logits (as the forward forms them), dp[i][j] =
// dO_i . v_j, base[i] the row's log-sum-exp in base 2 (+inf for a row that sees no key) and
// delta[i] = dO_i . O_i:
//   p[i][j]  = 2^min(s[i][j] - base[i], 0)   in place of s: the softmax weights again (at most 1;
//                                            s = -inf or base = +inf give exactly 0)
//   g[i][j]  = p[i][j] * (dp[i][j] - delta[i])   in place of dp: the gradient of the logit
//   ds_t[(i / 4) * t_stride + j * 4 + i % 4] = g[i][j]   every 4 rows transposed (32 floats
//                                            per group, groups t_stride >= 32 apart): A panels of
//                                            dQ += dS K, in which the blocks of several key
//                                            panels sit side by side; the last group's rows past
//                                            n are 0
using SoftmaxBackwardFn = void (*)(std::size_t n, float* s, float* dp, const float* base,
                                   const float* delta, float* ds_t, std::size_t t_stride) noexcept;

// x[i] = a * tanh(x[i]) for i < n, in place: the logit soft cap (attention.h, softcap).
using SoftcapFn = void (*)(std::size_t n, float a, float* x) noexcept;

struct GemmKernel {
  const char* name;
  GemmFn fn;
};
struct RowMaxKernel {
  const char* name;
  RowMaxFn fn;
};
struct ExpSumKernel {
  const char* name;
  ExpSumFn fn;
};
struct AdditiveRowKernel {
  const char* name;
  AdditiveRowFn fn;
};
struct PanelGemmKernel {
  const char* name;
  PanelGemmFn fn;
};
struct PanelGemmStridedKernel {
  const char* name;
  PanelGemmStridedFn fn;
};
struct PanelGemvKernel {
  const char* name;
  PanelGemvFn fn;
};
struct OnlineSoftmaxKernel {
  const char* name;
  OnlineSoftmaxFn fn;
};
struct PanelToRowsKernel {
  const char* name;
  PanelToRowsFn fn;
};
struct SoftmaxBackwardKernel {
  const char* name;
  SoftmaxBackwardFn fn;
};

struct SoftcapKernel {
  const char* name;
  SoftcapFn fn;
};

Span<const GemmKernel> gemm_kernels();
Span<const RowMaxKernel> row_max_kernels();
Span<const ExpSumKernel> exp_sum_kernels();
Span<const AdditiveRowKernel> additive_row_kernels();
Span<const PanelGemmKernel> panel_gemm_kernels();
Span<const PanelGemmStridedKernel> panel_gemm_strided_kernels();
Span<const PanelGemvKernel> panel_gemv_kernels();
Span<const OnlineSoftmaxKernel> online_softmax_kernels();
Span<const PanelToRowsKernel> panel_to_rows_kernels();
Span<const SoftmaxBackwardKernel> softmax_backward_kernels();
Span<const SoftcapKernel> softcap_kernels();

// A consistent choice of one kernel per operation, used by attention().
struct KernelSet {
  const char* name;
  GemmFn gemm;
  RowMaxFn row_max;
  ExpSumFn exp_sum;
  AdditiveRowFn additive_row;
  PanelGemmFn panel_gemm;
  OnlineSoftmaxFn online_softmax;
  PanelToRowsFn panel_to_rows;
  SoftmaxBackwardFn softmax_backward;  // attention_backward() (training/attention_backward.h)
  SoftcapFn softcap;
  PanelGemmStridedFn panel_gemm_strided;  // panel_gemm's arithmetic on unpacked rows
  PanelGemvFn panel_gemv;                 // panel_gemm's arithmetic for one row
};

// "scalar" always; "simd128" unless built with ATTNLENS_NO_SIMD; "relaxedsimd" in wasm builds
// with ATTNLENS_RELAXED_SIMD (needs a browser with relaxed SIMD). The last one is the default.
Span<const KernelSet> kernel_sets();
const KernelSet& default_kernel_set();
const KernelSet* find_kernel_set(const char* name);  // nullptr if absent

// True when this build has the simd128 kernels.
bool simd_enabled();
// True when this build has the relaxedsimd kernels (f32x4.relaxed_madd).
bool relaxed_simd_enabled();

}  // namespace attnlens
