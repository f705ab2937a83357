// models::linear() on the panel_gemv path (a decoding step's few rows) against its tile path and
// against double precision, and its tile path accumulated over depth slices against the whole
// depth in one call (the same bits) and against double precision: f32 and f16 weights, widths
// and depths that are not multiples of the panel sizes, a bias, padded output rows, one and two
// threads.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "models/linear.h"
#include "models/packing.h"
#include "test_util.h"

using namespace attnlens;
using namespace attnlens_test;

namespace {

constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // 2^-24
constexpr std::int64_t kManyRows = 7;               // past a row panel: the tile path

// Half bits of moderate magnitude (2^-3 .. 2^1, either sign), so every product is exact enough.
std::vector<std::uint16_t> random_halves(std::size_t n, Rng& rng) {
  const std::vector<float> u = random_floats(n * 3, rng, 0.0f, 1.0f);
  std::vector<std::uint16_t> h(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto sign = static_cast<std::uint16_t>(u[3 * i] < 0.5f ? 0x8000 : 0);
    const auto exponent = static_cast<std::uint16_t>(12 + static_cast<int>(u[3 * i + 1] * 4.0f));
    const auto mantissa = static_cast<std::uint16_t>(u[3 * i + 2] * 1023.0f);
    h[i] = static_cast<std::uint16_t>(sign | exponent << 10 | mantissa);
  }
  return h;
}

// W [in, out] as a checkpoint writes it, f32 or (`f16`) half bits with their float values in w,
// packed as finalize() does.
struct RandomWeights {
  std::vector<float> w, packed;
  std::vector<std::uint16_t> w_half, packed_half;
  std::int64_t in, out;
  bool f16;

  RandomWeights(std::int64_t in_, std::int64_t out_, bool f16_, const models::ModelOps& ops,
                Rng& rng)
      : w(static_cast<std::size_t>(in_ * out_)), in(in_), out(out_), f16(f16_) {
    if (f16) {
      w_half = random_halves(w.size(), rng);
      ops.half_to_float(w.size(), w_half.data(), w.data());
    } else {
      w = random_floats(w.size(), rng);
    }
    const auto packed_size = static_cast<std::size_t>(models::packed_elements(in, out, 1));
    packed.resize(packed_size);
    packed_half.resize(f16 ? packed_size : 0);
    models::pack_matrix(w.data(), false, in, out, 1, packed.data());
    if (f16) models::pack_matrix(w_half.data(), false, in, out, 1, packed_half.data());
  }

  // The matrix as linear() takes it: the f16 storage when f16, else the f32.
  models::PackedMatrix matrix() const {
    return {f16 ? nullptr : packed.data(), f16 ? packed_half.data() : nullptr, in, out};
  }
};

// Output (r, c) of x [rows, in] W [in, out] + bias within twice the rounding of its in + 2
// operations (products and sums) from the double-precision value; a failed check otherwise.
bool close_to_double(float actual, const std::vector<float>& x, const std::vector<float>& w,
                     const std::vector<float>& bias, std::int64_t r, std::int64_t c,
                     std::int64_t in, std::int64_t out) {
  double expected = bias[c], magnitude = std::fabs(expected);
  for (std::int64_t p = 0; p < in; ++p) {
    const double product = static_cast<double>(x[r * in + p]) * w[p * out + c];
    expected += product;
    magnitude += std::fabs(product);
  }
  const double allowed = 2.0 * static_cast<double>(in + 2) * kUnitRoundoff * magnitude;
  if (!(std::fabs(actual - expected) <= allowed)) {
    FAIL_CHECK("row " << r << " column " << c << ": " << actual << ", expected " << expected);
    return false;
  }
  return true;
}

void check_linear(const KernelSet& set, std::int64_t in, std::int64_t out, bool f16, int threads,
                  std::uint32_t seed) {
  Rng rng(seed);
  const models::ModelOps& ops = models::model_ops_for(set);
  const models::StepContext ctx{set, ops, threads};
  const RandomWeights weights(in, out, f16, ops, rng);
  const std::vector<float>& w = weights.w;
  const models::PackedMatrix matrix = weights.matrix();
  const models::PackedMatrix as_f32{weights.packed.data(), nullptr, in, out};

  const std::vector<float> x = random_floats(static_cast<std::size_t>(kManyRows * in), rng);
  const std::vector<float> bias = random_floats(static_cast<std::size_t>(out), rng);
  const std::int64_t ldo = out + 3;  // padding that must stay untouched
  models::RowPanels panels;
  models::pack_rows(x.data(), kManyRows, in, panels);
  std::vector<float> tiled(static_cast<std::size_t>(kManyRows * ldo), -7.0f);
  models::linear(ctx, panels, as_f32, bias.data(), tiled.data(), ldo);

  for (std::int64_t rows = 1; rows <= 3; ++rows) {
    INFO(set.name << (f16 ? " f16" : " f32") << " in=" << in << " out=" << out << " rows=" << rows
                  << " threads=" << threads);
    models::pack_rows(x.data(), rows, in, panels);
    std::vector<float> y(static_cast<std::size_t>(rows * ldo), -7.0f);
    models::linear(ctx, panels, matrix, bias.data(), y.data(), ldo);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < ldo; ++c) {
        const float actual = y[r * ldo + c];
        if (c >= out) {
          if (actual != -7.0f) FAIL_CHECK("wrote padding at row " << r << " column " << c);
          continue;
        }
        // The tile path's bits (f32 weights equal to the f16 ones converted).
        const float tile = tiled[r * ldo + c];
        if (std::memcmp(&actual, &tile, sizeof(float)) != 0) {
          FAIL_CHECK("row " << r << " column " << c << ": " << actual << ", tile path " << tile);
          return;
        }
        if (!close_to_double(actual, x, w, bias, r, c, in, out)) return;
      }
    }
  }
}

