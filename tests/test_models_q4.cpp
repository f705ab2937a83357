// 4-bit weights (src/models/q4.h): the dequantising panel kernels of every ModelOps set against a
// double-precision reference over awkward depths and tiles, in both of the forms GGUF files use
// (Q4_0: s = d, m = 8 d; Q4_K: s = d * sc, m = dmin * mn with 6-bit sc and mn), the dequantised
// panel bit for bit against ggml's dequantisation order, linear() on widths that are not whole
// panels and row counts that are not whole tiles (both of its paths, several column groups), the
// refusals, whole models stored as Q4 against the reference forward of the same weights, and the
// one-row (decoding) kernels of Q8_0 and 4-bit panels: the row rounded to 16 bits (Int16Row), its
// integer sums against double precision, the same bits in every set.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "models/linear.h"
#include "models/ops.h"
#include "models/packing.h"
#include "models/q4.h"
#include "models/q8_0.h"
#include "models_test_util.h"
#include "quantized_test_util.h"

using namespace attnlens;
using namespace attnlens::models;
using namespace attnlens_test;

namespace {

float half_value(std::uint16_t bits) {
  float v;
  f16_to_f32__scalar(1, &bits, &v);
  return v;
}

// The f16 nearest to `d` (d >= 0, well inside half's normal range or 0), as bits.
std::uint16_t round_to_half(float d) {
  if (d == 0.0f) return 0;
  const int e = std::ilogb(d);
  return exact_half(static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(d, 10 - e)), e - 10)));
}

void write_block(std::uint8_t* block, float s, float m, const int* q) {
  std::memcpy(block, &s, 4);
  std::memcpy(block + 4, &m, 4);
  for (int j = 0; j < 16; ++j) block[8 + j] = static_cast<std::uint8_t>(q[j] | (q[j + 16] << 4));
}

// ggml's quantize_row_q4_0_ref: d = (the value of largest magnitude) / -8 stored as f16,
// q = min(15, (int)(x / d + 8.5)). Writes `rows` rows of `in` values as written Q4 rows
// (s = d, m = 8 d) and returns the dequantised values ((q - 8) * d).
std::vector<double> quantize_rows_q4_0(const std::vector<double>& x, std::int64_t rows,
                                       std::int64_t in, std::uint8_t* out) {
  std::vector<double> dequantised(x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t b = 0; b < in / kQ4Block; ++b) {
      const double* v = x.data() + r * in + b * kQ4Block;
      float amax = 0, max = 0;
      for (std::int64_t i = 0; i < kQ4Block; ++i) {
        const float f = static_cast<float>(v[i]);
        if (std::fabs(f) > amax) {
          amax = std::fabs(f);
          max = f;
        }
      }
      const float d = max / -8;
      const float id = d != 0 ? 1.0f / d : 0.0f;
      const std::uint16_t bits =
          static_cast<std::uint16_t>(round_to_half(std::fabs(d)) | (d < 0 ? 0x8000 : 0));
      const float scale = half_value(bits);
      int q[32];
      for (std::int64_t i = 0; i < kQ4Block; ++i) {
        q[i] = std::min(15, static_cast<int>(static_cast<float>(v[i]) * id + 8.5f));
        dequantised[static_cast<std::size_t>(r * in + b * kQ4Block + i)] =
            static_cast<double>(q[i] - 8) * scale;
      }
      write_block(out + (r * (in / kQ4Block) + b) * kQ4BlockBytes, scale, 8 * scale, q);
    }
  }
  return dequantised;
}

// A 4-bit matrix W [in, out] (written as out rows of in), packed, with its float weights as
// ggml's dequantisation computes them (in float: s * q rounded, then minus m, rounded).
struct Q4Matrix {
  std::vector<std::uint8_t> packed;
  std::vector<float> w;  // [out][in]
  std::int64_t in, out;
  std::vector<float> min;  // [out][in / 32]: each sub-block's m
};

