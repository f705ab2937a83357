// The kernels attention runs on, panel_gemm, online_softmax and panel_to_rows, against results
// computed here from their contracts (attnlens/kernels.h), in double where rounding matters:
// every registered variant, depths below, at and above the tile sizes, padded panel strides,
// both GEMM modes, masked entries, columns with nothing visible, and IEEE behaviour on overflow.
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attnlens/kernels.h"
#include "test_util.h"

using namespace attnlens;
using namespace attnlens_test;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // 2^-24
constexpr std::size_t kTile = kPanelRows * kPanelCols;

// C after one call over `tiles` panels of depth k against the contract, A_t[p][r] being
// a_at(t, p, r), C pre-filled with c_in (scaled by `scale`, or overwritten) and guard floats
// after the last tile that must survive. Bound as for the plain GEMM:
// |error| <= 2 (k + 1) u (|C_in * scale| + sum |a||b|), for any summation order, with or without
// FMA.
template <typename AAt>
void check_panel_product(std::size_t tiles, std::size_t k, AAt&& a_at, const std::vector<float>& b,
                         const std::vector<float>& c_in, const float* scale,
                         const std::vector<float>& c) {
  for (std::size_t t = 0; t < tiles; ++t) {
    for (std::size_t r = 0; r < kPanelRows; ++r) {
      for (std::size_t j = 0; j < kPanelCols; ++j) {
        const std::size_t at = t * kTile + r * kPanelCols + j;
        double expected = scale ? static_cast<double>(c_in[at]) * scale[j] : 0.0;
        double magnitude = std::fabs(expected);
        for (std::size_t p = 0; p < k; ++p) {
          const double product = static_cast<double>(a_at(t, p, r)) * b[p * kPanelCols + j];
          expected += product;
          magnitude += std::fabs(product);
        }
        const double allowed = 2.0 * static_cast<double>(k + 1) * kUnitRoundoff * magnitude + 1e-30;
        const double diff = std::fabs(c[at] - expected);
        if (!(diff <= allowed)) {
          FAIL_CHECK("C mismatch at tile " << t << " r=" << r << " j=" << j << ": expected "
                                           << expected << ", actual " << c[at] << ", |diff| "
                                           << diff << " > allowed " << allowed);
          return;
        }
      }
    }
  }
  for (std::size_t g = tiles * kTile; g < c.size(); ++g) {
    if (c[g] != c_in[g]) {
      FAIL_CHECK("wrote past the last tile at " << g << ": was " << c_in[g] << ", now " << c[g]);
      return;
    }
  }
  SUCCEED();
}

// One call over `tiles` packed panels of depth k, A panels `a_pad` floats apart beyond their 4k,
// C pre-filled with noise (scaled by a random column scale, or overwritten), and 8 guard floats
// after the last tile.
void check_panel_gemm(const PanelGemmKernel& kernel, std::size_t tiles, std::size_t k,
                      std::size_t a_pad, bool scaled, std::uint32_t seed) {
  Rng rng(seed);
  const std::size_t a_stride = k * kPanelRows + a_pad;
  const std::vector<float> a = random_floats(tiles * a_stride, rng);
  const std::vector<float> b = random_floats(k * kPanelCols, rng);
  const std::vector<float> scale = random_floats(kPanelCols, rng, -1.5f, 1.5f);
  const std::vector<float> c_in = random_floats(tiles * kTile + 8, rng, -2.0f, 2.0f);
  std::vector<float> c = c_in;
  kernel.fn(tiles, k, a.data(), a_stride, b.data(), c.data(), scaled ? scale.data() : nullptr);

  INFO(kernel.name << " tiles=" << tiles << " k=" << k << " a_stride=" << a_stride
                   << " scaled=" << scaled);
  check_panel_product(
      tiles, k,
      [&](std::size_t t, std::size_t p, std::size_t r) {
        return a[t * a_stride + p * kPanelRows + r];
      },
      b, c_in, scaled ? scale.data() : nullptr, c);
}

