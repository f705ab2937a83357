// Normalisation over rows, in float: layer norm as torch.nn.LayerNorm (mean, then the biased
// variance of the centred values: two passes, no cancellation from E[x^2] - E[x]^2), and RMS norm
// as LlamaRMSNorm (the mean of the squares, no centring; weight * (x * rsqrt(ms + eps))).
#include <cmath>
#include <cstddef>

#include "models/ops.h"

namespace attnlens::models {

namespace {

// Sums in four interleaved partial sums, as the SIMD version's lanes do: a long row (768 values
// of similar size) summed one by one loses about 10x more than four partial sums.
template <typename Term>
float four_way_sum(std::size_t n, Term term) {
  float partial[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  const std::size_t n4 = n / 4 * 4;
  for (std::size_t i = 0; i < n4; i += 4) {
    for (std::size_t lane = 0; lane < 4; ++lane) partial[lane] += term(i + lane);
  }
  float sum = (partial[0] + partial[2]) + (partial[1] + partial[3]);
  for (std::size_t i = n4; i < n; ++i) sum += term(i);
  return sum;
}

}  // namespace

void f32_layer_norm__scalar(std::size_t rows, std::size_t n, const float* x, const float* gamma,
                            const float* beta, float eps, float* y) noexcept {
  for (std::size_t r = 0; r < rows; ++r, x += n, y += n) {
    const float mean = four_way_sum(n, [x](std::size_t i) { return x[i]; }) / static_cast<float>(n);
    const float squares =
        four_way_sum(n, [x, mean](std::size_t i) { return (x[i] - mean) * (x[i] - mean); });
    const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(n) + eps);
    for (std::size_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * gamma[i] + beta[i];
  }
}

void f32_rms_norm__scalar(std::size_t rows, std::size_t n, const float* x, const float* weight,
                          float eps, float* y) noexcept {
  for (std::size_t r = 0; r < rows; ++r, x += n, y += n) {
    const float squares = four_way_sum(n, [x](std::size_t i) { return x[i] * x[i]; });
    const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(n) + eps);
    for (std::size_t i = 0; i < n; ++i) y[i] = weight[i] * (x[i] * rstd);
  }
}

#if ATTNLENS_HAVE_SIMD
void f32_rms_norm__simd128_x4(std::size_t rows, std::size_t n, const float* x, const float* weight,
                              float eps, float* y) noexcept {
  using simd::f32x4;
  const std::size_t n4 = n / 4 * 4;
  for (std::size_t r = 0; r < rows; ++r, x += n, y += n) {
    f32x4 acc = simd::splat(0.0f);
    for (std::size_t i = 0; i < n4; i += 4) {
      const f32x4 v = simd::load(x + i);
      acc = simd::mul_add(v, v, acc);
    }
    float squares = simd::hsum(acc);
    for (std::size_t i = n4; i < n; ++i) squares += x[i] * x[i];
    const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(n) + eps);
    const f32x4 rstd4 = simd::splat(rstd);
    for (std::size_t i = 0; i < n4; i += 4) {
      simd::store(y + i, simd::mul(simd::load(weight + i), simd::mul(simd::load(x + i), rstd4)));
    }
    for (std::size_t i = n4; i < n; ++i) y[i] = weight[i] * (x[i] * rstd);
  }
}

void f32_layer_norm__simd128_x4(std::size_t rows, std::size_t n, const float* x, const float* gamma,
                                const float* beta, float eps, float* y) noexcept {
  using simd::f32x4;
  const std::size_t n4 = n / 4 * 4;
  for (std::size_t r = 0; r < rows; ++r, x += n, y += n) {
    f32x4 acc = simd::splat(0.0f);
    for (std::size_t i = 0; i < n4; i += 4) acc = simd::add(acc, simd::load(x + i));
    float sum = simd::hsum(acc);
    for (std::size_t i = n4; i < n; ++i) sum += x[i];
    const float mean = sum / static_cast<float>(n);
    const f32x4 mean4 = simd::splat(mean);
    acc = simd::splat(0.0f);
    for (std::size_t i = 0; i < n4; i += 4) {
      const f32x4 d = simd::sub(simd::load(x + i), mean4);
      acc = simd::mul_add(d, d, acc);
    }
    float squares = simd::hsum(acc);
    for (std::size_t i = n4; i < n; ++i) squares += (x[i] - mean) * (x[i] - mean);
    const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(n) + eps);
    const f32x4 rstd4 = simd::splat(rstd);
    for (std::size_t i = 0; i < n4; i += 4) {
      const f32x4 scaled = simd::mul(simd::sub(simd::load(x + i), mean4), rstd4);
      simd::store(y + i, simd::mul_add(scaled, simd::load(gamma + i), simd::load(beta + i)));
    }
    for (std::size_t i = n4; i < n; ++i) y[i] = (x[i] - mean) * rstd * gamma[i] + beta[i];
  }
}
#endif

}  // namespace attnlens::models
