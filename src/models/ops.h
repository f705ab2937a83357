// The row and element operations of the forward pass besides the GEMMs (which run on the
// kernel registry's KernelSet::gemm): layer norm and RMS norm, the two GELU forms, the SwiGLU
// gate, rotary position embeddings, half to float, the dot products of the tied LM head, and the
// dequantising Q8_0 and 4-bit panel kernels (q8_0.h, q4.h). Each has a plain scalar twin and a
// simd128 version in the same file (written against src/kernels/vec128.h, or its intrinsics where
// vec128 has no integer widening); ModelOps picks one of each, and tests expand model_op_sets()
// against a double-precision reference. All are noexcept (see kernels_internal.h for why).
#pragma once

#include <cstddef>
#include <cstdint>

#include "attnlens/kernels.h"
#include "attnlens/span.h"
#include "kernels/vec128.h"
#include "models/int16_row.h"

namespace attnlens::models {

// The tanh form of GELU ("gelu_new"): 0.5 x (1 + tanh(kGeluTanhScale (x + kGeluTanhCubic x^3))).
// Its backward (src/training/) differentiates the same formula.
constexpr float kGeluTanhScale = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluTanhCubic = 0.044715f;

// y[r][i] = (x[r][i] - mean_r) / sqrt(var_r + eps) * gamma[i] + beta[i] for `rows` rows of `n`
// contiguous values (mean and biased variance over the row, as torch.nn.LayerNorm). y may be x.
using LayerNormFn = void (*)(std::size_t rows, std::size_t n, const float* x, const float* gamma,
                             const float* beta, float eps, float* y) noexcept;
// y[r][i] = weight[i] * (x[r][i] / sqrt(mean_r(x^2) + eps)) for `rows` rows of `n` contiguous
// values (the mean of the squares over the row, as LlamaRMSNorm; no centring, no bias). y may be x.
using RmsNormFn = void (*)(std::size_t rows, std::size_t n, const float* x, const float* weight,
                           float eps, float* y) noexcept;
// x[i] = act(x[i]) in place.
using ActivationFn = void (*)(std::size_t n, float* x) noexcept;
// gate[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)): the gated MLP of the llama family
// (down_proj(act(gate_proj(x)) * up_proj(x)) with act = silu, "SwiGLU").
using GatedFn = void (*)(std::size_t n, float* gate, const float* up) noexcept;
// Rotary position embedding in place, in the rotate_half form Hugging Face checkpoints use (the
// two halves of a head, not interleaved pairs): for each row r (starting at x + r * ldx) and
// i < half, with c = cos[r * half + i] and s = sin[r * half + i],
//   x[i] = x[i] c - x[i + half] s,   x[i + half] = x[i + half] c + x[i] s.
using RotaryFn = void (*)(std::size_t rows, std::size_t half, float* x, std::size_t ldx,
                          const float* cos, const float* sin) noexcept;
// out[i] = the IEEE half bits[i] as float (subnormals, infinities and NaN included).
using HalfToFloatFn = void (*)(std::size_t n, const std::uint16_t* bits, float* out) noexcept;
// C[i][j] = sum_p A[i][p] * B[j][p]: A [m, k] and B [n, k] row-major (rows contiguous), so the
// tied LM head multiplies by the embedding matrix transposed without a transposed copy.
using DotRowsFn = void (*)(std::size_t m, std::size_t n, std::size_t k, const float* a,
                           std::size_t lda, const float* b, std::size_t ldb, float* c,
                           std::size_t ldc) noexcept;
// The dequantising panel GEMM (q8_0.h, q4.h): C_t[4][8] = A_t * B for `tiles` row tiles, A as
// KernelSet::panel_gemm's (tile t at a + t * a_stride, [k][4]), B one packed Q8_0 or 4-bit column
// panel of depth k (a multiple of 32), dequantised in registers. C is overwritten.
using QuantPanelGemmFn = void (*)(std::size_t tiles, std::size_t k, const float* a,
                                  std::size_t a_stride, const std::uint8_t* b, float* c) noexcept;
// out[k][8] = a packed Q8_0 or 4-bit column panel of depth k (a multiple of 32) as f32, exactly.
using QuantPanelToF32Fn = void (*)(std::size_t k, const std::uint8_t* b, float* out) noexcept;
// The one-row kernel (a decoding step's token, where a 4-row tile would be mostly padding):
// y[8 n + j] = sum_p x[p] * B_n[p][j] over `panels` consecutive packed panels of depth k, with x
// rounded to 16-bit integers per block (int16_row.h) and each block's integer weights and values
// summed as integers (exactly), then scaled: per block of column j, y += dot * (s_j * scale)
// (Q8_0) or dot * (s_j * scale) - m_j * sum (4-bit), in block order. The scalar twin and the SIMD
// kernel give the same bits; a row differs from the tile's f32 row only by x's 16-bit rounding.
using QuantPanelGemvFn = void (*)(std::size_t panels, std::size_t k, const Int16Row& x,
                                  const std::uint8_t* b, float* y) noexcept;

struct ModelOps {
  const char* name;  // "scalar" or "simd128"
  LayerNormFn layer_norm;
  RmsNormFn rms_norm;
  ActivationFn gelu_tanh;
  ActivationFn gelu_erf;
  GatedFn silu_gate;
  ActivationFn silu;  // x / (1 + exp(-x)), as silu_gate's gate
  RotaryFn rotary;
  HalfToFloatFn half_to_float;
  DotRowsFn dot_rows;
  QuantPanelGemmFn q8_panel_gemm;
  QuantPanelToF32Fn q8_panel_to_f32;
  QuantPanelGemmFn q4_panel_gemm;
  QuantPanelToF32Fn q4_panel_to_f32;
  QuantPanelGemvFn q8_panel_gemv;
  QuantPanelGemvFn q4_panel_gemv;
};

// "scalar" always, then "simd128" where vec128.h has SIMD (not with ATTNLENS_NO_SIMD).
Span<const ModelOps> model_op_sets();
// The ops that go with a kernel set: scalar with "scalar", the SIMD ones otherwise.
const ModelOps& model_ops_for(const KernelSet& kernels);

// Every variant, by name (registered in ops.cpp).
void f32_layer_norm__scalar(std::size_t rows, std::size_t n, const float* x, const float* gamma,
                            const float* beta, float eps, float* y) noexcept;
void f32_rms_norm__scalar(std::size_t rows, std::size_t n, const float* x, const float* weight,
                          float eps, float* y) noexcept;
void f32_gelu_tanh__scalar(std::size_t n, float* x) noexcept;
void f32_gelu_erf__scalar(std::size_t n, float* x) noexcept;
void f32_silu_gate__scalar(std::size_t n, float* gate, const float* up) noexcept;
void f32_silu__scalar(std::size_t n, float* x) noexcept;
void f32_rotary__scalar(std::size_t rows, std::size_t half, float* x, std::size_t ldx,
                        const float* cos, const float* sin) noexcept;
void f16_to_f32__scalar(std::size_t n, const std::uint16_t* bits, float* out) noexcept;
void f32_dot_rows__scalar(std::size_t m, std::size_t n, std::size_t k, const float* a,
                          std::size_t lda, const float* b, std::size_t ldb, float* c,
                          std::size_t ldc) noexcept;
void q8_panel_gemm__scalar_4x8(std::size_t tiles, std::size_t k, const float* a,
                               std::size_t a_stride, const std::uint8_t* b, float* c) noexcept;
void q8_panel_to_f32__scalar(std::size_t k, const std::uint8_t* b, float* out) noexcept;
void q4_panel_gemm__scalar_4x8(std::size_t tiles, std::size_t k, const float* a,
                               std::size_t a_stride, const std::uint8_t* b, float* c) noexcept;
void q4_panel_to_f32__scalar(std::size_t k, const std::uint8_t* b, float* out) noexcept;
void q8_panel_gemv__scalar_1x8(std::size_t panels, std::size_t k, const Int16Row& x,
                               const std::uint8_t* b, float* y) noexcept;
void q4_panel_gemv__scalar_1x8(std::size_t panels, std::size_t k, const Int16Row& x,
                               const std::uint8_t* b, float* y) noexcept;
#if ATTNLENS_HAVE_SIMD
void f32_layer_norm__simd128_x4(std::size_t rows, std::size_t n, const float* x, const float* gamma,
                                const float* beta, float eps, float* y) noexcept;
void f32_rms_norm__simd128_x4(std::size_t rows, std::size_t n, const float* x, const float* weight,
                              float eps, float* y) noexcept;
void f32_gelu_tanh__simd128_x4(std::size_t n, float* x) noexcept;
void f32_gelu_erf__simd128_x4(std::size_t n, float* x) noexcept;
void f32_silu_gate__simd128_x4(std::size_t n, float* gate, const float* up) noexcept;
void f32_silu__simd128_x4(std::size_t n, float* x) noexcept;
void f32_rotary__simd128_x4(std::size_t rows, std::size_t half, float* x, std::size_t ldx,
                            const float* cos, const float* sin) noexcept;
void f16_to_f32__simd128_x8(std::size_t n, const std::uint16_t* bits, float* out) noexcept;
void f32_dot_rows__simd128_4x1(std::size_t m, std::size_t n, std::size_t k, const float* a,
                               std::size_t lda, const float* b, std::size_t ldb, float* c,
                               std::size_t ldc) noexcept;
void q8_panel_gemm__simd128_4x8(std::size_t tiles, std::size_t k, const float* a,
                                std::size_t a_stride, const std::uint8_t* b, float* c) noexcept;
void q8_panel_to_f32__simd128_x8(std::size_t k, const std::uint8_t* b, float* out) noexcept;
void q4_panel_gemm__simd128_4x8(std::size_t tiles, std::size_t k, const float* a,
                                std::size_t a_stride, const std::uint8_t* b, float* c) noexcept;
void q4_panel_to_f32__simd128_x8(std::size_t k, const std::uint8_t* b, float* out) noexcept;
void q8_panel_gemv__simd128_1x8(std::size_t panels, std::size_t k, const Int16Row& x,
                                const std::uint8_t* b, float* y) noexcept;
void q4_panel_gemv__simd128_1x8(std::size_t panels, std::size_t k, const Int16Row& x,
                                const std::uint8_t* b, float* y) noexcept;
#endif

}  // namespace attnlens::models