// A set's strided kernel on rows in place, the two ways attention reads a KV cache: key rows
// [tiles * 4][k + pad] (a_step 1, a_row k + pad) and value rows [k][4 * tiles + pad] (a_step
// 4 * tiles + pad, a_row 1). Against the contract, and bit for bit the set's packed panel_gemm
// on the same numbers packed.
void check_panel_gemm_strided(const KernelSet& set, std::size_t tiles, std::size_t k,
                              std::size_t pad, bool value_rows, bool scaled, std::uint32_t seed) {
  Rng rng(seed);
  const std::size_t a_stride = value_rows ? kPanelRows : kPanelRows * (k + pad);
  const std::size_t a_step = value_rows ? kPanelRows * tiles + pad : 1;
  const std::size_t a_row = value_rows ? 1 : k + pad;
  const std::vector<float> a = random_floats(value_rows ? k * a_step : tiles * a_stride, rng);
  const auto a_at = [&](std::size_t t, std::size_t p, std::size_t r) {
    return a[t * a_stride + p * a_step + r * a_row];
  };
  std::vector<float> packed(tiles * k * kPanelRows);
  for (std::size_t t = 0; t < tiles; ++t) {
    for (std::size_t p = 0; p < k; ++p) {
      for (std::size_t r = 0; r < kPanelRows; ++r)
        packed[(t * k + p) * kPanelRows + r] = a_at(t, p, r);
    }
  }
  const std::vector<float> b = random_floats(k * kPanelCols, rng);
  const std::vector<float> scale = random_floats(kPanelCols, rng, -1.5f, 1.5f);
  const std::vector<float> c_in = random_floats(tiles * kTile + 8, rng, -2.0f, 2.0f);
  const float* c_scale = scaled ? scale.data() : nullptr;
  std::vector<float> c = c_in, c_packed = c_in;
  set.panel_gemm_strided(tiles, k, a.data(), a_stride, a_step, a_row, b.data(), c.data(), c_scale);
  set.panel_gemm(tiles, k, packed.data(), k * kPanelRows, b.data(), c_packed.data(), c_scale);

  INFO(set.name << " strided tiles=" << tiles << " k=" << k << " pad=" << pad
                << (value_rows ? " value rows" : " key rows") << " scaled=" << scaled);
  check_panel_product(tiles, k, a_at, b, c_in, c_scale, c);
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (std::memcmp(&c[i], &c_packed[i], sizeof(float)) != 0) {
      FAIL_CHECK("differs from panel_gemm at " << i << ": " << c[i] << " vs " << c_packed[i]);
      return;
    }
  }
}

// The online-softmax contract (base 2) evaluated in double from the same float inputs.
// Differences the kernel forms in float (x - base) are formed in float here too, so only exp2
// and the sums are judged: relative 2e-6 per element plus FLT_MIN (results below the normal range
// may flush to zero), and 2e-6 + (n + 2) u for the sums.
struct SoftmaxCase {
  std::vector<float> s;  // [n][8]
  std::vector<float> max, sum;
};

void check_online_softmax(const OnlineSoftmaxKernel& kernel, const SoftmaxCase& in,
                          const std::string& label) {
  const std::size_t n = in.s.size() / kPanelCols;
  SoftmaxCase out = in;
  std::vector<float> rescale(kPanelCols, -1.0f);
  kernel.fn(n, out.s.data(), out.max.data(), out.sum.data(), rescale.data());

  INFO(kernel.name << " " << label << " n=" << n);
  const auto close = [](double expected, double actual, double rel) {
    return std::fabs(actual - expected) <= rel * std::fabs(expected) + FLT_MIN;
  };
  for (std::size_t j = 0; j < kPanelCols; ++j) {
    float m = in.max[j];
    for (std::size_t i = 0; i < n; ++i) m = std::max(m, in.s[i * kPanelCols + j]);
    const float base = m == -kInf ? 0.0f : m;
    INFO("column " << j << ": max in " << in.max[j] << ", block max " << m);
    CHECK(out.max[j] == m);
    const double expected_rescale = std::exp2(static_cast<double>(in.max[j] - base));
    if (!close(expected_rescale, rescale[j], 2e-6)) {
      FAIL_CHECK("rescale: expected " << expected_rescale << ", actual " << rescale[j]);
    }
    double block_sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const float x = in.s[i * kPanelCols + j];
      const double expected = x == -kInf ? 0.0 : std::exp2(static_cast<double>(x - base));
      const float actual = out.s[i * kPanelCols + j];
      block_sum += expected;
      if (expected == 0.0 && actual != 0.0f) {
        FAIL_CHECK("2^-inf must be exactly 0: row " << i << " got " << actual);
        return;
      }
      if (!close(expected, actual, 2e-6)) {
        FAIL_CHECK("s mismatch at row " << i << ": expected " << expected << ", actual " << actual
                                        << " (rel 2e-6 + FLT_MIN)");
        return;
      }
    }
    const double expected_sum = static_cast<double>(in.sum[j]) * expected_rescale + block_sum;
    const double rel = 2e-6 + static_cast<double>(n + 2) * kUnitRoundoff;
    INFO("sum: expected " << expected_sum << ", actual " << out.sum[j]);
    CHECK(close(expected_sum, out.sum[j], rel));
  }
}

