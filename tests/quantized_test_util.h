// Shared by the quantised-weight tests (test_models_q8.cpp, test_models_q4.cpp): the panel GEMM
// against double precision, linear()'s double-precision reference, and a whole model stored with
// quantised linear layers against the reference forward of the same (dequantised) weights.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/linear.h"
#include "models/ops.h"
#include "models/packing.h"
#include "models_test_util.h"

namespace attnlens_test {

// One panel's 4 x 8 tiles `c` (tiles of 4 rows of `a`, [tile][k][4]) against the double-precision
// sums over `w` ([8][k], the float weights the kernel dequantises to). The kernel makes k
// additions in f32, each rounding by at most one unit roundoff of the partial sum (bounded by the
// sum of magnitudes), plus `extra_roundings` (a rounded product: 1; weights exact in f32: 0).
template <typename Weight>
void check_panel_gemm_against_double(std::size_t tiles, std::int64_t k, const std::vector<float>& a,
                                     const std::vector<Weight>& w, const std::vector<float>& c,
                                     int extra_roundings) {
  for (std::size_t t = 0; t < tiles; ++t) {
    for (std::size_t r = 0; r < 4; ++r) {
      for (std::size_t j = 0; j < 8; ++j) {
        double sum = 0, magnitude = 0;
        for (std::int64_t p = 0; p < k; ++p) {
          const double term =
              static_cast<double>(a[(t * static_cast<std::size_t>(k) + p) * 4 + r]) *
              w[j * static_cast<std::size_t>(k) + p];
          sum += term;
          magnitude += std::fabs(term);
        }
        const double bound =
            static_cast<double>(k + 1 + extra_roundings) * magnitude / 16777216.0 + 1e-30;
        const double got = c[t * 32 + r * 8 + j];
        if (std::fabs(got - sum) > bound) {
          FAIL_CHECK("tile " << t << " row " << r << " col " << j << ": " << got << " vs " << sum
                             << " (bound " << bound << ")");
        }
      }
    }
  }
}

// The f32 panel GEMM of the kernel set named like `ops` over the dequantised `panel` computes the
// bits `c` of the dequantising kernel.
inline void check_f32_panel_gemm_same_bits(const ModelOps& ops, std::size_t tiles, std::int64_t k,
                                           const std::vector<float>& a,
                                           const std::vector<float>& panel,
                                           const std::vector<float>& c) {
  const KernelSet* same = find_kernel_set(ops.name);
  REQUIRE(same != nullptr);
  std::vector<float> f32(tiles * 32);
  same->panel_gemm(tiles, static_cast<std::size_t>(k), a.data(), static_cast<std::size_t>(k) * 4,
                   panel.data(), f32.data(), nullptr);
  CHECK(f32 == c);
}

// y = x W + bias in double precision: x [rows][in], w [out][in], bias [out] or null.
template <typename Weight>
std::vector<double> linear_reference(const std::vector<float>& x, const std::vector<Weight>& w,
                                     const float* bias, std::int64_t rows, std::int64_t in,
                                     std::int64_t out) {
  std::vector<double> y(static_cast<std::size_t>(rows * out));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < out; ++c) {
      double sum = bias ? bias[c] : 0.0;
      for (std::int64_t p = 0; p < in; ++p) {
        sum += static_cast<double>(x[static_cast<std::size_t>(r * in + p)]) *
               w[static_cast<std::size_t>(c * in + p)];
      }
      y[static_cast<std::size_t>(r * out + c)] = sum;
    }
  }
  return y;
}

