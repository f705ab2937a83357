// The llama family's ops (src/models/ops.h): RMS norm, the SwiGLU gate and the rotary embedding,
// every variant in model_op_sets() against double precision over awkward sizes (1, 3, tile-1,
// tile, tile+1, large; the SIMD tile is 4 wide), with the tolerance stated per check and the
// failing index printed; and the rotary tables against the transformers library's formulas.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "models/ops.h"
#include "models/rotary.h"
#include "models_test_util.h"

using namespace attnlens;
using namespace attnlens::models;
using namespace attnlens_test;

TEST_CASE("rms_norm matches double precision", "[models][ops]") {
  // Rows of values near 4 and of mixed sign; eps 1e-6 (Qwen2) and 1e-5 (SmolLM2).
  const Tolerance tol{2e-6, 2e-6};  // float sums of up to 896 squares
  for (const ModelOps& ops : model_op_sets()) {
    for (std::size_t n : kOpSizes) {
      for (float eps : {1e-6f, 1e-5f}) {
        const std::size_t rows = 3;
        Rng rng(static_cast<std::uint32_t>(n * 5 + 3));
        std::vector<float> x = random_floats(rows * n, rng, -2.0f, 2.0f);
        for (std::size_t i = 0; i < n; ++i) x[i] += 4.0f;  // row 0 far from zero mean
        const std::vector<float> weight = random_floats(n, rng, 0.5f, 1.5f);
        std::vector<double> expected(rows * n);
        for (std::size_t r = 0; r < rows; ++r) {
          double ms = 0;
          for (std::size_t i = 0; i < n; ++i) ms += std::pow(double{x[r * n + i]}, 2);
          const double scale = 1.0 / std::sqrt(ms / static_cast<double>(n) + eps);
          for (std::size_t i = 0; i < n; ++i)
            expected[r * n + i] = weight[i] * x[r * n + i] * scale;
        }
        std::vector<float> y(rows * n);
        ops.rms_norm(rows, n, x.data(), weight.data(), eps, y.data());
        INFO(ops.name << " n=" << n << " eps=" << eps);
        ATTNLENS_CHECK_CLOSE(y, expected, tol, matrix_layout(3, static_cast<std::int64_t>(n)),
                             "rms_norm");
        std::vector<float> in_place = x;  // in place gives the same bits
        ops.rms_norm(rows, n, in_place.data(), weight.data(), eps, in_place.data());
        CHECK(std::memcmp(in_place.data(), y.data(), y.size() * sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("the SwiGLU gate and SiLU match double precision, with no overflow", "[models][ops]") {
  // |error| <= 1e-6 + 1e-6 |expected|: libm's and vec128.h's exp are within ~2e-7 relative.
  const Tolerance tol{1e-6, 1e-6};
  for (const ModelOps& ops : model_op_sets()) {
    for (std::size_t n : kOpSizes) {
      Rng rng(static_cast<std::uint32_t>(n + 7));
      std::vector<float> gate = random_floats(n, rng, -8.0f, 8.0f);
      const std::vector<float> up = random_floats(n, rng, -3.0f, 3.0f);
      // Where sigmoid changes regime: 0, tiny, saturated, beyond exp's range on both sides.
      const float specials[] = {0.0f,   -0.0f,  1e-30f,  -1e-30f, 20.0f,
                                -20.0f, 100.0f, -100.0f, 1e30f,   -3e38f};
      for (std::size_t i = 0; i < n && i < sizeof specials / sizeof specials[0]; ++i) {
        gate[i] = specials[i];
      }
      std::vector<double> expected(n);
      for (std::size_t i = 0; i < n; ++i) {
        const double g = gate[i];
        expected[i] =
            (g < 0 ? g * std::exp(g) / (1 + std::exp(g)) : g / (1 + std::exp(-g))) * up[i];
      }
      std::vector<float> y = gate;
      ops.silu_gate(n, y.data(), up.data());
      INFO(ops.name << " n=" << n);
      ATTNLENS_CHECK_CLOSE(y, expected, tol, Layout{}, "silu_gate");
      for (float v : y) CHECK(std::isfinite(v));
      // silu alone (Marian's activation): the same gate with up = 1.
      std::vector<double> expected_silu(n);
      for (std::size_t i = 0; i < n; ++i) {
        const double g = gate[i];
        expected_silu[i] = g < 0 ? g * std::exp(g) / (1 + std::exp(g)) : g / (1 + std::exp(-g));
      }
      std::vector<float> silu = gate;
      ops.silu(n, silu.data());
      ATTNLENS_CHECK_CLOSE(silu, expected_silu, tol, Layout{}, "silu");
      for (float v : silu) CHECK(std::isfinite(v));
    }
  }
}

TEST_CASE("the rotary embedding matches double precision and leaves other columns alone",
          "[models][ops]") {
  const Tolerance tol{1e-6, 1e-6};
  for (const ModelOps& ops : model_op_sets()) {
    for (std::size_t half : kOpSizes) {
      if (half > 128) continue;
      const std::size_t rows = 5, ldx = 2 * half + 3;  // rows padded: the padding stays as is
      Rng rng(static_cast<std::uint32_t>(half * 3 + 1));
      std::vector<float> x = random_floats(rows * ldx, rng, -2.0f, 2.0f);
      std::vector<float> cos(rows * half), sin(rows * half);
      for (std::size_t i = 0; i < cos.size(); ++i) {
        const double angle = rng.uniform(-7.0f, 7.0f);
        cos[i] = static_cast<float>(std::cos(angle));
        sin[i] = static_cast<float>(std::sin(angle));
      }
      // q * cos + rotate_half(q) * sin, rotate_half(q) = cat(-q[half:], q[:half]).
      std::vector<double> expected(x.begin(), x.end());
      for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t e = 0; e < 2 * half; ++e) {
          const std::size_t i = e % half;
          const double rotated = e < half ? -double{x[r * ldx + e + half]} : x[r * ldx + e - half];
          expected[r * ldx + e] =
              x[r * ldx + e] * double{cos[r * half + i]} + rotated * sin[r * half + i];
        }
      }
      std::vector<float> y = x;
      ops.rotary(rows, half, y.data(), ldx, cos.data(), sin.data());
      INFO(ops.name << " half=" << half);
      ATTNLENS_CHECK_CLOSE(
          y, expected, tol,
          matrix_layout(static_cast<std::int64_t>(rows), static_cast<std::int64_t>(ldx)), "rotary");
    }
  }
}

TEST_CASE("rotary tables follow rope_theta and the linear and llama3 scalings", "[models][ops]") {
  const double pi = 3.14159265358979323846;
  const std::int64_t d = 64;
  RotaryConfig rotary;
  rotary.theta = 500000.0;
  const auto plain = [&](std::int64_t i) { return std::pow(rotary.theta, -2.0 * i / d); };
  // Each within float rounding of the formula, in double.
  const auto check = [&](const std::vector<float>& inv, auto expected, const char* what) {
    REQUIRE(inv.size() == static_cast<std::size_t>(d / 2));
    for (std::int64_t i = 0; i < d / 2; ++i) {
      INFO(what << " i=" << i);
      CHECK(std::fabs(inv[i] - expected(i)) <= 4e-7 * expected(i));
    }
  };
  check(inverse_frequencies(rotary, d), plain, "default");
  rotary.scaling = RopeScaling::kLinear;
  rotary.factor = 4.0;
  check(
      inverse_frequencies(rotary, d), [&](std::int64_t i) { return plain(i) / 4.0; }, "linear");
  // Llama 3.1's: factor 8, low 1, high 4, original context 8192.
  rotary.scaling = RopeScaling::kLlama3;
  rotary.factor = 8.0;
  const auto llama3 = [&](std::int64_t i) {
    const double f = plain(i), wavelength = 2 * pi / f;
    if (wavelength < 8192.0 / 4.0) return f;
    if (wavelength > 8192.0 / 1.0) return f / 8.0;
    const double smooth = (8192.0 / wavelength - 1.0) / (4.0 - 1.0);
    return (1 - smooth) * f / 8.0 + smooth * f;
  };
  const std::vector<float> inv = inverse_frequencies(rotary, d);
  check(inv, llama3, "llama3");
  CHECK(inv[0] == static_cast<float>(plain(0)));                     // short wavelengths kept
  CHECK(std::fabs(inv[31] - plain(31) / 8.0) < 1e-7 * inv[31] * 8);  // long ones stretched
  // cos/sin of position p at angle p * inv_freq.
  std::vector<float> cos, sin;
  rotary_tables(inv, 7, cos, sin);
  REQUIRE(cos.size() == 7u * 32u);
  for (std::int64_t p = 0; p < 7; ++p) {
    for (std::int64_t i = 0; i < 32; ++i) {
      const double angle = static_cast<double>(p) * inv[i];
      CHECK(std::fabs(cos[p * 32 + i] - std::cos(angle)) <= 1e-6);
      CHECK(std::fabs(sin[p * 32 + i] - std::sin(angle)) <= 1e-6);
    }
  }
}
