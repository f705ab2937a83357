// panel_gemv, the one-row product over packed weight panels: every registered variant against the
// contract in double, over depths and panel counts that are not multiples of the tile sizes, and
// each set's variant bit for bit against row r of the same set's panel_gemm (kernels.h).
#include <cmath>
#include <cstring>
#include <vector>

#include "attnlens/kernels.h"
#include "test_util.h"

using namespace attnlens;
using namespace attnlens_test;

namespace {

constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // 2^-24
constexpr std::size_t kGuard = 8;

struct GemvCase {
  std::size_t panels, k, x_step;
  std::vector<float> x, b, y;  // y: panels * 8 outputs, then kGuard guard floats
};

GemvCase run_case(PanelGemvFn fn, std::size_t panels, std::size_t k, std::size_t x_step,
                  std::uint32_t seed) {
  Rng rng(seed);
  GemvCase c{panels,
             k,
             x_step,
             random_floats(k * x_step + 1, rng),
             random_floats(panels * k * kPanelCols, rng),
             random_floats(panels * 8 + kGuard, rng)};
  const std::vector<float> before = c.y;
  fn(panels, k, c.x.data(), x_step, c.b.data(), c.y.data());
  for (std::size_t g = panels * kPanelCols; g < c.y.size(); ++g) {
    if (std::memcmp(&c.y[g], &before[g], sizeof(float)) != 0) {
      FAIL_CHECK("wrote past the last panel at " << g);
      break;
    }
  }
  return c;
}

// |error| <= 2 (k + 1) u sum |x||b|, whatever the summation order, with or without FMA.
void check_against_contract(const GemvCase& c) {
  for (std::size_t n = 0; n < c.panels; ++n) {
    for (std::size_t j = 0; j < kPanelCols; ++j) {
      double expected = 0.0, magnitude = 0.0;
      for (std::size_t p = 0; p < c.k; ++p) {
        const double product =
            static_cast<double>(c.x[p * c.x_step]) * c.b[(n * c.k + p) * kPanelCols + j];
        expected += product;
        magnitude += std::fabs(product);
      }
      const double allowed = 2.0 * static_cast<double>(c.k + 1) * kUnitRoundoff * magnitude + 1e-30;
      const double actual = c.y[n * kPanelCols + j];
      if (!(std::fabs(actual - expected) <= allowed)) {
        FAIL_CHECK("y mismatch at panel " << n << " j=" << j << ": expected " << expected
                                          << ", actual " << actual);
        return;
      }
    }
  }
  SUCCEED();
}

const std::size_t kDepths[] = {0, 1, 2, 7, 8, 33, 64, 769};
const std::size_t kPanelCounts[] = {0, 1, 2, 3, 5};

}  // namespace

TEST_CASE("panel_gemv kernels: panel counts x depths against double precision",
          "[kernels][panel_gemv]") {
  const PanelGemvKernel kernel = GENERATE(each_kernel(panel_gemv_kernels()));
  std::uint32_t seed = 700;
  for (std::size_t panels : kPanelCounts) {
    for (std::size_t k : kDepths) {
      for (std::size_t x_step : {std::size_t{1}, kPanelRows, std::size_t{5}}) {
        INFO(kernel.name << " panels=" << panels << " k=" << k << " x_step=" << x_step);
        check_against_contract(run_case(kernel.fn, panels, k, x_step, seed++));
      }
    }
  }
}

TEST_CASE("panel_gemv: each set's variant is row r of its panel_gemm, bit for bit",
          "[kernels][panel_gemv]") {
  REQUIRE(panel_gemv_kernels().size == kernel_sets().size);  // each set's own variant
  const KernelSet& set = GENERATE(each_kernel(kernel_sets()));
  std::uint32_t seed = 900;
  for (std::size_t panels : kPanelCounts) {
    for (std::size_t k : kDepths) {
      for (std::size_t r = 0; r < kPanelRows; ++r) {
        INFO(set.name << " panels=" << panels << " k=" << k << " row " << r);
        // x is row r of a row panel A [k][4]: the other rows must not leak into the product.
        Rng rng(seed++);
        const std::vector<float> a_panel = random_floats((k + 1) * kPanelRows, rng);
        const std::vector<float> b = random_floats(panels * k * kPanelCols, rng);
        std::vector<float> y(panels * kPanelCols);
        set.panel_gemv(panels, k, a_panel.data() + r, kPanelRows, b.data(), y.data());
        std::vector<float> tile(kPanelRows * kPanelCols);
        for (std::size_t n = 0; n < panels; ++n) {
          set.panel_gemm(1, k, a_panel.data(), k * kPanelRows, b.data() + n * k * kPanelCols,
                         tile.data(), nullptr);
          for (std::size_t j = 0; j < kPanelCols; ++j) {
            const float expected = tile[r * kPanelCols + j], actual = y[n * kPanelCols + j];
            if (std::memcmp(&expected, &actual, sizeof(float)) != 0) {
              FAIL_CHECK("differs from panel_gemm at panel " << n << " j=" << j << ": " << actual
                                                             << " vs " << expected);
              return;
            }
          }
        }
      }
    }
  }
}
