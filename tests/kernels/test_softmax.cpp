// row_max and exp_sum kernels (the softmax's two passes), every registered variant,
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

// 1, 2, 3, tile-1 / tile / tile+1 for the register tiles in use (4 rows; 4, 8 columns),
// their multiples, and odd large sizes.
const std::vector<std::size_t> kSizes = {1,  2,  3,  4,  5,  6,  7,  8,  9,  11, 12,
                                         13, 15, 16, 17, 31, 32, 33, 64, 65, 127};

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // 2^-24, float32's unit roundoff

// exp(x - max) as the kernel defines it: the subtraction is done in float, the exponential is
// compared exactly (in double). Only the exponential's own accuracy is then being judged.
double expected_exp(float x, float max) {
  if (x == -kInf) return 0.0;
  const float shifted = x - max;
  return std::exp(static_cast<double>(shifted));
}

// Tolerance: relative 2e-6 per element, plus an absolute floor of FLT_MIN because results below
// the normal range (exp(-88) and smaller) may be flushed to zero. The sum of n positive terms
// adds at most n rounding errors, hence rel 2e-6 + n u.
void check_exp_sum(const ExpSumKernel& kernel, std::vector<float> x, float max, bool in_place,
                   const std::string& label) {
  std::vector<double> expected(x.size());
  double expected_sum = 0.0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    expected[j] = expected_exp(x[j], max);
    expected_sum += expected[j];
  }
  std::vector<float> separate(x.size(), -1.0f);
  float* out = in_place ? x.data() : separate.data();
  const float sum = kernel.fn(x.data(), max, out, x.size());

  INFO(kernel.name << " " << label << " n=" << x.size() << " max=" << max
                   << " in_place=" << in_place);
  for (std::size_t j = 0; j < x.size(); ++j) {
    if (expected[j] == 0.0 && out[j] != 0.0f) {
      FAIL_CHECK("exp(-inf) must be exactly 0: at j=" << j << " got " << out[j]);
      return;
    }
    const double allowed = 2e-6 * expected[j] + FLT_MIN;
    const double diff = std::fabs(out[j] - expected[j]);
    if (!(diff <= allowed)) {
      FAIL_CHECK("out mismatch at j=" << j << ": expected " << expected[j] << ", actual " << out[j]
                                      << ", |diff| " << diff << " > allowed " << allowed
                                      << " (rel 2e-6 + FLT_MIN)");
      return;
    }
  }
  const double allowed_sum =
      (2e-6 + static_cast<double>(x.size()) * kUnitRoundoff) * expected_sum + FLT_MIN;
  INFO("sum: expected " << expected_sum << ", actual " << sum << ", allowed " << allowed_sum
                        << " (rel 2e-6 + n*2^-24)");
  CHECK(std::fabs(sum - expected_sum) <= allowed_sum);
}

float row_max_of(const std::vector<float>& x) {
  float m = -kInf;
  for (float v : x) m = std::max(m, v);
  return m;
}

}  // namespace

TEST_CASE("row_max kernels: exact maximum wherever it sits", "[kernels][row_max]") {
  const RowMaxKernel kernel = GENERATE(each_kernel(row_max_kernels()));
  CAPTURE(kernel.name);
  CHECK(kernel.fn(nullptr, 0) == -kInf);
  Rng rng(7);
  std::vector<std::size_t> sizes = kSizes;
  sizes.insert(sizes.end(), {128, 129, 1000});
  for (std::size_t n : sizes) {
    // All negative, so a kernel that starts from 0 instead of -inf fails.
    std::vector<float> x = random_floats(n, rng, -100.0f, -1.0f);
    for (std::size_t at : {std::size_t{0}, n / 2, n - 1}) {
      std::vector<float> y = x;
      y[at] = -0.5f;
      INFO("n=" << n << " max at " << at);
      CHECK(kernel.fn(y.data(), n) == -0.5f);
      // -inf entries are ignored unless every entry is -inf.
      for (std::size_t j = 0; j < n; j += 3) {
        if (j != at) y[j] = -kInf;
      }
      CHECK(kernel.fn(y.data(), n) == -0.5f);
    }
    std::vector<float> all_masked(n, -kInf);
    INFO("n=" << n << " all -inf");
    CHECK(kernel.fn(all_masked.data(), n) == -kInf);
    std::vector<float> large = random_floats(n, rng, -3e38f, 3e38f);
    CHECK(kernel.fn(large.data(), n) == row_max_of(large));
    // The kernel must not read past n: a larger value just beyond the end is ignored.
    std::vector<float> with_sentinel = x;
    with_sentinel.push_back(1e30f);
    CHECK(kernel.fn(with_sentinel.data(), n) == row_max_of(x));
  }
}

