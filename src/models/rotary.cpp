// Rotary position embeddings (RoPE) as the transformers library computes them for llama-family
// checkpoints: inverse frequencies from rope_theta and the scaling type, cos/sin per position,
// and the rotate_half rotation of each q and k head (first half against second half).
#include "models/rotary.h"

#include <cmath>
#include <cstddef>

#include "models/ops.h"

namespace attnlens::models {

std::vector<float> inverse_frequencies(const RotaryConfig& rotary, std::int64_t head_dim) {
  const double pi = 3.14159265358979323846;
  const std::int64_t half = head_dim / 2;
  std::vector<float> inv(static_cast<std::size_t>(half));
  for (std::int64_t i = 0; i < half; ++i) {
    // 1 / theta^(2i / d): the exponent and the power as float32 tensors compute them.
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(head_dim);
    const auto power = static_cast<float>(std::pow(rotary.theta, static_cast<double>(exponent)));
    double f = 1.0f / power;
    switch (rotary.scaling) {
      case RopeScaling::kNone:
        break;
      case RopeScaling::kLinear:
        f /= rotary.factor;
        break;
      case RopeScaling::kLlama3: {
        // Wavelengths longer than the old context / low_freq_factor are stretched by `factor`,
        // those shorter than old context / high_freq_factor kept, the ones between blended.
        const auto old_context = static_cast<double>(rotary.original_max_positions);
        const double wavelength = 2 * pi / f;
        if (wavelength > old_context / rotary.low_freq_factor) {
          f /= rotary.factor;
        } else if (!(wavelength < old_context / rotary.high_freq_factor)) {
          const double smooth = (old_context / wavelength - rotary.low_freq_factor) /
                                (rotary.high_freq_factor - rotary.low_freq_factor);
          f = (1 - smooth) * f / rotary.factor + smooth * f;
        }
        break;
      }
    }
    inv[static_cast<std::size_t>(i)] = static_cast<float>(f);
  }
  return inv;
}

void rotary_tables(const std::vector<float>& inv_freq, std::int64_t n, std::vector<float>& cos,
                   std::vector<float>& sin, std::int64_t first) {
  const std::size_t half = inv_freq.size();
  cos.resize(static_cast<std::size_t>(n) * half);
  sin.resize(cos.size());
  for (std::int64_t r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < half; ++i) {
      const float angle = static_cast<float>(first + r) * inv_freq[i];
      cos[static_cast<std::size_t>(r) * half + i] = static_cast<float>(std::cos(double{angle}));
      sin[static_cast<std::size_t>(r) * half + i] = static_cast<float>(std::sin(double{angle}));
    }
  }
}

void f32_rotary__scalar(std::size_t rows, std::size_t half, float* x, std::size_t ldx,
                        const float* cos, const float* sin) noexcept {
  for (std::size_t r = 0; r < rows; ++r, x += ldx, cos += half, sin += half) {
    for (std::size_t i = 0; i < half; ++i) {
      const float a = x[i], b = x[i + half];
      x[i] = a * cos[i] - b * sin[i];
      x[i + half] = b * cos[i] + a * sin[i];
    }
  }
}

#if ATTNLENS_HAVE_SIMD
void f32_rotary__simd128_x4(std::size_t rows, std::size_t half, float* x, std::size_t ldx,
                            const float* cos, const float* sin) noexcept {
  using simd::f32x4;
  const std::size_t half4 = half / 4 * 4;
  for (std::size_t r = 0; r < rows; ++r, x += ldx, cos += half, sin += half) {
    for (std::size_t i = 0; i < half4; i += 4) {
      const f32x4 a = simd::load(x + i), b = simd::load(x + i + half);
      const f32x4 c = simd::load(cos + i), s = simd::load(sin + i);
      simd::store(x + i, simd::sub(simd::mul(a, c), simd::mul(b, s)));
      simd::store(x + i + half, simd::add(simd::mul(b, c), simd::mul(a, s)));
    }
    for (std::size_t i = half4; i < half; ++i) {
      const float a = x[i], b = x[i + half];
      x[i] = a * cos[i] - b * sin[i];
      x[i + half] = b * cos[i] + a * sin[i];
    }
  }
}
#endif

}  // namespace attnlens::models
