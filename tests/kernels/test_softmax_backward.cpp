// The softmax_backward kernels (attention backward's element-wise step) against their contract
// (attnlens/kernels.h) evaluated in double: every registered variant, row counts below, at and
// above the 4-row group it transposes, rows that see nothing (base +inf), masked entries (-inf),
// and NaN passing through.
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attnlens/kernels.h"
#include "test_util.h"

using namespace attnlens;
using namespace attnlens_test;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr std::size_t kCols = kPanelCols, kGroup = kPanelRows;

struct Block {
  std::vector<float> s, dp;        // [n][8]
  std::vector<float> base, delta;  // [n]
};

// Logits within 30 below their row's base (a few a little above, as rounding leaves them), every
// fifth entry masked, every seventh row seeing nothing.
Block random_block(std::size_t n, Rng& rng) {
  Block b;
  b.base = random_floats(n, rng, -40.0f, 40.0f);
  b.delta = random_floats(n, rng, -3.0f, 3.0f);
  b.dp = random_floats(n * kCols, rng, -3.0f, 3.0f);
  b.s.resize(n * kCols);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 7 == 6) b.base[i] = kInf;
    for (std::size_t j = 0; j < kCols; ++j) {
      const float finite_base = std::isinf(b.base[i]) ? 0.0f : b.base[i];
      b.s[i * kCols + j] = (i + j) % 5 == 0 ? -kInf : finite_base + rng.uniform(-30.0f, 1e-5f);
    }
  }
  return b;
}

// The kernel's weights and gradients within a relative 4e-6 (exp2's 2e-7 plus the float
// subtraction and product) plus FLT_MIN, exact zeros where the contract says 0, the transposed
// copy equal to the gradient bit for bit (zeros for padding rows), nothing written between its
// groups (t_stride > 32: another key panel's blocks) or past the last.
void check(const SoftmaxBackwardKernel& kernel, const Block& in, const std::string& label,
           std::size_t t_stride) {
  const std::size_t n = in.base.size();
  const std::size_t groups = (n + kGroup - 1) / kGroup, block = kGroup * kCols;
  Block out = in;
  std::vector<float> ds_t(groups * t_stride + 8, 12345.0f);
  kernel.fn(n, out.s.data(), out.dp.data(), in.base.data(), in.delta.data(), ds_t.data(), t_stride);
  INFO(kernel.name << " " << label << " n=" << n << " t_stride=" << t_stride);
  for (std::size_t i = 0; i < groups * kGroup; ++i) {
    for (std::size_t j = 0; j < kCols; ++j) {
      const float transposed = ds_t[(i / kGroup) * t_stride + j * kGroup + i % kGroup];
      if (i >= n) {
        if (transposed != 0.0f)
          FAIL_CHECK("padding row " << i << " key " << j << ": " << transposed);
        continue;
      }
      const std::size_t at = i * kCols + j;
      const float x = in.s[at] - in.base[i];  // formed in float, as the kernel forms it
      const double p = std::exp2(std::min(static_cast<double>(x), 0.0));
      const double g = p * (static_cast<double>(in.dp[at]) - in.delta[i]);
      INFO("row " << i << " key " << j << ": s " << in.s[at] << ", base " << in.base[i]);
      if (p == 0.0) {
        CHECK(out.s[at] == 0.0f);
        CHECK(out.dp[at] == 0.0f);
      }
      if (!(std::fabs(out.s[at] - p) <= 4e-6 * p + FLT_MIN)) {
        FAIL_CHECK("p: expected " << p << ", actual " << out.s[at]);
        return;
      }
      if (!(std::fabs(out.dp[at] - g) <= 4e-6 * std::fabs(g) + FLT_MIN)) {
        FAIL_CHECK("ds: expected " << g << ", actual " << out.dp[at]);
        return;
      }
      if (transposed != out.dp[at]) {
        FAIL_CHECK("ds_t differs from ds: " << transposed << " vs " << out.dp[at]);
        return;
      }
    }
  }
  for (std::size_t g = 0; g < ds_t.size(); ++g) {
    const bool written = g / t_stride < groups && g % t_stride < block;
    if (!written && ds_t[g] != 12345.0f) FAIL_CHECK("wrote outside its groups, at " << g);
  }
}

}  // namespace

TEST_CASE("softmax_backward kernels: rows around the 4-row group, masked rows and entries",
          "[kernels][softmax_backward]") {
  const SoftmaxBackwardKernel kernel = GENERATE(each_kernel(softmax_backward_kernels()));
  CAPTURE(kernel.name);
  Rng rng(70000);
  for (std::size_t n : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 128, 257}) {
    check(kernel, random_block(n, rng), "random", kGroup * kCols);
    check(kernel, random_block(n, rng), "random", 8 * kGroup * kCols + 4);  // 8 key panels
  }
  // Logits at the base give weights of 1; a zero-width gradient difference gives exactly 0.
  Block ones;
  ones.base.assign(5, 2.5f);
  ones.delta.assign(5, 0.75f);
  ones.s.assign(5 * kCols, 2.5f);
  ones.dp.assign(5 * kCols, 0.75f);
  check(kernel, ones, "p = 1, dp = delta", kGroup * kCols);
}

TEST_CASE("softmax_backward kernels: a NaN logit stays NaN", "[kernels][softmax_backward]") {
  const SoftmaxBackwardKernel kernel = GENERATE(each_kernel(softmax_backward_kernels()));
  CAPTURE(kernel.name);
  for (std::size_t n : {1, 4, 6}) {
    std::vector<float> s(n * kCols, -1.0f), dp(n * kCols, 1.0f), base(n, 0.0f), delta(n, 0.5f),
        ds_t((n + 3) / 4 * 4 * kCols);
    s[(n - 1) * kCols + 3] = std::numeric_limits<float>::quiet_NaN();
    kernel.fn(n, s.data(), dp.data(), base.data(), delta.data(), ds_t.data(), kGroup * kCols);
    CHECK(std::isnan(s[(n - 1) * kCols + 3]));
    CHECK(std::isnan(dp[(n - 1) * kCols + 3]));
    CHECK(s[(n - 1) * kCols + 2] == Approx(0.5f));
  }
}