TEST_CASE("exp_sum kernels: exp(x - max) and its sum", "[kernels][exp_sum]") {
  std::vector<std::size_t> sizes = kSizes;
  sizes.insert(sizes.end(), {128, 257});
  const ExpSumKernel kernel = GENERATE(each_kernel(exp_sum_kernels()));
  CAPTURE(kernel.name);
  Rng rng(11);
  for (std::size_t n : sizes) {
    for (bool in_place : {false, true}) {
      std::vector<float> x = random_floats(n, rng, -100.0f, 0.0f);
      check_exp_sum(kernel, x, 0.0f, in_place, "x in [-100, 0], max 0");
      check_exp_sum(kernel, x, row_max_of(x), in_place, "x in [-100, 0], max = row max");

      x = random_floats(n, rng, -10.0f, 10.0f);
      check_exp_sum(kernel, x, row_max_of(x), in_place, "x in [-10, 10]");

      // Large magnitudes: exp(x) alone would overflow, exp(x - max) must not.
      x = random_floats(n, rng, 1e6f - 60.0f, 1e6f);
      check_exp_sum(kernel, x, row_max_of(x), in_place, "x near 1e6");
      x = random_floats(n, rng, -3e4f, 3e4f);
      check_exp_sum(kernel, x, row_max_of(x), in_place, "x in [-3e4, 3e4]");

      // Masked entries: exp(-inf - max) is exactly 0 (the maximum is kept finite).
      x = random_floats(n, rng, -5.0f, 5.0f);
      for (std::size_t j = 1; j < n; j += 2) x[j] = -kInf;
      check_exp_sum(kernel, x, row_max_of(x), in_place, "every other entry -inf");
    }
  }
  CHECK(kernel.fn(nullptr, 0.0f, nullptr, 0) == 0.0f);
}

// out = exp(x - max) under IEEE rules: when a score overflowed to +inf the row max is +inf too,
// inf - inf is NaN, and attention() relies on that NaN reaching the sum to raise NonFiniteError
// instead of returning garbage. A vector exp whose range clamp swallows NaN breaks this.
TEST_CASE("exp_sum kernels: a NaN argument stays NaN", "[kernels][exp_sum]") {
  const ExpSumKernel kernel = GENERATE(each_kernel(exp_sum_kernels()));
  CAPTURE(kernel.name);
  for (std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{9}, std::size_t{17}}) {
    for (std::size_t at : {std::size_t{0}, n - 1}) {
      std::vector<float> x(n, 1.0f);
      x[at] = kInf;  // the overflowed score; max = +inf as row_max would report
      std::vector<float> out(n);
      const float sum = kernel.fn(x.data(), kInf, out.data(), n);
      INFO(kernel.name << " n=" << n << " +inf at " << at << ": out=" << out[at] << " sum=" << sum);
      CHECK(std::isnan(out[at]));
      CHECK(std::isnan(sum));
    }
  }
}

TEST_CASE("exp_sum kernels: writes exactly n outputs", "[kernels][exp_sum]") {
  const ExpSumKernel kernel = GENERATE(each_kernel(exp_sum_kernels()));
  CAPTURE(kernel.name);
  for (std::size_t n : kSizes) {
    std::vector<float> x(n, 0.0f);
    std::vector<float> out(n + 8, 42.0f);
    kernel.fn(x.data(), 0.0f, out.data(), n);
    INFO(kernel.name << " n=" << n);
    for (std::size_t j = n; j < n + 8; ++j) CHECK(out[j] == 42.0f);
  }
}
