#include <cstring>

#include "attnlens/attnlens.h"
#include "kernels/kernels_internal.h"

namespace attnlens {
namespace {

using namespace kernels;  // NOLINT(build/namespaces): the registry lists kernels by bare name

// One table per operation: each includes registry.inc with only its own macro producing entries.
#define ATTNLENS_GEMM(name)
#define ATTNLENS_ROW_MAX(name)
#define ATTNLENS_EXP_SUM(name)
#define ATTNLENS_ADDITIVE_ROW(name)
#define ATTNLENS_PANEL_GEMM(name)
#define ATTNLENS_ONLINE_SOFTMAX(name)
#define ATTNLENS_PANEL_TO_ROWS(name)

#undef ATTNLENS_GEMM
#define ATTNLENS_GEMM(name) GemmKernel{#name, &name},
const GemmKernel kGemm[] = {
#include "kernels/registry.inc"
};
#undef ATTNLENS_GEMM
#define ATTNLENS_GEMM(name)

#undef ATTNLENS_ROW_MAX
#define ATTNLENS_ROW_MAX(name) RowMaxKernel{#name, &name},
const RowMaxKernel kRowMax[] = {
#include "kernels/registry.inc"
};
#undef ATTNLENS_ROW_MAX
#define ATTNLENS_ROW_MAX(name)

#undef ATTNLENS_EXP_SUM
#define ATTNLENS_EXP_SUM(name) ExpSumKernel{#name, &name},
const ExpSumKernel kExpSum[] = {
#include "kernels/registry.inc"
};
#undef ATTNLENS_EXP_SUM
#define ATTNLENS_EXP_SUM(name)

#undef ATTNLENS_ADDITIVE_ROW
#define ATTNLENS_ADDITIVE_ROW(name) AdditiveRowKernel{#name, &name},
const AdditiveRowKernel kAdditiveRow[] = {
#include "kernels/registry.inc"
};
#undef ATTNLENS_ADDITIVE_ROW
#define ATTNLENS_ADDITIVE_ROW(name)

#undef ATTNLENS_PANEL_GEMM
#define ATTNLENS_PANEL_GEMM(name) PanelGemmKernel{#name, &name},
const PanelGemmKernel kPanelGemm[] = {
#include "kernels/registry.inc"
};
#undef ATTNLENS_PANEL_GEMM
#define ATTNLENS_PANEL_GEMM(name)

#undef ATTNLENS_ONLINE_SOFTMAX
#define ATTNLENS_ONLINE_SOFTMAX(name) OnlineSoftmaxKernel{#name, &name},
const OnlineSoftmaxKernel kOnlineSoftmax[] = {
#include "kernels/registry.inc"
};
#undef ATTNLENS_ONLINE_SOFTMAX
#define ATTNLENS_ONLINE_SOFTMAX(name)

#undef ATTNLENS_PANEL_TO_ROWS
#define ATTNLENS_PANEL_TO_ROWS(name) PanelToRowsKernel{#name, &name},
const PanelToRowsKernel kPanelToRows[] = {
#include "kernels/registry.inc"
};

#undef ATTNLENS_GEMM
#undef ATTNLENS_ROW_MAX
#undef ATTNLENS_EXP_SUM
#undef ATTNLENS_ADDITIVE_ROW
#undef ATTNLENS_PANEL_GEMM
#undef ATTNLENS_ONLINE_SOFTMAX
#undef ATTNLENS_PANEL_TO_ROWS

// The default (last) set uses the variants that measure fastest in bench/attnlens_bench.
const KernelSet kSets[] = {
    {"scalar", &f32_gemm__scalar, &f32_row_max__scalar, &f32_exp_sum__scalar,
     &f32_additive_row__scalar, &f32_panel_gemm__scalar_4x8, &f32_online_softmax__scalar_x8,
     &f32_panel_to_rows__scalar_x8},
#if ATTNLENS_HAVE_SIMD
    {"simd128", &f32_gemm__simd128_4x8, &f32_row_max__simd128_x8, &f32_exp_sum__simd128_x8,
     &f32_additive_row__simd128_x4, &f32_panel_gemm__simd128_4x8, &f32_online_softmax__simd128_x8,
     &f32_panel_to_rows__simd128_x8},
#endif
#if ATTNLENS_HAVE_RELAXED_SIMD
    // The simd128 set with f32x4.relaxed_madd in the GEMMs and the softmax.
    {"relaxedsimd", &f32_gemm__relaxedsimd_4x8, &f32_row_max__simd128_x8, &f32_exp_sum__simd128_x8,
     &f32_additive_row__simd128_x4, &f32_panel_gemm__relaxedsimd_4x8,
     &f32_online_softmax__relaxedsimd_x8, &f32_panel_to_rows__simd128_x8},
#endif
};

template <typename T, std::size_t N>
Span<const T> view(const T (&array)[N]) {
  return Span<const T>(array, N);
}

}  // namespace

Span<const GemmKernel> gemm_kernels() { return view(kGemm); }
Span<const RowMaxKernel> row_max_kernels() { return view(kRowMax); }
Span<const ExpSumKernel> exp_sum_kernels() { return view(kExpSum); }
Span<const AdditiveRowKernel> additive_row_kernels() { return view(kAdditiveRow); }
Span<const PanelGemmKernel> panel_gemm_kernels() { return view(kPanelGemm); }
Span<const OnlineSoftmaxKernel> online_softmax_kernels() { return view(kOnlineSoftmax); }
Span<const PanelToRowsKernel> panel_to_rows_kernels() { return view(kPanelToRows); }
Span<const KernelSet> kernel_sets() { return view(kSets); }
const KernelSet& default_kernel_set() { return kSets[sizeof(kSets) / sizeof(kSets[0]) - 1]; }

const KernelSet* find_kernel_set(const char* name) {
  for (const KernelSet& s : kSets) {
    if (name != nullptr && std::strcmp(s.name, name) == 0) return &s;
  }
  return nullptr;
}

bool simd_enabled() { return ATTNLENS_HAVE_SIMD != 0; }

bool relaxed_simd_enabled() { return ATTNLENS_HAVE_RELAXED_SIMD != 0; }

const char* version() { return ATTNLENS_VERSION; }

}  // namespace attnlens
