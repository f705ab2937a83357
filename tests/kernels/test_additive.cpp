// additive_row kernels (the additive score's row), every registered variant,
// against the double reference, XNNPACK-style: sizes below, at and above the tile sizes (4 and
// 8) and their multiples, leading dimensions wider than the data, and a tolerance stated for
// each check with the failing index printed.
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attnlens/kernels.h"
#include "reference/reference.h"
#include "test_util.h"

using namespace attnlens;
using namespace attnlens_test;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // 2^-24, float32's unit roundoff

}  // namespace

// out[j] = sum_a v[a] tanh(qa[a] + kat[a * ldk + j]). Tolerance: tanh approximations are allowed
// an absolute error of 2e-6 per term, so abs 2e-6 * sum |v| + the float accumulation bound.
TEST_CASE("additive_row kernels: hidden and n sweep with ldk > n", "[kernels][additive]") {
  const std::vector<std::size_t> sizes = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65, 67};
  const AdditiveRowKernel kernel = GENERATE(each_kernel(additive_row_kernels()));
  CAPTURE(kernel.name);
  std::uint32_t seed = 30000;
  for (std::size_t hidden : sizes) {
    for (std::size_t n : sizes) {
      Rng rng(seed++);
      const std::size_t ldk = n + (hidden % 4) + 1;
      // Pre-activations span tanh's linear part and both saturated ends.
      const float range = (n % 3 == 0) ? 12.0f : 2.5f;
      const std::vector<float> qa = random_floats(hidden, rng, -range, range);
      const std::vector<float> kat = random_floats(hidden * ldk, rng, -range, range);
      const std::vector<float> v = random_floats(hidden, rng);
      std::vector<float> out(n + 4, 42.0f);
      kernel.fn(hidden, qa.data(), kat.data(), ldk, v.data(), n, out.data());

      double v_magnitude = 0.0;
      for (float x : v) v_magnitude += std::fabs(x);
      std::vector<double> expected(n);
      for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t a = 0; a < hidden; ++a) {
          expected[j] +=
              static_cast<double>(v[a]) * std::tanh(static_cast<double>(qa[a]) + kat[a * ldk + j]);
        }
      }
      const Tolerance tol{(2e-6 + 2.0 * (hidden + 1) * kUnitRoundoff) * v_magnitude, 0.0};
      INFO(kernel.name << " hidden=" << hidden << " n=" << n << " ldk=" << ldk);
      ATTNLENS_CHECK_CLOSE(std::vector<float>(out.begin(), out.begin() + n), expected, tol,
                           Layout{}, "additive_row out");
      for (std::size_t j = n; j < n + 4; ++j) CHECK(out[j] == 42.0f);
    }
  }
}
