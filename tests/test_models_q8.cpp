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
        std::vector<float> a(tiles * static_cast<std::size_t>(k) * 4);
        for (float& x : a) x = rng.uniform(-2.0f, 2.0f);
        std::vector<float> c(tiles * 32, -1.0f);
        ops.q8_panel_gemm(tiles, static_cast<std::size_t>(k), a.data(),
                          static_cast<std::size_t>(k) * 4, m.packed.data(), c.data());
        INFO(ops.name << " k " << k << " tiles " << tiles);
        for (std::size_t t = 0; t < tiles; ++t) {
          for (std::size_t r = 0; r < 4; ++r) {
            for (std::size_t j = 0; j < 8; ++j) {
              double sum = 0, magnitude = 0;
              for (std::int64_t p = 0; p < k; ++p) {
                const double term = a[(t * static_cast<std::size_t>(k) + p) * 4 + r] *
                                    m.w[j * static_cast<std::size_t>(k) + p];
                sum += term;
                magnitude += std::fabs(term);
              }
              // k additions in f32, each rounding by at most one unit roundoff of the partial sum
              // (bounded by the sum of magnitudes); the weights themselves are exact.
              const double bound = static_cast<double>(k + 1) * magnitude / 16777216.0 + 1e-30;
              const double got = c[t * 32 + r * 8 + j];
              if (std::fabs(got - sum) > bound) {
                FAIL_CHECK("tile " << t << " row " << r << " col " << j << ": " << got << " vs "
                                   << sum << " (bound " << bound << ")");
              }
            }
          }
        }
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
        const KernelSet* same = find_kernel_set(ops.name);
        REQUIRE(same != nullptr);
        std::vector<float> f32(tiles * 32);
        same->panel_gemm(tiles, static_cast<std::size_t>(k), a.data(),
                         static_cast<std::size_t>(k) * 4, panel.data(), f32.data(), nullptr);
        CHECK(f32 == c);
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
            Rng rng(static_cast<std::uint32_t>(rows * 31 + out));
            std::vector<float> x(static_cast<std::size_t>(rows * in));
            for (float& v : x) v = rng.uniform(-1.0f, 1.0f);
            std::vector<float> bias(static_cast<std::size_t>(out));
            for (float& v : bias) v = rng.uniform(-0.5f, 0.5f);
            RowPanels panels;
            pack_rows(x.data(), rows, in, panels);
            std::vector<float> y(static_cast<std::size_t>(rows * out), -7.0f);
            const std::int64_t group_out = out / groups;
            const std::int64_t group_bytes = panels_of(group_out) * q8_panel_bytes(in);
            for (std::int64_t g = 0; g < groups; ++g) {
              PackedMatrix w{nullptr, nullptr, in, group_out, m.packed.data() + g * group_bytes};
              linear(ctx, panels, w, bias.data() + g * group_out, y.data() + g * group_out, out);
            }
            INFO(kernels.name << " in " << in << " out " << out << " groups " << groups << " rows "
                              << rows);
            std::vector<double> expected(y.size());
            for (std::int64_t r = 0; r < rows; ++r) {
              for (std::int64_t c = 0; c < out; ++c) {
                double sum = bias[static_cast<std::size_t>(c)];
                for (std::int64_t p = 0; p < in; ++p) {
                  sum += static_cast<double>(x[static_cast<std::size_t>(r * in + p)]) *
                         m.w[static_cast<std::size_t>(c * in + p)];
                }
                expected[static_cast<std::size_t>(r * out + c)] = sum;
              }
            }
            // |x| <= 1, |w| <= 0.5: each output's terms sum to at most in / 2.
            ATTNLENS_CHECK_CLOSE(y, expected, (Tolerance{2e-6 * static_cast<double>(in), 0.0}),
                                 matrix_layout(rows, out), "linear");
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
    std::vector<float> x(static_cast<std::size_t>(k.rows * k.in));
    for (float& v : x) v = rng.uniform(-1.0f, 1.0f);
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
      std::vector<double> expected(whole.size());
      for (std::int64_t r = 0; r < k.rows; ++r) {
        for (std::int64_t c = 0; c < k.out; ++c) {
          double sum = 0;
          for (std::int64_t p = 0; p < k.in; ++p) {
            sum += static_cast<double>(x[static_cast<std::size_t>(r * k.in + p)]) *
                   m.w[static_cast<std::size_t>(c * k.in + p)];
          }
          expected[static_cast<std::size_t>(r * k.out + c)] = sum;
        }
      }
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
  for (Architecture arch : {Architecture::kGpt2, Architecture::kLlama, Architecture::kBert}) {
    TransformerConfig c = tiny(arch);
    c.hidden = 64;
    c.heads = 4;
    c.intermediate = arch == Architecture::kLlama ? 72 : 96;  // llama: down_proj stays f16
    c.matrix_dtype = WeightDtype::kQ8_0;
    Transformer model(c);
    TransformerConfig c16 = c;
    c16.matrix_dtype = WeightDtype::kF16;
    CHECK(model.size().weight_bytes < model_size(c16).weight_bytes);
    Checkpoint ckpt = make_checkpoint(model, 5);
    for (std::size_t i = 0; i < model.weights().size(); ++i) {
      const WeightInfo& w = model.weights()[i];
      std::vector<double>& v = ckpt.values.at(w.name);
      void* data = model.weight_data(static_cast<std::int64_t>(i));
      const bool linear_layer = w.name.find("embedding") == std::string::npos &&
                                w.name != "lm_head" && w.shape.size() == 2;
      const std::int64_t in = w.transposed ? w.shape[1] : w.shape[0];
      INFO(w.name);
      if (w.shape.size() == 2) {
        CHECK(w.dtype == (linear_layer && in % 32 == 0 ? WeightDtype::kQ8_0 : WeightDtype::kF16));
      }
      if (w.dtype == WeightDtype::kQ8_0) {
        // Written as [out][in] whatever the checkpoint layout; the checkpoint then holds the
        // dequantised values in its own layout for the reference.
        const std::int64_t out = w.transposed ? w.shape[0] : w.shape[1];
        std::vector<double> rows(v.size());
        for (std::int64_t o = 0; o < out; ++o) {
          for (std::int64_t p = 0; p < in; ++p) {
            rows[static_cast<std::size_t>(o * in + p)] =
                v[static_cast<std::size_t>(w.transposed ? o * in + p : p * out + o)];
          }
        }
        const std::vector<double> q =
            quantize_rows(rows, out, in, static_cast<std::uint8_t*>(data));
        for (std::int64_t o = 0; o < out; ++o) {
          for (std::int64_t p = 0; p < in; ++p) {
            v[static_cast<std::size_t>(w.transposed ? o * in + p : p * out + o)] =
                q[static_cast<std::size_t>(o * in + p)];
          }
        }
      } else {
        for (std::size_t j = 0; j < v.size(); ++j) {
          if (w.dtype == WeightDtype::kF16) {
            static_cast<std::uint16_t*>(data)[j] = exact_half(static_cast<float>(v[j]));
          } else {
            static_cast<float*>(data)[j] = static_cast<float>(v[j]);
          }
        }
      }
    }
    model.finalize();
    INFO(arch_name(arch));
    std::vector<std::int32_t> types;
    // 3 tokens run on the dequantising kernel, 11 on the dequantise-then-f32 path.
    for (std::int64_t n : {3, 11}) {
      if (arch == Architecture::kBert) types.assign(static_cast<std::size_t>(n), 1);
      check_against_reference(model, ckpt, random_ids(n, c.vocab, 3), types, {});
    }
  }
}
