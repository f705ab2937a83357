// The shared cross-attention block (src/models/blocks.h, cross_attention) against the
// double-precision reference (reference::cross_attention): queries from a decoder's rows, keys
// and values projected from an encoder output of another length and width, plain and grouped
// K/V heads, key padding, every kernel set. The tolerances are models_test_util.h's.
#include <vector>

#include "models/blocks.h"
#include "models/packing.h"
#include "models/units/unit.h"
#include "models_test_util.h"

using namespace attnlens;
using namespace attnlens::models;
using namespace attnlens_test;

namespace {

// Random multiples of 2^-12 in +-range: exact in float, so float and double see one problem.
std::vector<double> random_values(std::int64_t count, double range, Rng& rng) {
  std::vector<double> v(static_cast<std::size_t>(count));
  const auto steps = static_cast<std::int64_t>(range * 4096);
  for (double& x : v) x = static_cast<double>(rng.integer(-steps, steps)) / 4096.0;
  return v;
}

std::vector<float> as_floats(const std::vector<double>& v) { return {v.begin(), v.end()}; }

// An nn.Linear weight [out, in] packed as finalize() packs it, and its view.
struct Linear {
  std::vector<double> weight, bias;
  std::vector<float> packed, bias_f32;
  PackedMatrix view() const { return {packed.data(), nullptr, in, out}; }
  std::int64_t in, out;
};

Linear random_linear(std::int64_t in, std::int64_t out, Rng& rng) {
  Linear l;
  l.in = in;
  l.out = out;
  l.weight = random_values(in * out, std::min(0.49, 2.0 * std::sqrt(3.0 / in)), rng);
  l.bias = random_values(out, 0.1, rng);
  const std::vector<float> weight = as_floats(l.weight);
  l.packed.resize(static_cast<std::size_t>(packed_elements(in, out, 1)));
  pack_matrix(weight.data(), /*transposed=*/true, in, out, 1, l.packed.data());
  l.bias_f32 = as_floats(l.bias);
  return l;
}

}  // namespace

TEST_CASE("cross-attention matches the double reference", "[models]") {
  // GPT-2's shapes (3 heads of 8) and Qwen2's (4 query heads over 2 K/V heads of 6).
  for (Architecture arch : {Architecture::kGpt2, Architecture::kLlama}) {
    const TransformerConfig c = tiny(arch);
    const Transformer model(c);
    const std::int64_t h = c.hidden, d = head_dim_of(c), kv = kv_heads_of(c);
    const std::int64_t width = 16;  // the encoder's rows are not the decoder's width
    for (const KernelSet& kernels : kernel_sets()) {
      for (const auto& [n, m] : {std::pair<std::int64_t, std::int64_t>{1, 7}, {5, 1}, {9, 13}}) {
        for (bool padded : {false, true}) {
          Rng rng(static_cast<std::uint32_t>(100 * n + m + (padded ? 7 : 0)));
          const Linear q = random_linear(h, c.heads * d, rng),
                       k = random_linear(width, kv * d, rng), v = random_linear(width, kv * d, rng),
                       o = random_linear(c.heads * d, h, rng);
          const std::vector<double> x = random_values(n * h, 1.0, rng);
          const std::vector<double> encoder = random_values(m * width, 1.0, rng);
          std::vector<unsigned char> key_valid;
          if (padded) {  // the first key stays: a row that sees none is tested by the core's own
            for (std::int64_t j = 0; j < m; ++j) key_valid.push_back(j == 0 || rng.chance(0.6));
          }
          const std::vector<std::int32_t> ids(static_cast<std::size_t>(n), 0);
          ForwardOptions options;
          options.kernels = &kernels;
          const ForwardOutputs outputs{};
          const ForwardInputs inputs{ids, {}};
          ForwardPass pass(model, unit_of(arch).head_stack(), inputs, options, outputs);
          const std::vector<float> encoder_f32 = as_floats(encoder), x_f32 = as_floats(x);
          pass.encoder = {encoder_f32.data(), m, width, key_valid};
          const AttentionView view{q.view(),          k.view(),          v.view(),
                                   o.view(),          q.bias_f32.data(), k.bias_f32.data(),
                                   v.bias_f32.data(), o.bias_f32.data()};
          const float scale = 1.0f / std::sqrt(static_cast<float>(d));
          std::vector<float> weights(static_cast<std::size_t>(c.heads * n * m));
          cross_attention(pass, view, 0, scale, MaskSpec{}, x_f32.data(), weights);

          const reference::CrossAttentionResult expected = reference::cross_attention(
              x, n, h, encoder, m, width,
              {&q.weight, &q.bias, &k.weight, &k.bias, &v.weight, &v.bias, &o.weight, &o.bias},
              {c.heads, kv, n, d}, scale, key_valid);
          INFO(arch_name(arch) << " kernels " << kernels.name << " N=" << n << " M=" << m
                               << (padded ? " padded" : ""));
          ATTNLENS_CHECK_CLOSE(weights, expected.weights, kAttentionTol,
                               (Layout{{c.heads, n, m}, {"head", "i", "j"}}), "weights");
          ATTNLENS_CHECK_CLOSE(pass.block_out, expected.output, kHiddenTol, matrix_layout(n, h),
                               "output");
          if (padded) {
            for (std::int64_t hd = 0; hd < c.heads; ++hd) {
              for (std::int64_t i = 0; i < n; ++i) {
                for (std::int64_t j = 0; j < m; ++j) {
                  if (!key_valid[j]) CHECK(weights[(hd * n + i) * m + j] == 0.0f);
                }
              }
            }
          }
        }
      }
    }
  }
}
