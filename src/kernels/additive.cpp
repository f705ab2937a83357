// Additive (Bahdanau) scores for one query against n keys:
//   out[j] = sum_a v[a] * tanh(qa[a] + kat[a * ldk + j])
// where qa = Wq q and kat holds Wk k_j transposed (hidden-major), so the inner loop runs along
// keys and vectorises without horizontal sums.
#include <cmath>
#include <cstddef>

#include "kernels/kernels_internal.h"

namespace attnlens::kernels {

void f32_additive_row__scalar(std::size_t hidden, const float* qa, const float* kat,
                              std::size_t ldk, const float* v, std::size_t n, float* out) noexcept {
  for (std::size_t j = 0; j < n; ++j) out[j] = 0.0f;
  for (std::size_t a = 0; a < hidden; ++a) {
    const float q = qa[a], w = v[a];
    const float* krow = kat + a * ldk;
    for (std::size_t j = 0; j < n; ++j) out[j] += w * std::tanh(q + krow[j]);
  }
}

#if ATTNLENS_HAVE_SIMD
void f32_additive_row__simd128_x4(std::size_t hidden, const float* qa, const float* kat,
                                  std::size_t ldk, const float* v, std::size_t n,
                                  float* out) noexcept {
  std::size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    simd::f32x4 acc = simd::splat(0.0f);
    for (std::size_t a = 0; a < hidden; ++a) {
      const simd::f32x4 t =
          simd::tanh(simd::add(simd::splat(qa[a]), simd::load(kat + a * ldk + j)));
      acc = simd::mul_add(simd::splat(v[a]), t, acc);
    }
    simd::store(out + j, acc);
  }
  if (j < n) {
    // Tail through padded vectors so every key sees the same tanh approximation.
    simd::f32x4 acc = simd::splat(0.0f);
    for (std::size_t a = 0; a < hidden; ++a) {
      float buf[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (std::size_t t = 0; j + t < n; ++t) buf[t] = kat[a * ldk + j + t];
      const simd::f32x4 t = simd::tanh(simd::add(simd::splat(qa[a]), simd::load(buf)));
      acc = simd::mul_add(simd::splat(v[a]), t, acc);
    }
    float res[4];
    simd::store(res, acc);
    for (std::size_t t = 0; j + t < n; ++t) out[j + t] = res[t];
  }
}
#endif  // ATTNLENS_HAVE_SIMD

}  // namespace attnlens::kernels
