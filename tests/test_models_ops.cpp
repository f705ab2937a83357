// The forward pass's row and element ops (src/models/ops.h), every variant in model_op_sets()
// against double precision over awkward sizes (1, 3, tile-1, tile, tile+1, large; the SIMD
// tiles are 4 and 8 wide), with the tolerance stated per check and the failing index printed.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "models/ops.h"
#include "models_test_util.h"

using namespace attnlens;
using namespace attnlens::models;
using namespace attnlens_test;

namespace {

constexpr double kUnitRoundoff = 1.0 / 16777216.0;

// The value of IEEE half bits, computed from the definition.
double half_value(std::uint16_t bits) {
  const int sign = bits >> 15, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  double magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), -24);
  } else if (exponent == 31) {
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  } else {
    magnitude = std::ldexp(1.0 + mantissa / 1024.0, exponent - 15);
  }
  return sign ? -magnitude : magnitude;
}

}  // namespace

TEST_CASE("model ops: one scalar set and, with SIMD, one simd128 set", "[models][ops]") {
  const Span<const ModelOps> sets = model_op_sets();
  REQUIRE(sets.size >= 1);
  CHECK(std::string(sets[0].name) == "scalar");
  CHECK(sets.size == (simd_enabled() ? 2u : 1u));
  CHECK(std::string(model_ops_for(*find_kernel_set("scalar")).name) == "scalar");
  CHECK(std::string(model_ops_for(default_kernel_set()).name) == sets[sets.size - 1].name);
}

