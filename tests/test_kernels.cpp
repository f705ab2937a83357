// Every micro-kernel in the registry against the double reference, XNNPACK-style: sizes below, at
// and above the tile sizes (4 and 8) and their multiples, leading dimensions wider than the data,
// and a tolerance stated for each check with the failing index printed.
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

bool has_prefix(const char* name, const char* prefix) {
  return std::strncmp(name, prefix, std::strlen(prefix)) == 0;
}

// The isa part of a kernel name must say "scalar", "simd128" or "relaxedsimd", and builds without
// those instruction sets have none of the latter two.
void check_kernel_name(const char* name, const char* op_prefix) {
  INFO("kernel " << name);
  CHECK(has_prefix(name, op_prefix));
  const std::string s = name;
  const bool scalar = s.find("__scalar") != std::string::npos;
  const bool simd = s.find("__simd128") != std::string::npos;
  const bool relaxed = s.find("__relaxedsimd") != std::string::npos;
  CHECK((scalar || simd || relaxed));
  if (simd) CHECK(simd_enabled());
  if (relaxed) CHECK(relaxed_simd_enabled());
}

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

TEST_CASE("kernel registry: every variant is named, present and consistent", "[kernels]") {
  REQUIRE(gemm_kernels().size >= 1);
  REQUIRE(row_max_kernels().size >= 1);
  REQUIRE(exp_sum_kernels().size >= 1);
  REQUIRE(additive_row_kernels().size >= 1);
  REQUIRE(panel_gemm_kernels().size >= 1);
  REQUIRE(online_softmax_kernels().size >= 1);
  REQUIRE(panel_to_rows_kernels().size >= 1);
  REQUIRE(softmax_backward_kernels().size >= 1);
  REQUIRE(softcap_kernels().size >= 1);
  for (const GemmKernel& k : gemm_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_gemm__");
  }
  for (const RowMaxKernel& k : row_max_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_");
  }
  for (const ExpSumKernel& k : exp_sum_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_");
  }
  for (const AdditiveRowKernel& k : additive_row_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_");
  }
  for (const PanelGemmKernel& k : panel_gemm_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_panel_gemm__");
  }
  for (const PanelGemmStridedKernel& k : panel_gemm_strided_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_panel_gemm_strided__");
  }
  for (const OnlineSoftmaxKernel& k : online_softmax_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_online_softmax__");
  }
  for (const PanelToRowsKernel& k : panel_to_rows_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_panel_to_rows__");
  }
  for (const SoftmaxBackwardKernel& k : softmax_backward_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_softmax_backward__");
  }
  for (const SoftcapKernel& k : softcap_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_softcap__");
  }

  const Span<const KernelSet> sets = kernel_sets();
  REQUIRE(sets.size >= 1);
  CHECK(find_kernel_set("scalar") != nullptr);  // always compiled in
  CHECK(&default_kernel_set() == &sets[sets.size - 1]);
  for (const KernelSet& set : sets) {
    INFO("kernel set " << (set.name ? set.name : "(null)"));
    REQUIRE(set.name != nullptr);
    CHECK(set.gemm != nullptr);
    CHECK(set.row_max != nullptr);
    CHECK(set.exp_sum != nullptr);
    CHECK(set.additive_row != nullptr);
    CHECK(set.panel_gemm != nullptr);
    CHECK(set.online_softmax != nullptr);
    CHECK(set.panel_to_rows != nullptr);
    CHECK(set.panel_gemm_strided != nullptr);
    CHECK(set.softmax_backward != nullptr);
    CHECK(set.softcap != nullptr);
    CHECK(find_kernel_set(set.name) == &set);
    // A set is a choice among the registered variants, so testing the registry covers it.
    bool gemm_listed = false, max_listed = false, exp_listed = false, additive_listed = false,
         panel_listed = false, online_listed = false, to_rows_listed = false;
    for (const GemmKernel& k : gemm_kernels()) gemm_listed |= k.fn == set.gemm;
    for (const RowMaxKernel& k : row_max_kernels()) max_listed |= k.fn == set.row_max;
    for (const ExpSumKernel& k : exp_sum_kernels()) exp_listed |= k.fn == set.exp_sum;
    for (const AdditiveRowKernel& k : additive_row_kernels())
      additive_listed |= k.fn == set.additive_row;
    for (const PanelGemmKernel& k : panel_gemm_kernels()) panel_listed |= k.fn == set.panel_gemm;
    bool strided_listed = false;
    for (const PanelGemmStridedKernel& k : panel_gemm_strided_kernels())
      strided_listed |= k.fn == set.panel_gemm_strided;
    CHECK(strided_listed);
    for (const OnlineSoftmaxKernel& k : online_softmax_kernels())
      online_listed |= k.fn == set.online_softmax;
    for (const PanelToRowsKernel& k : panel_to_rows_kernels())
      to_rows_listed |= k.fn == set.panel_to_rows;
    CHECK(gemm_listed);
    CHECK(max_listed);
    CHECK(exp_listed);
    CHECK(additive_listed);
    CHECK(panel_listed);
    CHECK(online_listed);
    CHECK(to_rows_listed);
    bool backward_listed = false, softcap_listed = false;
    for (const SoftmaxBackwardKernel& k : softmax_backward_kernels())
      backward_listed |= k.fn == set.softmax_backward;
    for (const SoftcapKernel& k : softcap_kernels()) softcap_listed |= k.fn == set.softcap;
    CHECK(backward_listed);
    CHECK(softcap_listed);
  }
  CHECK(find_kernel_set("no-such-set") == nullptr);
  CHECK(simd_enabled() == (find_kernel_set("simd128") != nullptr));
  CHECK(relaxed_simd_enabled() == (find_kernel_set("relaxedsimd") != nullptr));
  if (relaxed_simd_enabled()) CHECK(simd_enabled());
#ifdef ATTNLENS_NO_SIMD
  CHECK_FALSE(simd_enabled());
  CHECK(sets.size == 1);  // scalar only
#endif
}

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