// linear_in_depth_slices() at several slice depths (and linear() at its own) against the whole
// depth in one panel_gemm call, bit for bit, and that against double precision; `rows` past two
// (the tile path).
void check_depth_slices(const KernelSet& set, std::int64_t in, std::int64_t out, std::int64_t rows,
                        bool f16, int threads, std::uint32_t seed) {
  Rng rng(seed);
  const models::ModelOps& ops = models::model_ops_for(set);
  const models::StepContext ctx{set, ops, threads};
  const RandomWeights weights(in, out, f16, ops, rng);
  const std::vector<float>& w = weights.w;
  const models::PackedMatrix matrix = weights.matrix();
  const std::vector<float> x = random_floats(static_cast<std::size_t>(rows * in), rng);
  const std::vector<float> bias = random_floats(static_cast<std::size_t>(out), rng);
  const std::int64_t ldo = out + 3;  // padding that must stay untouched
  models::RowPanels panels;
  models::pack_rows(x.data(), rows, in, panels);

  std::vector<float> whole(static_cast<std::size_t>(rows * ldo), -7.0f);
  models::linear_in_depth_slices(ctx, panels, matrix, bias.data(), whole.data(), ldo, in);
  INFO(set.name << (f16 ? " f16" : " f32") << " in=" << in << " out=" << out << " rows=" << rows
                << " threads=" << threads);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < ldo; ++c) {
      const float actual = whole[r * ldo + c];
      if (c >= out) {
        if (actual != -7.0f) FAIL_CHECK("wrote padding at row " << r << " column " << c);
        continue;
      }
      if (!close_to_double(actual, x, w, bias, r, c, in, out)) return;
    }
  }
  // Slices of one depth, a few, not dividing the depth; 0 stands for linear() itself.
  for (const std::int64_t slice : std::vector<std::int64_t>{1, 5, 32, in - 1, 0}) {
    std::vector<float> y(whole.size(), -7.0f);
    if (slice == 0) {
      models::linear(ctx, panels, matrix, bias.data(), y.data(), ldo);
    } else {
      models::linear_in_depth_slices(ctx, panels, matrix, bias.data(), y.data(), ldo, slice);
    }
    for (std::size_t i = 0; i < y.size(); ++i) {
      if (std::memcmp(&y[i], &whole[i], sizeof(float)) != 0) {
        FAIL_CHECK("slices of " << slice << " (0: linear()): row " << i / ldo << " column "
                                << i % ldo << ": " << y[i] << ", whole depth " << whole[i]);
        return;
      }
    }
  }
}

}  // namespace

TEST_CASE("linear: few rows run on panel_gemv with the tile path's bits", "[models][linear]") {
  const KernelSet& set = GENERATE(each_kernel(kernel_sets()));
  std::uint32_t seed = 40;
  for (std::int64_t in : {1, 7, 33, 769}) {
    for (std::int64_t out : {1, 7, 9, 33, 150}) {
      check_linear(set, in, out, false, 1, seed++);
      check_linear(set, in, out, true, 1, seed++);
    }
  }
  // Several column tasks (16 panels each) shared by two threads.
  check_linear(set, 64, 300, false, 2, seed++);
  check_linear(set, 64, 300, true, 2, seed++);
}

TEST_CASE("linear: depth slices accumulate to the whole depth's bits", "[models][linear]") {
  const KernelSet& set = GENERATE(each_kernel(kernel_sets()));
  std::uint32_t seed = 90;
  for (const bool f16 : {false, true}) {
    check_depth_slices(set, 0, 9, 3, f16, 1, seed++);  // no depth: the bias alone
    check_depth_slices(set, 7, 9, 3, f16, 1, seed++);
    check_depth_slices(set, 33, 17, 13, f16, 1, seed++);
    // Three slices at linear()'s depth (256, 256, 88) and two row blocks of its 384 rows, the
    // second of two tiles, one partial.
    check_depth_slices(set, 600, 20, 391, f16, 1, seed++);
    // Many column panels shared by two threads.
    check_depth_slices(set, 300, 300, 9, f16, 2, seed++);
  }
}
