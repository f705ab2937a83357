// The SwiGLU gate of llama-family MLPs: gate = silu(gate) * up, silu(g) = g sigmoid(g), and
// silu itself (Marian's "swish" MLP activation). The
// sigmoid is formed from e = exp(-|g|) <= 1 on both sides of zero (sigmoid(g) = 1 / (1 + e) for
// g >= 0, e / (1 + e) below), so nothing overflows and large negative gates give exact zeros.
// The scalar twin calls libm's exp; the simd128 version vec128.h's exp (relative error < 2e-7).
#include <cmath>
#include <cstddef>

#include "models/ops.h"

namespace attnlens::models {

void f32_silu_gate__scalar(std::size_t n, float* gate, const float* up) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const float g = gate[i];
    const float e = std::exp(-std::fabs(g));
    const float sigmoid = (g < 0.0f ? e : 1.0f) / (1.0f + e);
    gate[i] = g * sigmoid * up[i];
  }
}

void f32_silu__scalar(std::size_t n, float* x) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const float g = x[i];
    const float e = std::exp(-std::fabs(g));
    x[i] = g * (g < 0.0f ? e : 1.0f) / (1.0f + e);
  }
}

#if ATTNLENS_HAVE_SIMD
void f32_silu__simd128_x4(std::size_t n, float* x) noexcept {
  using simd::f32x4;
  const std::size_t n4 = n / 4 * 4;
  const f32x4 one = simd::splat(1.0f), zero = simd::splat(0.0f);
  for (std::size_t i = 0; i < n4; i += 4) {
    const f32x4 g = simd::load(x + i);
    const f32x4 e = simd::exp(simd::sub(zero, simd::abs(g)));
    const f32x4 sigmoid = simd::div(simd::select(simd::less(g, zero), e, one), simd::add(one, e));
    simd::store(x + i, simd::mul(g, sigmoid));
  }
  f32_silu__scalar(n - n4, x + n4);
}

void f32_silu_gate__simd128_x4(std::size_t n, float* gate, const float* up) noexcept {
  using simd::f32x4;
  const std::size_t n4 = n / 4 * 4;
  const f32x4 one = simd::splat(1.0f), zero = simd::splat(0.0f);
  for (std::size_t i = 0; i < n4; i += 4) {
    const f32x4 g = simd::load(gate + i);
    const f32x4 e = simd::exp(simd::sub(zero, simd::abs(g)));
    const f32x4 sigmoid = simd::div(simd::select(simd::less(g, zero), e, one), simd::add(one, e));
    simd::store(gate + i, simd::mul(simd::mul(g, sigmoid), simd::load(up + i)));
  }
  f32_silu_gate__scalar(n - n4, gate + n4, up + n4);
}
#endif

}  // namespace attnlens::models
