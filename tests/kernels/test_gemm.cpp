// gemm kernels, every registered variant (GENERATE over gemm_kernels()),
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

// One gemm call with padded leading dimensions and C pre-filled with noise, compared against
// reference::gemm. The bound is the classic one for a k-term float dot product,
// |error| <= (k + 1) u (|C_in| + sum |a||b|), doubled for slack: it holds for any summation order
// and with or without FMA, so it is tight yet fair to every variant.
void check_gemm(const GemmKernel& kernel, std::size_t m, std::size_t n, std::size_t k,
                bool accumulate, std::size_t pad, std::uint32_t seed) {
  Rng rng(seed);
  const std::size_t lda = k + pad, ldb = n + pad, ldc = n + pad;
  const std::vector<float> a = random_floats(m * lda, rng);
  const std::vector<float> b = random_floats(k * ldb, rng);
  const std::vector<float> c_in = random_floats(m * ldc, rng, -2.0f, 2.0f);
  std::vector<float> c = c_in;
  kernel.fn(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc, accumulate);

  std::vector<double> expected;
  reference::gemm(m, n, k, a.data(), lda, b.data(), ldb, c_in.data(), ldc, accumulate, expected);

  INFO(kernel.name << " m=" << m << " n=" << n << " k=" << k << " lda=" << lda << " ldb=" << ldb
                   << " ldc=" << ldc << " accumulate=" << accumulate);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < ldc; ++j) {
      const std::size_t at = i * ldc + j;
      if (j >= n) {
        // Padding columns belong to the caller: they must come back bit for bit.
        if (c[at] != c_in[at]) {
          FAIL_CHECK("wrote outside C at i=" << i << " j=" << j << " (n=" << n << "): was "
                                             << c_in[at] << ", now " << c[at]);
          return;
        }
        continue;
      }
      double magnitude = accumulate ? std::fabs(c_in[at]) : 0.0;
      for (std::size_t p = 0; p < k; ++p) magnitude += std::fabs(a[i * lda + p] * b[p * ldb + j]);
      const double allowed = 2.0 * static_cast<double>(k + 1) * kUnitRoundoff * magnitude + 1e-30;
      const double diff = std::fabs(c[at] - expected[at]);
      if (!(diff <= allowed)) {
        FAIL_CHECK("C mismatch at i=" << i << " j=" << j << ": expected " << expected[at]
                                      << ", actual " << c[at] << ", |diff| " << diff
                                      << " > allowed " << allowed);
        return;
      }
    }
  }
  SUCCEED();
}

}  // namespace

TEST_CASE("gemm kernels: m x n sweep over awkward sizes", "[kernels][gemm]") {
  std::uint32_t seed = 1;
  const GemmKernel kernel = GENERATE(each_kernel(gemm_kernels()));
  CAPTURE(kernel.name);
  for (std::size_t m : kSizes) {
    for (std::size_t n : kSizes) {
      for (std::size_t k : {std::size_t{1}, std::size_t{7}, std::size_t{17}}) {
        const bool accumulate = (m + n + k) % 2 == 0;
        check_gemm(kernel, m, n, k, accumulate, (m + n) % 3 == 0 ? 0 : 5, seed++);
      }
    }
  }
}

TEST_CASE("gemm kernels: k sweep and accumulate both ways", "[kernels][gemm]") {
  std::uint32_t seed = 10000;
  const std::size_t tiles[][2] = {{1, 1}, {3, 7}, {4, 8}, {5, 9}, {8, 16}, {17, 33}};
  const GemmKernel kernel = GENERATE(each_kernel(gemm_kernels()));
  CAPTURE(kernel.name);
  for (const auto& mn : tiles) {
    for (std::size_t k : kSizes) {
      for (bool accumulate : {false, true}) {
        check_gemm(kernel, mn[0], mn[1], k, accumulate, 3, seed++);
      }
    }
  }
}

TEST_CASE("gemm kernels: large and degenerate shapes", "[kernels][gemm]") {
  std::uint32_t seed = 20000;
  const GemmKernel kernel = GENERATE(each_kernel(gemm_kernels()));
  CAPTURE(kernel.name);
  check_gemm(kernel, 127, 127, 127, false, 1, seed++);
  check_gemm(kernel, 65, 64, 130, true, 0, seed++);
  check_gemm(kernel, 64, 65, 64, false, 7, seed++);
  check_gemm(kernel, 130, 3, 67, true, 2, seed++);
  // Depths past the SIMD kernel's 256-deep B panels: the second block accumulates onto the first.
  check_gemm(kernel, 9, 17, 300, false, 3, seed++);
  check_gemm(kernel, 5, 24, 513, true, 0, seed++);
  // k = 0: C becomes 0, or stays C_in when accumulating.
  check_gemm(kernel, 5, 9, 0, false, 2, seed++);
  check_gemm(kernel, 5, 9, 0, true, 2, seed++);
}
