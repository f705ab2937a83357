#include <cstring>

#include "attnlens/attnlens.h"
#include "kernels/kernels_internal.h"

namespace attnlens {
namespace {

using namespace kernels;  // NOLINT(build/namespaces): the registry lists kernels by bare name

// One table per operation, each expanding that operation's list (kernels/registry/<op>.inc).

#define ATTNLENS_UKERNEL(name) GemmKernel{#name, &name},
const GemmKernel kGemm[] = {
#include "kernels/registry/f32-gemm.inc"
};
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name) RowMaxKernel{#name, &name},
const RowMaxKernel kRowMax[] = {
#include "kernels/registry/f32-row-max.inc"
};
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name) ExpSumKernel{#name, &name},
const ExpSumKernel kExpSum[] = {
#include "kernels/registry/f32-exp-sum.inc"
};
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name) AdditiveRowKernel{#name, &name},
const AdditiveRowKernel kAdditiveRow[] = {
#include "kernels/registry/f32-additive-row.inc"
};
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name) PanelGemmKernel{#name, &name},
const PanelGemmKernel kPanelGemm[] = {
#include "kernels/registry/f32-panel-gemm.inc"
};
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name) PanelGemmStridedKernel{#name, &name},
const PanelGemmStridedKernel kPanelGemmStrided[] = {
#include "kernels/registry/f32-panel-gemm-strided.inc"
};
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name) PanelGemvKernel{#name, &name},
const PanelGemvKernel kPanelGemv[] = {
#include "kernels/registry/f32-panel-gemv.inc"
};
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name) OnlineSoftmaxKernel{#name, &name},
const OnlineSoftmaxKernel kOnlineSoftmax[] = {
#include "kernels/registry/f32-online-softmax.inc"
};
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name) PanelToRowsKernel{#name, &name},
const PanelToRowsKernel kPanelToRows[] = {
#include "kernels/registry/f32-panel-to-rows.inc"
};
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name) SoftmaxBackwardKernel{#name, &name},
const SoftmaxBackwardKernel kSoftmaxBackward[] = {
#include "kernels/registry/f32-softmax-backward.inc"
};
#undef ATTNLENS_UKERNEL

#define ATTNLENS_UKERNEL(name) SoftcapKernel{#name, &name},
const SoftcapKernel kSoftcap[] = {
#include "kernels/registry/f32-softcap.inc"
};
#undef ATTNLENS_UKERNEL

// The default (last) set uses the variants that measure fastest in bench/attnlens_bench.
const KernelSet kSets[] = {
    {"scalar", &f32_gemm__scalar, &f32_row_max__scalar, &f32_exp_sum__scalar,
     &f32_additive_row__scalar, &f32_panel_gemm__scalar_4x8, &f32_online_softmax__scalar_x8,
     &f32_panel_to_rows__scalar_x8, &f32_softmax_backward__scalar_x8, &f32_softcap__scalar,
     &f32_panel_gemm_strided__scalar_4x8, &f32_panel_gemv__scalar_1x8},
#if ATTNLENS_HAVE_SIMD
    {"simd128", &f32_gemm__simd128_4x8, &f32_row_max__simd128_x8, &f32_exp_sum__simd128_x8,
     &f32_additive_row__simd128_x4, &f32_panel_gemm__simd128_4x8, &f32_online_softmax__simd128_x8,
     &f32_panel_to_rows__simd128_x8, &f32_softmax_backward__simd128_x8, &f32_softcap__simd128_x4,
     &f32_panel_gemm_strided__simd128_4x8, &f32_panel_gemv__simd128_2x8},
#endif
#if ATTNLENS_HAVE_RELAXED_SIMD
    // The simd128 set with f32x4.relaxed_madd in the GEMMs and the softmax.
    {"relaxedsimd", &f32_gemm__relaxedsimd_4x8, &f32_row_max__simd128_x8, &f32_exp_sum__simd128_x8,
     &f32_additive_row__simd128_x4, &f32_panel_gemm__relaxedsimd_4x8,
     &f32_online_softmax__relaxedsimd_x8, &f32_panel_to_rows__simd128_x8,
     &f32_softmax_backward__relaxedsimd_x8, &f32_softcap__simd128_x4,
     &f32_panel_gemm_strided__relaxedsimd_4x8, &f32_panel_gemv__relaxedsimd_2x8},
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
Span<const PanelGemmStridedKernel> panel_gemm_strided_kernels() { return view(kPanelGemmStrided); }
Span<const PanelGemvKernel> panel_gemv_kernels() { return view(kPanelGemv); }
Span<const OnlineSoftmaxKernel> online_softmax_kernels() { return view(kOnlineSoftmax); }
Span<const PanelToRowsKernel> panel_to_rows_kernels() { return view(kPanelToRows); }
Span<const SoftmaxBackwardKernel> softmax_backward_kernels() { return view(kSoftmaxBackward); }
Span<const SoftcapKernel> softcap_kernels() { return view(kSoftcap); }
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