TEST_CASE("layer_norm matches double precision", "[models][ops]") {
  // Rows far from zero mean (x in [3, 5]) test the centring; eps 1e-12 is BERT's.
  const Tolerance tol{1e-5, 5e-6};  // float sums of up to 769 values near 4
  for (const ModelOps& ops : model_op_sets()) {
    for (std::size_t n : kOpSizes) {
      for (float eps : {1e-5f, 1e-12f}) {
        const std::size_t rows = 3;
        Rng rng(static_cast<std::uint32_t>(n * 7 + 1));
        const std::vector<float> x = random_floats(rows * n, rng, 3.0f, 5.0f);
        const std::vector<float> gamma = random_floats(n, rng, 0.5f, 1.5f);
        const std::vector<float> beta = random_floats(n, rng, -0.5f, 0.5f);
        std::vector<double> expected(rows * n);
        for (std::size_t r = 0; r < rows; ++r) {
          double mean = 0, var = 0;
          for (std::size_t i = 0; i < n; ++i) mean += x[r * n + i];
          mean /= static_cast<double>(n);
          for (std::size_t i = 0; i < n; ++i) var += std::pow(x[r * n + i] - mean, 2);
          var /= static_cast<double>(n);
          for (std::size_t i = 0; i < n; ++i) {
            expected[r * n + i] = (x[r * n + i] - mean) / std::sqrt(var + eps) * gamma[i] + beta[i];
          }
        }
        std::vector<float> y(rows * n);
        ops.layer_norm(rows, n, x.data(), gamma.data(), beta.data(), eps, y.data());
        INFO(ops.name << " n=" << n << " eps=" << eps);
        ATTNLENS_CHECK_CLOSE(y, expected, tol, matrix_layout(3, static_cast<std::int64_t>(n)),
                             "layer_norm");
        // In place gives the same bits.
        std::vector<float> in_place = x;
        ops.layer_norm(rows, n, in_place.data(), gamma.data(), beta.data(), eps, in_place.data());
        CHECK(std::memcmp(in_place.data(), y.data(), y.size() * sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("both GELU forms match double precision", "[models][ops]") {
  // |error| <= 5e-7 + 2e-6 |gelu(x)|: the SIMD tanh and erf approximations are within ~2e-7.
  const Tolerance tol{5e-7, 2e-6};
  const double pi = 3.14159265358979323846;
  for (const ModelOps& ops : model_op_sets()) {
    for (std::size_t n : kOpSizes) {
      Rng rng(static_cast<std::uint32_t>(n + 100));
      std::vector<float> x = random_floats(n, rng, -6.0f, 6.0f);
      // Values where the formulas change regime: 0, tiny, large, huge.
      const float specials[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 9.0f, -9.0f, 1e4f, -1e4f, 3e38f};
      for (std::size_t i = 0; i < n && i < sizeof specials / sizeof specials[0]; ++i) {
        x[i] = specials[i];
      }
      std::vector<double> tanh_form(n), erf_form(n);
      for (std::size_t i = 0; i < n; ++i) {
        const double v = x[i];
        tanh_form[i] =
            0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (v + 0.044715 * v * v * v)));
        erf_form[i] = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
      }
      INFO(ops.name << " n=" << n);
      std::vector<float> y = x;
      ops.gelu_tanh(n, y.data());
      ATTNLENS_CHECK_CLOSE(y, tanh_form, tol, Layout{}, "gelu_tanh");
      y = x;
      ops.gelu_erf(n, y.data());
      ATTNLENS_CHECK_CLOSE(y, erf_form, tol, Layout{}, "gelu_erf");
    }
  }
}

TEST_CASE("half to float is exact for all 65536 halves", "[models][ops]") {
  std::vector<std::uint16_t> bits(65536 + 3);  // +3: the last vector block is partial
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<std::uint16_t>(i);
  std::vector<float> scalar(bits.size());
  f16_to_f32__scalar(bits.size(), bits.data(), scalar.data());
  for (const ModelOps& ops : model_op_sets()) {
    std::vector<float> out(bits.size());
    ops.half_to_float(bits.size(), bits.data(), out.data());
    // Every set gives the scalar twin's bits, NaN payloads included.
    CHECK(std::memcmp(out.data(), scalar.data(), out.size() * sizeof(float)) == 0);
    for (std::size_t i = 0; i < bits.size(); ++i) {
      const double expected = half_value(bits[i]);
      const bool same = std::isnan(expected)
                            ? std::isnan(out[i]) && std::signbit(out[i]) == ((bits[i] >> 15) != 0)
                            : out[i] == expected && std::signbit(out[i]) == std::signbit(expected);
      if (!same) {
        FAIL_CHECK(ops.name << ": half 0x" << std::hex << bits[i] << std::dec << " gave " << out[i]
                            << ", expected " << expected);
        break;
      }
    }
    // Lengths below, at and above the 8-lane block.
    for (std::size_t n : kOpSizes) {
      std::vector<float> part(n + 1, -7.0f);
      ops.half_to_float(n, bits.data() + 15360, part.data());  // from 0x3c00 = 1.0
      CHECK(part[0] == 1.0f);
      CHECK(part[n] == -7.0f);  // nothing written past n
    }
  }
}

TEST_CASE("dot_rows matches double precision with padded rows", "[models][ops]") {
  for (const ModelOps& ops : model_op_sets()) {
    for (std::size_t m : {1u, 2u, 3u, 5u}) {
      for (std::size_t n : {1u, 3u, 4u, 5u, 8u, 9u, 33u}) {
        for (std::size_t k : kOpSizes) {
          if (k > 128 && n > 9) continue;
          Rng rng(static_cast<std::uint32_t>(m * 1000 + n * 31 + k));
          const std::size_t lda = k + 3, ldb = k + 1, ldc = n + 2;
          const std::vector<float> a = random_floats(m * lda, rng);
          const std::vector<float> b = random_floats(n * ldb, rng);
          std::vector<float> c(m * ldc, 42.0f);
          ops.dot_rows(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc);
          INFO(ops.name << " m=" << m << " n=" << n << " k=" << k);
          for (std::size_t i = 0; i < m; ++i) {
            for (std::size_t j = 0; j < ldc; ++j) {
              if (j >= n) {
                CHECK(c[i * ldc + j] == 42.0f);  // padding untouched
                continue;
              }
              double exact = 0, magnitude = 0;
              for (std::size_t p = 0; p < k; ++p) {
                exact += static_cast<double>(a[i * lda + p]) * b[j * ldb + p];
                magnitude += std::fabs(static_cast<double>(a[i * lda + p]) * b[j * ldb + p]);
              }
              // The k-term dot product bound (any order), doubled for slack.
              const double allowed = 2.0 * static_cast<double>(k + 1) * kUnitRoundoff * magnitude;
              if (std::fabs(c[i * ldc + j] - exact) > allowed + 1e-30) {
                FAIL_CHECK("at i=" << i << " j=" << j << ": " << c[i * ldc + j] << " vs " << exact
                                   << " allowed " << allowed);
              }
            }
          }
        }
      }
    }
  }
}
