#include "models/ops.h"

#include <cstring>

namespace attnlens::models {
namespace {

const ModelOps kOpSets[] = {
    {"scalar", &f32_layer_norm__scalar, &f32_rms_norm__scalar, &f32_gelu_tanh__scalar,
     &f32_gelu_erf__scalar, &f32_silu_gate__scalar, &f32_silu__scalar, &f32_rotary__scalar,
     &f16_to_f32__scalar, &f32_dot_rows__scalar, &q8_panel_gemm__scalar_4x8,
     &q8_panel_to_f32__scalar, &q4_panel_gemm__scalar_4x8, &q4_panel_to_f32__scalar,
     &q8_panel_gemv__scalar_1x8, &q4_panel_gemv__scalar_1x8},
#if ATTNLENS_HAVE_SIMD
    {"simd128", &f32_layer_norm__simd128_x4, &f32_rms_norm__simd128_x4, &f32_gelu_tanh__simd128_x4,
     &f32_gelu_erf__simd128_x4, &f32_silu_gate__simd128_x4, &f32_silu__simd128_x4,
     &f32_rotary__simd128_x4, &f16_to_f32__simd128_x8, &f32_dot_rows__simd128_4x1,
     &q8_panel_gemm__simd128_4x8, &q8_panel_to_f32__simd128_x8, &q4_panel_gemm__simd128_4x8,
     &q4_panel_to_f32__simd128_x8, &q8_panel_gemv__simd128_1x8, &q4_panel_gemv__simd128_1x8},
#endif
};

}  // namespace

Span<const ModelOps> model_op_sets() {
  return Span<const ModelOps>(kOpSets, sizeof(kOpSets) / sizeof(kOpSets[0]));
}

const ModelOps& model_ops_for(const KernelSet& kernels) {
  const std::size_t count = sizeof(kOpSets) / sizeof(kOpSets[0]);
  return std::strcmp(kernels.name, "scalar") == 0 ? kOpSets[0] : kOpSets[count - 1];
}

}  // namespace attnlens::models