// linear() on `rows` random rows x (|x| <= 1, seeded by rows and out) and a random bias through a
// quantised matrix of `groups` column groups, group g being group_matrix(g, out / groups), into
// one output of `out` columns, against linear_reference over w (its float weights, [out][in]).
// The tolerance, 2e-6 per depth, holds for |w| <= 0.5 (each output's terms sum to at most in / 2).
template <typename Weight, typename GroupMatrix>
void check_quantized_linear(const StepContext& ctx, std::int64_t rows, std::int64_t in,
                            std::int64_t out, std::int64_t groups, const std::vector<Weight>& w,
                            GroupMatrix group_matrix) {
  Rng rng(static_cast<std::uint32_t>(rows * 31 + out));
  const std::vector<float> x = random_floats(static_cast<std::size_t>(rows * in), rng);
  const std::vector<float> bias = random_floats(static_cast<std::size_t>(out), rng, -0.5f, 0.5f);
  RowPanels panels;
  pack_rows(x.data(), rows, in, panels);
  std::vector<float> y(static_cast<std::size_t>(rows * out), -7.0f);
  const std::int64_t group_out = out / groups;
  for (std::int64_t g = 0; g < groups; ++g) {
    const PackedMatrix matrix = group_matrix(g, group_out);
    linear(ctx, panels, matrix, bias.data() + g * group_out, y.data() + g * group_out, out);
  }
  INFO(ctx.kernels.name << " in " << in << " out " << out << " groups " << groups << " rows "
                        << rows);
  // A decoding step's few rows multiply the row rounded to 16 bits per block (int16_row.h): the
  // reference takes the same values.
  std::vector<float> x_used = x;
  if (rows <= kGemvMaxRows) {
    for (std::int64_t r = 0; r < rows; ++r) {
      Int16Row row;
      row.quantize(static_cast<std::size_t>(in), x.data() + r * in, 1);
      for (std::int64_t p = 0; p < in; ++p) {
        x_used[static_cast<std::size_t>(r * in + p)] =
            row.values[static_cast<std::size_t>(p)] * row.scales[static_cast<std::size_t>(p / 32)];
      }
    }
  }
  const std::vector<double> expected = linear_reference(x_used, w, bias.data(), rows, in, out);
  ATTNLENS_CHECK_CLOSE(y, expected, (Tolerance{2e-6 * static_cast<double>(in), 0.0}),
                       matrix_layout(rows, out), "linear");
}

// Writes `rows` rows of `in` values (x, [rows][in]) as quantised blocks at `out` and returns the
// values they dequantise to.
using QuantizeRows = std::function<std::vector<double>(
    const std::vector<double>& x, std::int64_t rows, std::int64_t in, std::uint8_t* out)>;

// gpt2, llama and bert stored with `dtype` linear layers (smaller than with `larger` ones): every
// linear layer whose depth is a multiple of 32 is quantised by `quantize`, the rest is f16, and
// the forward matches the reference forward over the dequantised weights, on 3 tokens (the
// dequantising kernel) and 11 (the dequantise-then-f32 path).
inline void check_quantized_storage(WeightDtype dtype, WeightDtype larger,
                                    const QuantizeRows& quantize) {
  for (Architecture arch : {Architecture::kGpt2, Architecture::kLlama, Architecture::kBert}) {
    TransformerConfig c = tiny(arch);
    c.hidden = 64;
    c.heads = 4;
    c.intermediate = arch == Architecture::kLlama ? 72 : 96;  // llama: down_proj stays f16
    c.matrix_dtype = dtype;
    Transformer model(c);
    TransformerConfig c_larger = c;
    c_larger.matrix_dtype = larger;
    CHECK(model.size().weight_bytes < model_size(c_larger).weight_bytes);
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
        CHECK(w.dtype == (linear_layer && in % 32 == 0 ? dtype : WeightDtype::kF16));
      }
      if (w.dtype != dtype) {
        write_weight(w, v, data);
        continue;
      }
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
      const std::vector<double> q = quantize(rows, out, in, static_cast<std::uint8_t*>(data));
      for (std::int64_t o = 0; o < out; ++o) {
        for (std::int64_t p = 0; p < in; ++p) {
          v[static_cast<std::size_t>(w.transposed ? o * in + p : p * out + o)] =
              q[static_cast<std::size_t>(o * in + p)];
        }
      }
    }
    model.finalize();
    INFO(arch_name(arch));
    std::vector<std::int32_t> types;
    for (std::int64_t n : {3, 11}) {
      if (arch == Architecture::kBert) types.assign(static_cast<std::size_t>(n), 1);
      check_against_reference(model, ckpt, random_ids(n, c.vocab, 3), types, {});
    }
  }
}

}  // namespace attnlens_test