SoftmaxCase random_block(std::size_t n, Rng& rng, float lo, float hi) {
  SoftmaxCase c;
  c.s = random_floats(n * kPanelCols, rng, lo, hi);
  c.max.assign(kPanelCols, -kInf);
  c.sum.assign(kPanelCols, 0.0f);
  return c;
}

// 1, 2, 3, around the unroll-free loop's trivial cases; after whole iterations of the relaxed
// kernel's 4-step loop, an exit after each of its steps (k % 4 = 1, 2, 3, 0); odd large depths.
const std::vector<std::size_t> kDepths = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,
                                          10, 15, 16, 17, 31, 33, 64, 65, 127};

}  // namespace

TEST_CASE("panel_gemm kernels: tiles x depth sweep, overwrite and scaled accumulate",
          "[kernels][panel_gemm]") {
  std::uint32_t seed = 40000;
  const PanelGemmKernel kernel = GENERATE(each_kernel(panel_gemm_kernels()));
  CAPTURE(kernel.name);
  for (std::size_t tiles : {1, 2, 3, 5}) {
    for (std::size_t k : kDepths) {
      for (bool scaled : {false, true}) {
        check_panel_gemm(kernel, tiles, k, (k + tiles) % 3 == 0 ? 0 : 4 * tiles + 1, scaled,
                         seed++);
      }
    }
  }
  check_panel_gemm(kernel, 16, 256, 0, true, seed++);  // a long attention-sized call
  check_panel_gemm(kernel, 0, 64, 0, true, seed++);    // no tiles: nothing written
}

TEST_CASE("panel_gemm_strided kernels: key and value rows in place, as packed, bit for bit",
          "[kernels][panel_gemm]") {
  std::uint32_t seed = 40500;
  REQUIRE(panel_gemm_strided_kernels().size == kernel_sets().size);  // each set's own variant
  for (const KernelSet& set : kernel_sets()) {
    for (std::size_t tiles : {1, 2, 3, 5}) {
      for (std::size_t k : kDepths) {
        for (bool value_rows : {false, true}) {
          check_panel_gemm_strided(set, tiles, k, (k + tiles) % 3, value_rows, (k & 1) != 0,
                                   seed++);
        }
      }
    }
    check_panel_gemm_strided(set, 16, 128, 0, true, true, seed++);  // a streaming chunk of values
    check_panel_gemm_strided(set, 0, 64, 0, false, true, seed++);   // no tiles: nothing written
  }
}

TEST_CASE("panel_gemm kernels: zero scale clears C even when it held huge values",
          "[kernels][panel_gemm]") {
  // Attention rescales its accumulators by 2^(old max - new max), which underflows to exactly 0;
  // 0 * finite C must give 0 so the old contents vanish.
  const PanelGemmKernel kernel = GENERATE(each_kernel(panel_gemm_kernels()));
  CAPTURE(kernel.name);
  std::vector<float> a(4 * 3, 0.5f), b(8 * 3, 0.25f), c(kTile, 3e38f), scale(kPanelCols, 0.0f);
  kernel.fn(1, 3, a.data(), 12, b.data(), c.data(), scale.data());
  for (float x : c) CHECK(x == 3 * 0.5f * 0.25f);
}

