// Q8_0 weights (src/models/q8_0.h): the dequantising panel kernels of every ModelOps set against
// a double-precision reference over awkward sizes, linear() on Q8_0 matrices of widths that are
// not whole panels and row counts that are not whole tiles (both of its paths), the packing's
// refusals, and whole models stored as Q8_0 against the reference forward of the same
// (dequantised) weights.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "models/linear.h"
#include "models/ops.h"
#include "models/packing.h"
#include "models/q8_0.h"
#include "models_test_util.h"
#include "quantized_test_util.h"

using namespace attnlens;
using namespace attnlens::models;
using namespace attnlens_test;

namespace {

// GGML's quantize_row_q8_0: d = max |x| / 127 stored as f16, q = round(x / d). Writes `rows`
// rows of `in` values as Q8_0 blocks and returns the dequantised values (q * f16(d)).
std::vector<double> quantize_rows(const std::vector<double>& x, std::int64_t rows, std::int64_t in,
                                  std::uint8_t* out) {
  std::vector<double> dequantised(x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t b = 0; b < in / kQ8Block; ++b) {
      const double* v = x.data() + r * in + b * kQ8Block;
      double amax = 0;
      for (std::int64_t i = 0; i < kQ8Block; ++i) amax = std::max(amax, std::fabs(v[i]));
      const float d = static_cast<float>(amax / 127.0);
      const std::uint16_t half = exact_half(static_cast<float>(
          std::ldexp(std::nearbyint(std::ldexp(d, 10 - std::ilogb(d ? d : 1.0f))),
                     std::ilogb(d ? d : 1.0f) - 10)));
      float scale;
      f16_to_f32__scalar(1, &half, &scale);
      std::uint8_t* block = out + (r * (in / kQ8Block) + b) * kQ8BlockBytes;
      block[0] = static_cast<std::uint8_t>(half & 0xff);
      block[1] = static_cast<std::uint8_t>(half >> 8);
      for (std::int64_t i = 0; i < kQ8Block; ++i) {
        const double q =
            scale == 0 ? 0 : std::max(-127.0, std::min(127.0, std::nearbyint(v[i] / scale)));
        block[2 + i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(q));
        dequantised[static_cast<std::size_t>(r * in + b * kQ8Block + i)] = q * scale;
      }
    }
  }
  return dequantised;
}

std::vector<double> random_values(std::size_t n, Rng& rng, float range) {
  std::vector<double> v(n);
  for (double& x : v) x = rng.uniform(-range, range);
  return v;
}

// A Q8_0 matrix W [in, out] (written as out rows of in), packed, with its dequantised values.
struct Q8Matrix {
  std::vector<std::uint8_t> packed;
  std::vector<double> w;  // [out][in], dequantised
  std::int64_t in, out;
};

Q8Matrix random_q8(std::int64_t in, std::int64_t out, std::int64_t groups, std::uint32_t seed) {
  Rng rng(seed);
  Q8Matrix m{{}, {}, in, out};
  std::vector<std::uint8_t> written(static_cast<std::size_t>(q8_written_bytes(in, out)));
  m.w = quantize_rows(random_values(static_cast<std::size_t>(in * out), rng, 0.5f), out, in,
                      written.data());
  m.packed.resize(static_cast<std::size_t>(q8_packed_bytes(in, out, groups)));
  pack_q8_matrix(written.data(), in, out, groups, m.packed.data());
  return m;
}

}  // namespace

TEST_CASE("Q8_0 panel kernels: every set against double precision, awkward depths and tiles",
          "[models][ops][q8]") {
  for (const ModelOps& ops : model_op_sets()) {
    for (std::int64_t k : {32, 64, 96, 160, 768}) {
      for (std::size_t tiles : {1u, 2u, 3u, 5u}) {
        const Q8Matrix m = random_q8(k, 8, 1, static_cast<std::uint32_t>(k + tiles));
        Rng rng(static_cast<std::uint32_t>(7 * k + tiles));
        const std::vector<float> a =
            random_floats(tiles * static_cast<std::size_t>(k) * 4, rng, -2.0f, 2.0f);
        std::vector<float> c(tiles * 32, -1.0f);
        ops.q8_panel_gemm(tiles, static_cast<std::size_t>(k), a.data(),
                          static_cast<std::size_t>(k) * 4, m.packed.data(), c.data());
        INFO(ops.name << " k " << k << " tiles " << tiles);
        // The weights themselves are exact in f32: no rounding beyond the sums'.
        check_panel_gemm_against_double(tiles, k, a, m.w, c, 0);
        // Dequantising the panel gives the float weights exactly, and the f32 panel GEMM of the
        // kernel set of the same name computes the same bits over them.
        std::vector<float> panel(static_cast<std::size_t>(k) * 8);
        ops.q8_panel_to_f32(static_cast<std::size_t>(k), m.packed.data(), panel.data());
        for (std::int64_t p = 0; p < k; ++p) {
          for (std::int64_t j = 0; j < 8; ++j) {
            REQUIRE(panel[static_cast<std::size_t>(p * 8 + j)] ==
                    m.w[static_cast<std::size_t>(j * k + p)]);
          }
        }
        check_f32_panel_gemm_same_bits(ops, tiles, k, a, panel, c);
      }
    }
  }
}

