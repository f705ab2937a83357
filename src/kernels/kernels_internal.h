// Declarations of every kernel variant; registry.inc lists them for the registry, the tests and
// the benchmarks. Kernels never throw, and say so: under Emscripten's JS exception handling a
// call that might throw from a scope with destructors goes through a JS trampoline.
#pragma once

#include <cstddef>

#include "attnlens/kernels.h"
#include "kernels/vec128.h"

namespace attnlens::kernels {

#define ATTNLENS_DECLARE_GEMM(name)                                                       \
  void name(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, \
            const float* b, std::size_t ldb, float* c, std::size_t ldc, bool accumulate) noexcept;
#define ATTNLENS_DECLARE_ROW_MAX(name) float name(const float* x, std::size_t n) noexcept;
#define ATTNLENS_DECLARE_EXP_SUM(name) \
  float name(const float* x, float max, float* out, std::size_t n) noexcept;
#define ATTNLENS_DECLARE_ADDITIVE_ROW(name)                                         \
  void name(std::size_t hidden, const float* qa, const float* kat, std::size_t ldk, \
            const float* v, std::size_t n, float* out) noexcept;

#define ATTNLENS_DECLARE_PANEL_GEMM(name)                                           \
  void name(std::size_t tiles, std::size_t k, const float* a, std::size_t a_stride, \
            const float* b, float* c, const float* c_scale) noexcept;
#define ATTNLENS_DECLARE_ONLINE_SOFTMAX(name) \
  void name(std::size_t n, float* s, float* max, float* sum, float* rescale) noexcept;

#define ATTNLENS_DECLARE_PANEL_TO_ROWS(name)                                                     \
  void name(std::size_t n, const float* panel, std::size_t rows, const float* scale, float* out, \
            std::size_t ldo) noexcept;

#define ATTNLENS_GEMM(name) ATTNLENS_DECLARE_GEMM(name)
#define ATTNLENS_ROW_MAX(name) ATTNLENS_DECLARE_ROW_MAX(name)
#define ATTNLENS_EXP_SUM(name) ATTNLENS_DECLARE_EXP_SUM(name)
#define ATTNLENS_ADDITIVE_ROW(name) ATTNLENS_DECLARE_ADDITIVE_ROW(name)
#define ATTNLENS_PANEL_GEMM(name) ATTNLENS_DECLARE_PANEL_GEMM(name)
#define ATTNLENS_ONLINE_SOFTMAX(name) ATTNLENS_DECLARE_ONLINE_SOFTMAX(name)
#define ATTNLENS_PANEL_TO_ROWS(name) ATTNLENS_DECLARE_PANEL_TO_ROWS(name)
#include "kernels/registry.inc"
#undef ATTNLENS_GEMM
#undef ATTNLENS_ROW_MAX
#undef ATTNLENS_EXP_SUM
#undef ATTNLENS_ADDITIVE_ROW
#undef ATTNLENS_PANEL_GEMM
#undef ATTNLENS_ONLINE_SOFTMAX
#undef ATTNLENS_PANEL_TO_ROWS

}  // namespace attnlens::kernels