TEST_CASE("online_softmax kernels: fresh and continuing blocks", "[kernels][online_softmax]") {
  std::vector<std::size_t> sizes = {0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33, 64, 127, 128, 257};
  const OnlineSoftmaxKernel kernel = GENERATE(each_kernel(online_softmax_kernels()));
  CAPTURE(kernel.name);
  Rng rng(50000);
  for (std::size_t n : sizes) {
    SoftmaxCase c = random_block(n, rng, -10.0f, 10.0f);
    check_online_softmax(kernel, c, "fresh, s in [-10, 10]");

    // A previous block left maxima both above and below this block's entries.
    c.max = random_floats(kPanelCols, rng, -12.0f, 12.0f);
    c.sum = random_floats(kPanelCols, rng, 0.5f, 50.0f);
    check_online_softmax(kernel, c, "continuing");

    // Large magnitudes: 2^x alone would overflow, 2^(x - max) must not.
    c = random_block(n, rng, 1e6f - 60.0f, 1e6f);
    check_online_softmax(kernel, c, "s near 1e6");
    c = random_block(n, rng, -3e4f, 3e4f);
    c.max = random_floats(kPanelCols, rng, -3e4f, 3e4f);
    c.sum = random_floats(kPanelCols, rng, 0.5f, 2.0f);
    check_online_softmax(kernel, c, "s and max in [-3e4, 3e4]");

    // Masked entries (-inf) and whole masked columns, fresh and continuing: column 2 has
    // nothing visible at all, column 5 only what an earlier block saw.
    c = random_block(n, rng, -5.0f, 5.0f);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < kPanelCols; ++j) {
        if ((i + j) % 3 == 0 || j == 2 || j == 5) c.s[i * kPanelCols + j] = -kInf;
      }
    }
    check_online_softmax(kernel, c, "masked entries, fresh");
    c.max = random_floats(kPanelCols, rng, -3.0f, 3.0f);
    c.max[2] = -kInf;
    c.sum = random_floats(kPanelCols, rng, 1.0f, 4.0f);
    c.sum[2] = 0.0f;
    check_online_softmax(kernel, c, "masked entries, continuing");
  }
}

// A score that overflowed to +inf makes its column's max +inf and inf - inf = NaN; attention()
// relies on that NaN reaching the sum to raise NonFiniteError instead of returning garbage.
TEST_CASE("online_softmax kernels: an overflowed score turns its column NaN",
          "[kernels][online_softmax]") {
  const OnlineSoftmaxKernel kernel = GENERATE(each_kernel(online_softmax_kernels()));
  CAPTURE(kernel.name);
  for (std::size_t n : {1, 2, 5, 9}) {
    for (std::size_t column : {0, 3, 4, 7}) {
      std::vector<float> s(n * kPanelCols, 1.0f), max(kPanelCols, -kInf), sum(kPanelCols, 0.0f),
          rescale(kPanelCols);
      s[(n - 1) * kPanelCols + column] = kInf;
      kernel.fn(n, s.data(), max.data(), sum.data(), rescale.data());
      INFO(kernel.name << " n=" << n << " +inf in column " << column);
      CHECK(max[column] == kInf);
      CHECK(std::isnan(s[(n - 1) * kPanelCols + column]));
      CHECK(std::isnan(sum[column]));
      const std::size_t other = (column + 1) % kPanelCols;
      CHECK(sum[other] == static_cast<float>(n));  // 2^(1 - 1) = 1 per row, untouched by NaN
    }
  }
}

// A single multiply per element, so the result must be exact; rows of the destination beyond
// `rows` and columns beyond n (the caller's other data) must survive.
TEST_CASE("panel_to_rows kernels: every n and row count, padded destinations",
          "[kernels][panel_to_rows]") {
  const std::vector<std::size_t> counts = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 64, 65, 127};
  const PanelToRowsKernel kernel = GENERATE(each_kernel(panel_to_rows_kernels()));
  CAPTURE(kernel.name);
  Rng rng(60000);
  for (std::size_t n : counts) {
    for (std::size_t rows = 1; rows <= kPanelCols; ++rows) {
      const std::size_t ldo = n + (rows % 3) * 2;
      const std::vector<float> panel = random_floats(n * kPanelCols, rng, -10.0f, 10.0f);
      const std::vector<float> scale = random_floats(kPanelCols, rng, -2.0f, 2.0f);
      const std::vector<float> before = random_floats(kPanelCols * ldo + 4, rng);
      std::vector<float> out = before;
      kernel.fn(n, panel.data(), rows, scale.data(), out.data(), ldo);
      INFO(kernel.name << " n=" << n << " rows=" << rows << " ldo=" << ldo);
      std::size_t bad = 0;
      for (std::size_t at = 0; at < out.size(); ++at) {
        const std::size_t j = at / std::max<std::size_t>(ldo, 1),
                          i = at % std::max<std::size_t>(ldo, 1);
        const bool written = ldo > 0 && j < rows && i < n;
        const float expected = written ? panel[i * kPanelCols + j] * scale[j] : before[at];
        if (out[at] != expected && bad++ == 0) {
          FAIL_CHECK("at row " << j << " column " << i << ": expected " << expected
                               << (written ? "" : " (not to be written)") << ", actual "
                               << out[at]);
        }
      }
      CHECK(bad == 0);
    }
  }
}