TEST_CASE("linear() on Q8_0 matrices: partial panels, partial tiles, column groups, both paths",
          "[models][q8]") {
  for (const KernelSet& kernels : kernel_sets()) {
    const ModelOps& ops = model_ops_for(kernels);
    const StepContext ctx{kernels, ops, 1};
    for (std::int64_t in : {32, 96}) {
      for (std::int64_t out : {1, 7, 9, 33, 3 * 11}) {
        for (std::int64_t groups : {1, 3}) {
          if (out % groups != 0) continue;
          const Q8Matrix m = random_q8(in, out, groups, static_cast<std::uint32_t>(in * out));
          // Rows 1..9 cover the dequantising kernel (up to 2 tiles) and the dequantise-then-f32
          // path (3 tiles and more), with partial last tiles.
          for (std::int64_t rows : {1, 3, 5, 8, 9, 13}) {
            check_quantized_linear(
                ctx, rows, in, out, groups, m.w, [&](std::int64_t g, std::int64_t group_out) {
                  const std::uint8_t* group =
                      m.packed.data() + g * panels_of(group_out) * q8_panel_bytes(in);
                  return PackedMatrix{nullptr, nullptr, in, group_out, group};
                });
          }
        }
      }
    }
  }
}

TEST_CASE("linear() on Q8_0 matrices: depth slices of whole blocks give the whole depth's bits",
          "[models][q8]") {
  struct Case {
    std::int64_t in, out, rows, slice;
  };
  // Slices of one and two blocks (40 rounds down to 32), and linear()'s own depth over 19 blocks
  // in two row blocks (96 tiles, then 4: neither on the dequantising kernel, so both depths take
  // the same path).
  for (const Case& k :
       {Case{96, 9, 13, 32}, Case{96, 9, 13, 40}, Case{96, 17, 13, 64}, Case{608, 20, 397, 256}}) {
    const Q8Matrix m = random_q8(k.in, k.out, 1, static_cast<std::uint32_t>(k.in + k.out));
    Rng rng(static_cast<std::uint32_t>(k.rows));
    const std::vector<float> x = random_floats(static_cast<std::size_t>(k.rows * k.in), rng);
    RowPanels panels;
    pack_rows(x.data(), k.rows, k.in, panels);
    const PackedMatrix w{nullptr, nullptr, k.in, k.out, m.packed.data()};
    for (const KernelSet& kernels : kernel_sets()) {
      const StepContext ctx{kernels, model_ops_for(kernels), 1};
      std::vector<float> whole(static_cast<std::size_t>(k.rows * k.out)), sliced(whole.size());
      linear_in_depth_slices(ctx, panels, w, nullptr, whole.data(), k.out, k.in);
      linear_in_depth_slices(ctx, panels, w, nullptr, sliced.data(), k.out, k.slice);
      INFO(kernels.name << " in " << k.in << " out " << k.out << " rows " << k.rows << " slice "
                        << k.slice);
      CHECK(std::memcmp(whole.data(), sliced.data(), whole.size() * sizeof(float)) == 0);
      const std::vector<double> expected = linear_reference(x, m.w, nullptr, k.rows, k.in, k.out);
      ATTNLENS_CHECK_CLOSE(sliced, expected, (Tolerance{2e-6 * static_cast<double>(k.in), 0.0}),
                           matrix_layout(k.rows, k.out), "linear");
    }
  }
}

TEST_CASE("Q8_0 refuses a depth that is not a multiple of 32, and non-finite scales",
          "[models][q8][errors]") {
  for (std::int64_t in : {0, 16, 33, 100}) {
    CHECK_THROWS_AS(require_q8_depth(in, "w"), InvalidArgumentError);
  }
  require_q8_depth(64, "w");
  std::vector<std::uint8_t> written(static_cast<std::size_t>(q8_written_bytes(64, 3)), 0);
  require_finite_q8(written.data(), 64, 3, "w");
  written[static_cast<std::size_t>(3 * kQ8BlockBytes + 1)] = 0x7e;  // block 3's scale: NaN
  try {
    require_finite_q8(written.data(), 64, 3, "w");
    FAIL("a NaN scale was accepted");
  } catch (const NonFiniteError& e) {
    CHECK(std::string(e.what()).find("block 3 (row 1) is NaN") != std::string::npos);
  }
}

TEST_CASE("q8 storage: linear layers as Q8_0, the rest f16, the forward of the same weights",
          "[models][q8]") {
  check_quantized_storage(WeightDtype::kQ8_0, WeightDtype::kF16, quantize_rows);
}
