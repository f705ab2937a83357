// The kernel registry: every micro-kernel variant compiled into this build, by name.
//
// Names follow `f32_<op>__<isa>[_<tile>]`, e.g. f32_gemm__simd128_4x8. "simd128" kernels are
// written once against a 128-bit vector abstraction (src/kernels/vec128.h) that maps to
// wasm_simd128.h under Emscripten and SSE2/NEON natively; "scalar" kernels are the plain C++
// twins. Building with ATTNLENS_NO_SIMD leaves only the scalar ones. Tests and benchmarks both
// expand this registry, so no variant goes untested or unmeasured.
#pragma once

#include <cstddef>

#include "attnlens/span.h"

namespace attnlens {

// C[m, n] (+)= A[m, k] * B[k, n]; row-major with leading dimensions; accumulate adds to C.
using GemmFn = void (*)(std::size_t m, std::size_t n, std::size_t k, const float* a,
                        std::size_t lda, const float* b, std::size_t ldb, float* c,
                        std::size_t ldc, bool accumulate);
// max(x[0..n)); -inf for n == 0.
using RowMaxFn = float (*)(const float* x, std::size_t n);
// out[j] = exp(x[j] - max) (out may alias x), returns the sum; exp(-inf) is exactly 0.
using ExpSumFn = float (*)(const float* x, float max, float* out, std::size_t n);
// out[j] = sum_a v[a] * tanh(qa[a] + kat[a * ldk + j]) for j < n (additive score of one query).
using AdditiveRowFn = void (*)(std::size_t hidden, const float* qa, const float* kat,
                               std::size_t ldk, const float* v, std::size_t n, float* out);

struct GemmKernel { const char* name; GemmFn fn; };
struct RowMaxKernel { const char* name; RowMaxFn fn; };
struct ExpSumKernel { const char* name; ExpSumFn fn; };
struct AdditiveRowKernel { const char* name; AdditiveRowFn fn; };

Span<const GemmKernel> gemm_kernels();
Span<const RowMaxKernel> row_max_kernels();
Span<const ExpSumKernel> exp_sum_kernels();
Span<const AdditiveRowKernel> additive_row_kernels();

// A consistent choice of one kernel per operation, used by attention().
struct KernelSet {
  const char* name;
  GemmFn gemm;
  RowMaxFn row_max;
  ExpSumFn exp_sum;
  AdditiveRowFn additive_row;
};

// "scalar" always; "simd128" unless built with ATTNLENS_NO_SIMD. The last one is the default.
Span<const KernelSet> kernel_sets();
const KernelSet& default_kernel_set();
const KernelSet* find_kernel_set(const char* name);  // nullptr if absent

// True when this build has the simd128 kernels.
bool simd_enabled();

}  // namespace attnlens
