// Shared by the model tests (test_models_*.cpp): the op test sizes, tiny configs, random f16-exact
// checkpoints in checkpoint layout, one forward call into fresh buffers, and the comparison with
// the double-precision reference.
//
// Weights are random multiples of 2^-12 (|w| < 0.5, so every one is exact in f16 as in f32),
// scaled per fan-in so activations stay O(1) and attention is neither uniform nor one-hot.
// Tolerances (float against double through 2-3 layers): attention weights abs 2e-5, hidden
// states abs 1e-4 + rel 1e-4, logits abs 2e-4 + rel 1e-4.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "attnlens/models/transformer.h"
#include "reference/reference.h"
#include "reference/transformer_reference.h"
#include "test_util.h"

namespace attnlens_test {

using namespace attnlens;
using namespace attnlens::models;

// The row lengths the model ops are tested at: 1, 3, below, at and above the 4- and 8-lane SIMD
// blocks and their multiples, and widths of real models.
inline const std::vector<std::size_t> kOpSizes = {1,  2,  3,  4,  5,  7,  8,  9,   11,  15,  16,
                                                  17, 31, 32, 33, 63, 64, 65, 127, 768, 769, 896};

inline const Tolerance kAttentionTol{2e-5, 0.0};
inline const Tolerance kHiddenTol{1e-4, 1e-4};
inline const Tolerance kLogitTol{2e-4, 1e-4};

inline TransformerConfig tiny(Architecture arch) {
  TransformerConfig c;
  c.architecture = arch;
  c.layers = 3;
  c.heads = 3;
  c.hidden = 24;
  c.intermediate = 40;
  c.vocab = 37;
  c.max_positions = 20;
  if (arch == Architecture::kGptNeo) c.local_windows = {0, 4, 0};
  if (arch == Architecture::kBert) {
    c.layers = 2;
    c.token_types = 2;
    c.layer_norm_eps = 1e-12f;
    c.activation = Activation::kGeluErf;
  }
  if (arch == Architecture::kLlama) {  // Qwen2's kind: 4 query heads over 2 K/V heads, q/k/v biases
    c.heads = 4;
    c.kv_heads = 2;
    c.layer_norm_eps = 1e-6f;
    c.activation = Activation::kSilu;
    c.qkv_bias = true;
    c.rotary.theta = 10000.0;
  }
  if (arch == Architecture::kMarian) {  // two encoder layers, two decoder layers
    c.layers = 4;
    c.encoder_layers = 2;
    c.activation = Activation::kSilu;
    c.scale_embedding = true;
  }
  return c;
}

// IEEE half bits of a float that is exactly representable as a half (the test's weights are).
inline std::uint16_t exact_half(float value) {
  if (value == 0.0f) return std::signbit(value) ? 0x8000 : 0;
  const std::uint16_t sign = value < 0 ? 0x8000 : 0;
  int exponent = 0;
  const double fraction = std::frexp(std::fabs(value), &exponent);  // in [0.5, 1)
  const int biased = exponent - 1 + 15;
  if (biased <= 0) {  // subnormal: value = m * 2^-24
    return static_cast<std::uint16_t>(sign | static_cast<int>(std::ldexp(std::fabs(value), 24)));
  }
  const int mantissa = static_cast<int>(std::ldexp(fraction * 2.0 - 1.0, 10));
  return static_cast<std::uint16_t>(sign | (biased << 10) | mantissa);
}

struct Checkpoint {
  std::map<std::string, std::vector<double>> values;  // by name, checkpoint layout
};

// Random weights for every tensor of the table, in checkpoint layout.
inline Checkpoint make_checkpoint(const Transformer& model, std::uint32_t seed) {
  Rng rng(seed);
  Checkpoint ckpt;
  for (const WeightInfo& w : model.weights()) {
    std::vector<double>& v = ckpt.values[w.name];
    v.resize(static_cast<std::size_t>(w.elements));
    const bool norm_gain = w.name.find("norm.weight") != std::string::npos;
    double range = 0.1;  // biases and norm offsets
    if (w.shape.size() == 2) {
      // An untied lm_head [vocab, hidden] multiplies hidden values, as a transposed linear does.
      const std::int64_t fan_in = w.transposed || w.name == "lm_head" ? w.shape[1] : w.shape[0];
      const bool embedding = w.name.find("embedding") != std::string::npos;
      range = embedding ? 0.49 : std::min(0.49, 2.0 * std::sqrt(3.0 / static_cast<double>(fan_in)));
    }
    const auto steps = static_cast<std::int64_t>(range * 4096);
    for (double& x : v) {
      x = static_cast<double>(rng.integer(-steps, steps)) / 4096.0;
      if (norm_gain) x += 1.0;
    }
  }
  return ckpt;
}

// One f16 or f32 tensor's values `v` into the model's storage for it.
inline void write_weight(const WeightInfo& w, const std::vector<double>& v, void* data) {
  for (std::size_t j = 0; j < v.size(); ++j) {
    if (w.dtype == WeightDtype::kF16) {
      static_cast<std::uint16_t*>(data)[j] = exact_half(static_cast<float>(v[j]));
    } else {
      static_cast<float*>(data)[j] = static_cast<float>(v[j]);
    }
  }
}

inline void write_weights(Transformer& model, const Checkpoint& ckpt) {
  for (std::size_t i = 0; i < model.weights().size(); ++i) {
    const WeightInfo& w = model.weights()[i];
    write_weight(w, ckpt.values.at(w.name), model.weight_data(static_cast<std::int64_t>(i)));
  }
  model.finalize();
}

inline std::vector<std::int32_t> random_ids(std::int64_t n, std::int64_t vocab,
                                            std::uint32_t seed) {
  Rng rng(seed);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(n));
  for (auto& id : ids) id = static_cast<std::int32_t>(rng.integer(0, vocab - 1));
  return ids;
}

