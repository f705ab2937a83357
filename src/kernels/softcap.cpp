// The logit soft cap (Gemma 2, ONNX Attention's softcap): logits cap * tanh(s / cap). Attention
// folds scale / cap into the queries, so the scores arrive as s / cap and this multiplies their
// tanh by cap (times log2(e) / temperature: the panels' base-2 logits).
#include <cmath>
#include <cstddef>

#include "kernels/kernels_internal.h"

namespace attnlens::kernels {

void f32_softcap__scalar(std::size_t n, float a, float* x) noexcept {
  for (std::size_t i = 0; i < n; ++i) x[i] = a * std::tanh(x[i]);
}

#if ATTNLENS_HAVE_SIMD
void f32_softcap__simd128_x4(std::size_t n, float a, float* x) noexcept {
  const simd::f32x4 scale = simd::splat(a);
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) simd::store(x + i, simd::mul(scale, simd::tanh(simd::load(x + i))));
  if (i < n) {
    // The tail through a padded vector, so every element sees the same tanh approximation.
    float buf[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (std::size_t t = 0; i + t < n; ++t) buf[t] = x[i + t];
    simd::store(buf, simd::mul(scale, simd::tanh(simd::load(buf))));
    for (std::size_t t = 0; i + t < n; ++t) x[i + t] = buf[t];
  }
}
#endif  // ATTNLENS_HAVE_SIMD

}  // namespace attnlens::kernels