// Q4_K-like sub-blocks (`k_quant`: s = d * sc, m = dmin * mn from random f16 d, dmin and 6-bit
// sc, mn) or Q4_0 ones (s = d, m = 8 d), random nibbles.
Q4Matrix random_q4(std::int64_t in, std::int64_t out, std::int64_t groups, bool k_quant,
                   std::uint32_t seed) {
  Rng rng(seed);
  Q4Matrix m{{}, {}, in, out, {}};
  std::vector<std::uint8_t> written(static_cast<std::size_t>(q4_written_bytes(in, out)));
  m.w.resize(static_cast<std::size_t>(in * out));
  for (std::int64_t o = 0; o < out; ++o) {
    for (std::int64_t b = 0; b < in / kQ4Block; ++b) {
      const float d = half_value(round_to_half(rng.uniform(0.0005f, 0.004f)));
      float s = d, mn = 8 * d;
      if (k_quant) {
        const float dmin = half_value(round_to_half(rng.uniform(0.0005f, 0.004f)));
        s = d * static_cast<float>(static_cast<int>(rng.uniform(0.0f, 63.99f)));
        mn = dmin * static_cast<float>(static_cast<int>(rng.uniform(0.0f, 63.99f)));
      }
      int q[32];
      for (int i = 0; i < 32; ++i) {
        q[i] = static_cast<int>(rng.uniform(0.0f, 15.99f));
        const volatile float product = s * static_cast<float>(q[i]);  // ggml: d1 * q, then - m1
        m.w[static_cast<std::size_t>(o * in + b * kQ4Block + i)] = product - mn;
      }
      write_block(written.data() + (o * (in / kQ4Block) + b) * kQ4BlockBytes, s, mn, q);
      m.min.push_back(mn);
    }
  }
  m.packed.resize(static_cast<std::size_t>(q4_packed_bytes(in, out, groups)));
  pack_q4_matrix(written.data(), in, out, groups, m.packed.data());
  return m;
}

}  // namespace

TEST_CASE("4-bit panel kernels: every set against double precision, Q4_0 and Q4_K forms",
          "[models][ops][q4]") {
  for (const ModelOps& ops : model_op_sets()) {
    for (bool k_quant : {false, true}) {
      for (std::int64_t k : {32, 64, 96, 160, 256, 768}) {
        for (std::size_t tiles : {1u, 2u, 3u, 5u}) {
          const Q4Matrix m = random_q4(k, 8, 1, k_quant, static_cast<std::uint32_t>(k + tiles));
          Rng rng(static_cast<std::uint32_t>(7 * k + tiles));
          const std::vector<float> a =
              random_floats(tiles * static_cast<std::size_t>(k) * 4, rng, -2.0f, 2.0f);
          std::vector<float> c(tiles * 32, -1.0f);
          ops.q4_panel_gemm(tiles, static_cast<std::size_t>(k), a.data(),
                            static_cast<std::size_t>(k) * 4, m.packed.data(), c.data());
          INFO(ops.name << (k_quant ? " Q4_K" : " Q4_0") << " k " << k << " tiles " << tiles);
          // Each product with a weight rounded once: one rounding more than the sums'.
          check_panel_gemm_against_double(tiles, k, a, m.w, c, 1);
          // Dequantising the panel gives ggml's float weights bit for bit, and the f32 panel
          // GEMM of the kernel set of the same name computes the same bits over them.
          std::vector<float> panel(static_cast<std::size_t>(k) * 8);
          ops.q4_panel_to_f32(static_cast<std::size_t>(k), m.packed.data(), panel.data());
          for (std::int64_t p = 0; p < k; ++p) {
            for (std::int64_t j = 0; j < 8; ++j) {
              const float want = m.w[static_cast<std::size_t>(j * k + p)];
              const float got = panel[static_cast<std::size_t>(p * 8 + j)];
              REQUIRE(std::memcmp(&got, &want, sizeof got) == 0);
            }
          }
          check_f32_panel_gemm_same_bits(ops, tiles, k, a, panel, c);
        }
      }
    }
  }
}