struct Run {
  std::vector<float> attention, logits, hidden, log_sum_exp;
};

inline Run run(const Transformer& model, const std::vector<std::int32_t>& ids,
               const std::vector<std::int32_t>& types, ForwardOptions options,
               bool all_logits = true) {
  const TransformerConfig& c = model.config();
  const auto n = static_cast<std::int64_t>(ids.size());
  if (all_logits && c.lm_head) {
    for (std::int64_t i = 0; i < n; ++i) options.logit_positions.push_back(i);
  }
  Run r;
  r.attention.resize(static_cast<std::size_t>(c.layers * c.heads * n * n));
  r.logits.resize(options.logit_positions.size() * static_cast<std::size_t>(c.vocab));
  r.hidden.resize(static_cast<std::size_t>((c.layers + 1) * n * c.hidden));
  r.log_sum_exp.resize(options.logit_positions.size());
  model.forward({ids, types}, options, {r.attention, r.logits, r.hidden, r.log_sum_exp, {}});
  return r;
}

inline void check_against_reference(const Transformer& model, const Checkpoint& ckpt,
                                    const std::vector<std::int32_t>& ids,
                                    const std::vector<std::int32_t>& types,
                                    const ForwardOptions& options,
                                    const std::vector<MaskSpec>& reference_masks = {}) {
  const TransformerConfig& c = model.config();
  const auto n = static_cast<std::int64_t>(ids.size());
  const Run r = run(model, ids, types, options);
  const reference::TransformerResult expected =
      reference::transformer(c, ckpt.values, ids, types, reference_masks);
  ATTNLENS_CHECK_CLOSE(r.attention, expected.attention, kAttentionTol,
                       (Layout{{c.layers, c.heads, n, n}, {"layer", "head", "i", "j"}}),
                       "attention");
  ATTNLENS_CHECK_CLOSE(r.hidden, expected.hidden, kHiddenTol,
                       (Layout{{c.layers + 1, n, c.hidden}, {"state", "i", "c"}}), "hidden");
  if (c.lm_head) {
    ATTNLENS_CHECK_CLOSE(r.logits, expected.logits, kLogitTol, matrix_layout(n, c.vocab), "logits");
    std::vector<double> lse(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      const auto row = expected.logits.begin() + i * c.vocab;
      const double max = *std::max_element(row, row + c.vocab);
      double sum = 0;
      for (std::int64_t v = 0; v < c.vocab; ++v) sum += std::exp(row[v] - max);
      lse[static_cast<std::size_t>(i)] = max + std::log(sum);
    }
    ATTNLENS_CHECK_CLOSE(r.log_sum_exp, lse, kLogitTol, Layout{}, "log_sum_exp");
  }
}

inline const char* arch_name(Architecture a) {
  switch (a) {
    case Architecture::kGpt2:
      return "gpt2";
    case Architecture::kGptNeo:
      return "gpt_neo";
    case Architecture::kBert:
      return "bert";
    case Architecture::kLlama:
      return "llama";
    case Architecture::kVit:
      return "vit";
    case Architecture::kMarian:
      return "marian";
  }
  return "?";
}

}  // namespace attnlens_test
