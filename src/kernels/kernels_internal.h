// Declarations of every kernel variant: one signature per operation, declared for each name in
// that operation's list (kernels/registry/<op>.inc), the lists registry.cpp turns into the tables
// that tests and benchmarks expand. Kernels never throw, and say so: under Emscripten's JS
// exception handling a call that might throw from a scope with destructors goes through a JS
// trampoline.
#pragma once

#include <cstddef>

#include "attnlens/kernels.h"
#include "kernels/vec128.h"

namespace attnlens::kernels {

#define ATTNLENS_UKERNEL(name)                                                            \
  void name(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, \
            const float* b, std::size_t ldb, float* c, std::size_t ldc, bool accumulate) noexcept;
#include "kernels/registry/f32-gemm.inc"
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name) float name(const float* x, std::size_t n) noexcept;
#include "kernels/registry/f32-row-max.inc"
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name) \
  float name(const float* x, float max, float* out, std::size_t n) noexcept;
#include "kernels/registry/f32-exp-sum.inc"
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name)                                                      \
  void name(std::size_t hidden, const float* qa, const float* kat, std::size_t ldk, \
            const float* v, std::size_t n, float* out) noexcept;
#include "kernels/registry/f32-additive-row.inc"
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name)                                                      \
  void name(std::size_t tiles, std::size_t k, const float* a, std::size_t a_stride, \
            const float* b, float* c, const float* c_scale) noexcept;
#include "kernels/registry/f32-panel-gemm.inc"
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name)                                                      \
  void name(std::size_t tiles, std::size_t k, const float* a, std::size_t a_stride, \
            std::size_t a_step, std::size_t a_row, const float* b, float* c,        \
            const float* c_scale) noexcept;
#include "kernels/registry/f32-panel-gemm-strided.inc"
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name)                                                                     \
  void name(std::size_t panels, std::size_t k, const float* x, std::size_t x_step, const float* b, \
            float* y) noexcept;
#include "kernels/registry/f32-panel-gemv.inc"
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name) \
  void name(std::size_t n, float* s, float* max, float* sum, float* rescale) noexcept;
#include "kernels/registry/f32-online-softmax.inc"
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name)                                                                   \
  void name(std::size_t n, const float* panel, std::size_t rows, const float* scale, float* out, \
            std::size_t ldo) noexcept;
#include "kernels/registry/f32-panel-to-rows.inc"
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name)                                                         \
  void name(std::size_t n, float* s, float* dp, const float* base, const float* delta, \
            float* ds_t, std::size_t t_stride) noexcept;
#include "kernels/registry/f32-softmax-backward.inc"
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name) void name(std::size_t n, float a, float* x) noexcept;
#include "kernels/registry/f32-softcap.inc"
#undef ATTNLENS_UKERNEL

}  // namespace attnlens::kernels