TEST_CASE("linear() on 4-bit matrices: partial panels, partial tiles, column groups, both paths",
          "[models][q4]") {
  for (const KernelSet& kernels : kernel_sets()) {
    const ModelOps& ops = model_ops_for(kernels);
    const StepContext ctx{kernels, ops, 1};
    for (std::int64_t in : {32, 96, 256}) {
      for (std::int64_t out : {1, 7, 9, 33, 3 * 11, 3 * 24}) {
        for (std::int64_t groups : {1, 3}) {
          if (out % groups != 0) continue;
          const Q4Matrix m =
              random_q4(in, out, groups, in == 256, static_cast<std::uint32_t>(in * out));
          // Rows 1..9 cover the dequantising kernel (up to 2 tiles) and the dequantise-then-f32
          // path (3 tiles and more), with partial last tiles.
          for (std::int64_t rows : {1, 2, 3, 5, 8, 9, 13}) {
            check_quantized_linear(
                ctx, rows, in, out, groups, m.w, [&](std::int64_t g, std::int64_t group_out) {
                  const std::uint8_t* group =
                      m.packed.data() + g * panels_of(group_out) * q4_panel_bytes(in);
                  return PackedMatrix{nullptr, nullptr, in, group_out, nullptr, group};
                });
          }
        }
      }
    }
  }
}

