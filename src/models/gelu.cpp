// The two GELU forms checkpoints use. The scalar twins call libm (std::tanh, std::erf); the
// simd128 versions use vec128.h's tanh and a rational erf, both within ~2e-7 absolute.
#include <cmath>
#include <cstddef>

#include "models/ops.h"

namespace attnlens::models {
namespace {

constexpr float kInvSqrt2 = 0.7071067811865476f;

}  // namespace

// "gelu_new" / "gelu_pytorch_tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
void f32_gelu_tanh__scalar(std::size_t n, float* x) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = 0.5f * v * (1.0f + std::tanh(kGeluTanhScale * (v + kGeluTanhCubic * v * v * v)));
  }
}

// "gelu": 0.5 x (1 + erf(x / sqrt(2))).
void f32_gelu_erf__scalar(std::size_t n, float* x) noexcept {
  for (std::size_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * kInvSqrt2));
}

#if ATTNLENS_HAVE_SIMD
namespace {

using simd::f32x4;

// erf(z) by Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7): for z >= 0,
// erf(z) = 1 - t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) exp(-z^2), t = 1 / (1 + p z).
ATTNLENS_VEC_INLINE f32x4 erf(f32x4 z) {
  const f32x4 sign = simd::bit_and(z, simd::splat(-0.0f));
  const f32x4 a = simd::abs(z);
  const f32x4 one = simd::splat(1.0f);
  const f32x4 t = simd::div(one, simd::mul_add(simd::splat(0.3275911f), a, one));
  f32x4 p = simd::mul_add(simd::splat(1.061405429f), t, simd::splat(-1.453152027f));
  p = simd::mul_add(p, t, simd::splat(1.421413741f));
  p = simd::mul_add(p, t, simd::splat(-0.284496736f));
  p = simd::mul_add(p, t, simd::splat(0.254829592f));
  const f32x4 e = simd::exp(simd::mul(simd::sub(simd::splat(0.0f), a), a));
  const f32x4 y = simd::sub(one, simd::mul(simd::mul(p, t), e));
  return simd::bit_or(y, sign);
}

}  // namespace

void f32_gelu_tanh__simd128_x4(std::size_t n, float* x) noexcept {
  const std::size_t n4 = n / 4 * 4;
  const f32x4 half = simd::splat(0.5f), one = simd::splat(1.0f);
  const f32x4 c1 = simd::splat(kGeluTanhScale), c3 = simd::splat(kGeluTanhScale * kGeluTanhCubic);
  for (std::size_t i = 0; i < n4; i += 4) {
    const f32x4 v = simd::load(x + i);
    const f32x4 inner = simd::mul(v, simd::mul_add(c3, simd::mul(v, v), c1));
    simd::store(x + i, simd::mul(simd::mul(half, v), simd::add(one, simd::tanh(inner))));
  }
  f32_gelu_tanh__scalar(n - n4, x + n4);
}

void f32_gelu_erf__simd128_x4(std::size_t n, float* x) noexcept {
  const std::size_t n4 = n / 4 * 4;
  const f32x4 half = simd::splat(0.5f), one = simd::splat(1.0f), scale = simd::splat(kInvSqrt2);
  for (std::size_t i = 0; i < n4; i += 4) {
    const f32x4 v = simd::load(x + i);
    simd::store(x + i, simd::mul(simd::mul(half, v), simd::add(one, erf(simd::mul(v, scale)))));
  }
  f32_gelu_erf__scalar(n - n4, x + n4);
}
#endif

}  // namespace attnlens::models