TEST_CASE("linear() on 4-bit matrices: depth slices of whole blocks give the whole depth's bits",
          "[models][q4]") {
  struct Case {
    std::int64_t in, out, rows, slice;
  };
  for (const Case& k :
       {Case{96, 9, 13, 32}, Case{96, 9, 13, 40}, Case{96, 17, 13, 64}, Case{608, 20, 397, 256}}) {
    const Q4Matrix m = random_q4(k.in, k.out, 1, true, static_cast<std::uint32_t>(k.in + k.out));
    Rng rng(static_cast<std::uint32_t>(k.rows));
    const std::vector<float> x = random_floats(static_cast<std::size_t>(k.rows * k.in), rng);
    RowPanels panels;
    pack_rows(x.data(), k.rows, k.in, panels);
    const PackedMatrix w{nullptr, nullptr, k.in, k.out, nullptr, m.packed.data()};
    for (const KernelSet& kernels : kernel_sets()) {
      const StepContext ctx{kernels, model_ops_for(kernels), 1};
      std::vector<float> whole(static_cast<std::size_t>(k.rows * k.out)), sliced(whole.size());
      linear_in_depth_slices(ctx, panels, w, nullptr, whole.data(), k.out, k.in);
      linear_in_depth_slices(ctx, panels, w, nullptr, sliced.data(), k.out, k.slice);
      INFO(kernels.name << " in " << k.in << " out " << k.out << " rows " << k.rows << " slice "
                        << k.slice);
      CHECK(std::memcmp(whole.data(), sliced.data(), whole.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("4-bit weights refuse a depth that is not a multiple of 32, and non-finite scales",
          "[models][q4][errors]") {
  for (std::int64_t in : {0, 16, 33, 100}) {
    CHECK_THROWS_AS(require_q4_depth(in, "w"), InvalidArgumentError);
  }
  require_q4_depth(64, "w");
  std::vector<std::uint8_t> written(static_cast<std::size_t>(q4_written_bytes(64, 3)), 0);
  require_finite_q4(written.data(), 64, 3, "w");
  const float nan = std::nanf(""), inf = INFINITY;
  std::memcpy(written.data() + 3 * kQ4BlockBytes, &nan, 4);  // block 3's scale
  try {
    require_finite_q4(written.data(), 64, 3, "w");
    FAIL("a NaN scale was accepted");
  } catch (const NonFiniteError& e) {
    CHECK(std::string(e.what()).find("scale of 4-bit block 3 (row 1) is NaN") != std::string::npos);
  }
  std::memset(written.data(), 0, written.size());
  const float minus_inf = -inf;
  std::memcpy(written.data() + 5 * kQ4BlockBytes + 4, &minus_inf, 4);  // block 5's min
  try {
    require_finite_q4(written.data(), 64, 3, "w");
    FAIL("an infinite min was accepted");
  } catch (const NonFiniteError& e) {
    CHECK(std::string(e.what()).find("min of 4-bit block 5 (row 2) is -Infinity") !=
          std::string::npos);
  }
}

TEST_CASE("q4 storage: linear layers as 4-bit, the rest f16, the forward of the same weights",
          "[models][q4]") {
  check_quantized_storage(WeightDtype::kQ4, WeightDtype::kQ8_0, quantize_rows_q4_0);
}

namespace {

// A one-row kernel's outputs y [out] against double precision. Two references: the 16-bit
// row's own values (values * scale, what the kernel multiplies), to f32's rounding of the
// per-block sums; and the float row x, further off by at most the row's rounding (scale / 2 per
// value) times the weights. `w` [out][k] are the float weights, `min` [out][k / 32] the 4-bit
// sub-blocks' m (empty for Q8_0), which the kernel multiplies by the block sums separately.
void check_one_row(const std::vector<float>& y, const Int16Row& row, const std::vector<float>& x,
                   const std::vector<float>& w, const std::vector<float>& min, std::int64_t k,
                   std::int64_t out) {
  const std::int64_t blocks = k / 32;
  for (std::int64_t c = 0; c < out; ++c) {
    double rounded = 0, exact = 0, magnitude = 0, rounding = 0;
    for (std::int64_t p = 0; p < k; ++p) {
      const double scale = row.scales[static_cast<std::size_t>(p / 32)];
      const double x_hat = row.values[static_cast<std::size_t>(p)] * scale;
      const double weight = w[static_cast<std::size_t>(c * k + p)];
      const double m = min.empty() ? 0.0 : min[static_cast<std::size_t>(c * blocks + p / 32)];
      rounded += x_hat * weight;
      exact += static_cast<double>(x[static_cast<std::size_t>(p)]) * weight;
      // s q = w + m: the two products the 4-bit kernel subtracts are each at most this.
      magnitude += std::fabs(x_hat) * (std::fabs(weight) + 2 * std::fabs(m));
      rounding += scale / 2 * std::fabs(weight);
    }
    // Per block: the sum's conversion, two products, a subtraction and the addition.
    const double bound = static_cast<double>(blocks + 5) * magnitude / 16777216.0 + 1e-30;
    const double got = y[static_cast<std::size_t>(c)];
    if (std::fabs(got - rounded) > bound || std::fabs(got - exact) > bound + rounding) {
      FAIL_CHECK("column " << c << ": " << got << " vs " << rounded << " (16-bit row, bound "
                           << bound << "), " << exact << " (f32 row, bound " << bound + rounding
                           << ")");
    }
  }
}

}  // namespace

TEST_CASE("Int16Row: 16-bit values per block within half a step of x, sums, zero and NaN blocks",
          "[models][ops][q8][q4]") {
  Rng rng(5);
  std::vector<float> x = random_floats(160, rng, -3.0f, 3.0f);
  std::fill(x.begin() + 32, x.begin() + 64, 0.0f);  // block 1: all zero
  x[96 + 3] = 1e30f;                                // block 3: one huge value
  Int16Row row;
  row.quantize(160, x.data(), 1);
  for (std::size_t b = 0; b < 5; ++b) {
    float amax = 0;
    std::int32_t sum = 0;
    for (std::size_t i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
    INFO("block " << b);
    CHECK(row.scales[b] == amax / 32767.0f);
    for (std::size_t i = 0; i < 32; ++i) {
      const std::int16_t v = row.values[b * 32 + i];
      REQUIRE(std::abs(v) <= 32767);
      sum += v;
      const double error = std::fabs(v * static_cast<double>(row.scales[b]) - x[b * 32 + i]);
      // Half a step, plus x * (32767 / max)'s and the scale's roundings: 32767 x 3 x 2^-24 steps.
      REQUIRE(error <= row.scales[b] * 0.51);
      if (std::fabs(x[b * 32 + i]) == amax && amax > 0) CHECK(std::abs(v) == 32767);
    }
    CHECK(row.sums[b] == row.scales[b] * static_cast<float>(sum));
  }
  // Strided, as linear() reads a row of its 4-row panels; the buffers are reused.
  std::vector<float> strided(64 * 4, 9.0f);
  for (std::size_t p = 0; p < 64; ++p) strided[p * 4 + 1] = x[p];
  Int16Row again = row;
  again.quantize(64, strided.data() + 1, 4);
  CHECK(std::equal(again.values.begin(), again.values.begin() + 64, row.values.begin()));
  // A non-finite block keeps values 0 and a scale that is not finite.
  x[40] = std::nanf("");
  x[130] = -INFINITY;
  row.quantize(160, x.data(), 1);
  CHECK(std::isnan(row.scales[1]));
  CHECK(std::isinf(row.scales[4]));
  for (std::size_t i = 32; i < 64; ++i) CHECK(row.values[i] == 0);
}

TEST_CASE("one-row Q8_0 and 4-bit kernels: integer sums of the 16-bit row, every set's bits",
          "[models][ops][q4][q8]") {
  for (std::int64_t k : {32, 96, 256}) {
    for (std::int64_t panels : {1, 2, 3, 5}) {
      const std::int64_t out = panels * 8;
      const Q4Matrix m4 = random_q4(k, out, 1, true, static_cast<std::uint32_t>(k * panels));
      Rng rng(static_cast<std::uint32_t>(k + 3 * panels));
      std::vector<std::uint8_t> written(static_cast<std::size_t>(q8_written_bytes(k, out)));
      std::vector<float> w8(static_cast<std::size_t>(k * out));
      for (std::int64_t b = 0; b < out * (k / kQ8Block); ++b) {
        std::uint8_t* block = written.data() + b * kQ8BlockBytes;
        const std::uint16_t half = round_to_half(rng.uniform(0.001f, 0.01f));
        block[0] = static_cast<std::uint8_t>(half & 0xff);
        block[1] = static_cast<std::uint8_t>(half >> 8);
        for (std::int64_t i = 0; i < kQ8Block; ++i) {
          // Column 0's first block all -128 (a file may hold it; ggml writes -127..127): with x's
          // first block all at its largest, 32 products of -128 x 32767 test the sums' range.
          const int q = b == 0 ? -128 : static_cast<int>(rng.uniform(-127.0f, 127.99f));
          block[2 + i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(q));
          w8[static_cast<std::size_t>(b * kQ8Block + i)] = static_cast<float>(q) * half_value(half);
        }
      }
      std::vector<std::uint8_t> q8(static_cast<std::size_t>(q8_packed_bytes(k, out, 1)));
      pack_q8_matrix(written.data(), k, out, 1, q8.data());
      std::vector<float> x = random_floats(static_cast<std::size_t>(k), rng, -2.0f, 2.0f);
      std::fill(x.begin(), x.begin() + 32, 1.75f);
      if (k > 64) std::fill(x.begin() + 64, x.begin() + 96, 0.0f);  // a zero block
      Int16Row row;
      row.quantize(static_cast<std::size_t>(k), x.data(), 1);
      struct Kind {
        const char* name;
        const std::uint8_t* packed;
        QuantPanelGemvFn ModelOps::*gemv;
        const std::vector<float>& w;
        const std::vector<float>& min;
      };
      const std::vector<float> no_min;
      for (const Kind& kind :
           {Kind{"q8", q8.data(), &ModelOps::q8_panel_gemv, w8, no_min},
            Kind{"q4", m4.packed.data(), &ModelOps::q4_panel_gemv, m4.w, m4.min}}) {
        std::vector<float> first;
        for (const ModelOps& ops : model_op_sets()) {
          INFO(ops.name << " " << kind.name << " k " << k << " panels " << panels);
          std::vector<float> y(static_cast<std::size_t>(out) + 8, -3.0f);
          (ops.*kind.gemv)(static_cast<std::size_t>(panels), static_cast<std::size_t>(k), row,
                           kind.packed, y.data());
          for (std::size_t g = static_cast<std::size_t>(out); g < y.size(); ++g)
            REQUIRE(y[g] == -3.0f);  // nothing written past the last panel
          y.resize(static_cast<std::size_t>(out));
          check_one_row(y, row, x, kind.w, kind.min, k, out);
          if (first.empty()) first = y;
          CHECK(std::memcmp(y.data(), first.data(), y.size() * sizeof(float)) == 0);
        }
      }
      // A row with a NaN makes every output NaN, as the f32 product would.
      x[static_cast<std::size_t>(k - 1)] = std::nanf("");
      row.quantize(static_cast<std::size_t>(k), x.data(), 1);
      for (const ModelOps& ops : model_op_sets()) {
        std::vector<float> y(static_cast<std::size_t>(out));
        ops.q8_panel_gemv(static_cast<std::size_t>(panels), static_cast<std::size_t>(k), row,
                          q8.data(), y.data());
        for (const float v : y) REQUIRE(std::isnan(v));
        ops.q4_panel_gemv(static_cast<std::size_t>(panels), static_cast<std::size_t>(k), row,
                          m4.packed.data(), y.data());
        for (const float v : y) REQUIRE(std::isnan(v));
      }
    }
  }
}
