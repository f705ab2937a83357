// The Gpt object: its config checks, the parameter table (attnlens/models' GPT-2 weight table,
// less the MLP for attention-only models), the seeded initialisation, and the checks every pass
// makes before it starts. The pass itself is gpt_pass.cpp.
#include "attnlens/training/gpt.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "gpt_pass.h"
#include "models/weights.h"
#include "parallel.h"
#include "validate.h"

namespace attnlens::training {
namespace {

using models::Role;

// Every size bound keeps each product in the activations and parameters far below 2^62.
constexpr std::int64_t kMaxLayers = 64;
constexpr std::int64_t kMaxHeads = 256;
constexpr std::int64_t kMaxWidth = 8192;
constexpr std::int64_t kMaxContext = 8192;
constexpr std::int64_t kMaxVocab = std::int64_t{1} << 20;
constexpr std::int64_t kMaxMlpWidth = 65536;

bool is_mlp_role(Role role) {
  return role == models::kMlpNormWeight || role == models::kMlpNormBias ||
         role == models::kMlpInWeight || role == models::kMlpInBias ||
         role == models::kMlpOutWeight || role == models::kMlpOutBias;
}

models::TransformerConfig transformer_config(const GptConfig& c) {
  models::TransformerConfig t;
  t.architecture = models::Architecture::kGpt2;
  t.layers = c.layers;
  t.heads = c.heads;
  t.hidden = c.width;
  t.intermediate = mlp_width_of(c);
  t.vocab = c.vocab;
  t.max_positions = c.context;
  t.layer_norm_eps = c.layer_norm_eps;
  t.final_norm = c.final_norm;
  return t;
}

void validate(const GptConfig& c) {
  detail::require_in_range(c.layers, 1, kMaxLayers, "layers");
  detail::require_in_range(c.heads, 1, kMaxHeads, "heads");
  detail::require_in_range(c.width, 1, kMaxWidth, "width");
  detail::require_in_range(c.context, 1, kMaxContext, "context");
  detail::require_in_range(c.vocab, 1, kMaxVocab, "vocab");
  if (c.mlp_width != 0) detail::require_in_range(c.mlp_width, 1, kMaxMlpWidth, "mlp_width");
  if (c.width % c.heads != 0) {
    throw RangeError("heads", "width (" + std::to_string(c.width) +
                                  ") must be a multiple of heads, got " + std::to_string(c.heads));
  }
  if (!(c.layer_norm_eps > 0.0f) || !std::isfinite(c.layer_norm_eps)) {
    throw RangeError("layer_norm_eps",
                     "must be a positive finite number, got " + std::to_string(c.layer_norm_eps));
  }
  if (!(c.token_embedding_std > 0.0f && c.token_embedding_std <= 1.0f)) {
    throw RangeError("token_embedding_std",
                     "must be in (0, 1], got " + std::to_string(c.token_embedding_std));
  }
}

// splitmix64 (Steele, Lea & Flood): a 64-bit state, good statistical quality, integer only.
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Mean 0, variance 1: the sum of four uniforms of 24 bits (Irwin-Hall), centred and scaled.
  // Every step but the last multiplication is exact, so the value is the same everywhere.
  double standard() {
    double sum = 0.0;
    for (int i = 0; i < 4; ++i) sum += static_cast<double>(next() >> 40) * (1.0 / 16777216.0);
    return (sum - 2.0) * std::sqrt(3.0);
  }

 private:
  std::uint64_t state_;
};

}  // namespace

Gpt::Gpt(const GptConfig& config, std::uint64_t seed) : config_(config) {
  validate(config_);
  const models::WeightTable table = models::build_weight_table(transformer_config(config_));
  // The table's order (embeddings, then layer by layer, then ln_f), each tensor's role from the
  // role index.
  std::vector<std::size_t> slot_of(table.infos.size());
  for (std::size_t slot = 0; slot < table.role_index.size(); ++slot) {
    if (table.role_index[slot] >= 0)
      slot_of[static_cast<std::size_t>(table.role_index[slot])] = slot;
  }
  role_index_.assign(table.role_index.size(), -1);
  std::int64_t offset = 0;
  for (std::size_t source = 0; source < table.infos.size(); ++source) {
    const auto role = static_cast<Role>(slot_of[source] % models::kRoleCount);
    if (config_.attention_only && is_mlp_role(role)) continue;
    const models::WeightInfo& w = table.infos[source];
    ParameterInfo info;
    info.name = w.name;
    info.shape = w.shape;
    info.offset = offset;
    info.elements = w.elements;
    info.decay = w.shape.size() == 2 && role != models::kTokenEmbedding &&
                 role != models::kPositionEmbedding;
    offset += w.elements;
    role_index_[slot_of[source]] = static_cast<std::int64_t>(infos_.size());
    infos_.push_back(std::move(info));
  }
  // Values, gradients and AdamW's two moments: four floats per parameter.
  detail::to_size(detail::checked_mul(offset, 4, "parameters"), sizeof(float), "parameters");
  values_.assign(static_cast<std::size_t>(offset), 0.0f);
  gradients_.assign(values_.size(), 0.0f);

  Draws draws(seed);
  const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(config_.layers));
  for (std::size_t slot = 0; slot < role_index_.size(); ++slot) {
    if (role_index_[slot] < 0) continue;
    const ParameterInfo& info = infos_[static_cast<std::size_t>(role_index_[slot])];
    const auto role = static_cast<Role>(slot % models::kRoleCount);
    float* data = values_.data() + info.offset;
    if (info.shape.size() == 2) {
      const bool residual = role == models::kAttentionOutWeight || role == models::kMlpOutWeight;
      const double std_dev = residual                          ? residual_std
                             : role == models::kTokenEmbedding ? config_.token_embedding_std
                                                               : 0.02;
      for (std::int64_t i = 0; i < info.elements; ++i) {
        data[i] = static_cast<float>(std_dev * draws.standard());
      }
    } else if (role == models::kAttentionNormWeight || role == models::kMlpNormWeight ||
               role == models::kFinalNormWeight) {
      for (std::int64_t i = 0; i < info.elements; ++i) data[i] = 1.0f;
    }
  }
  workspace_ = std::make_unique<Workspace>();
}

Gpt::~Gpt() = default;
Gpt::Gpt(Gpt&&) noexcept = default;
Gpt& Gpt::operator=(Gpt&&) noexcept = default;

void Gpt::check_parameters() const {
  for (const ParameterInfo& info : infos_) {
    const float* data = values_.data() + info.offset;
    for (std::int64_t i = 0; i < info.elements; ++i) {
      if (!std::isfinite(data[i])) {
        throw NonFiniteError(info.name, info.name + "[" + std::to_string(i) + "] is " +
                                            (std::isnan(data[i]) ? "NaN" : "Infinity") +
                                            "; parameters must be finite");
      }
    }
  }
}

namespace {

void validate_settings(const ForwardSettings& s) {
  if (!(s.temperature > 0.0f) || !std::isfinite(s.temperature)) {
    throw RangeError("temperature",
                     "must be a positive finite number, got " + std::to_string(s.temperature));
  }
  detail::require_in_range(s.threads, 0, detail::kMaxThreads, "threads");
}

void validate_ids(Span<const std::int32_t> tokens, std::int64_t vocab) {
  for (std::size_t i = 0; i < tokens.size; ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocab) {
      throw RangeError("tokens", "token " + std::to_string(i) + " is " + std::to_string(tokens[i]) +
                                     ", outside the vocabulary of " + std::to_string(vocab));
    }
  }
}

}  // namespace

float Gpt::loss(Span<const std::int32_t> tokens, std::int64_t batch,
                const ForwardSettings& settings, bool backward) {
  validate_settings(settings);
  detail::require_in_range(batch, 1, std::int64_t{1} << 24, "batch");
  const auto count = static_cast<std::int64_t>(tokens.size);
  if (count % batch != 0 || count / batch < 2 || count / batch > config_.context + 1) {
    throw ShapeError("tokens", "needs batch * (T + 1) ids with 1 <= T <= context (" +
                                   std::to_string(config_.context) + "), got " +
                                   std::to_string(count) + " for a batch of " +
                                   std::to_string(batch));
  }
  validate_ids(tokens, config_.vocab);
  const std::int64_t t_len = count / batch - 1;
  GptPass pass(*this, settings, tokens, batch, t_len, t_len + 1);
  pass.forward({});
  const double mean = pass.loss(backward);
  if (!std::isfinite(mean)) {
    throw NonFiniteError("loss",
                         "loss: the loss overflowed float32 (the parameters are out "
                         "of range: lower the learning rate)");
  }
  if (backward) {
    pass.backward();
    if (detail::largest_abs_bits(gradients_) >= 0x7f800000u) {
      throw NonFiniteError("gradients",
                           "gradients: overflowed float32 (the parameters are out "
                           "of range: lower the learning rate)");
    }
  }
  return static_cast<float>(mean);
}

void Gpt::attention(Span<const std::int32_t> tokens, const ForwardSettings& settings,
                    MutableFloatView weights) {
  validate_settings(settings);
  const auto n = static_cast<std::int64_t>(tokens.size);
  if (n < 1 || n > config_.context) {
    throw RangeError("tokens", "needs 1 to context (" + std::to_string(config_.context) +
                                   ") tokens, got " + std::to_string(n));
  }
  validate_ids(tokens, config_.vocab);
  detail::require_length(
      weights.size, config_.layers * config_.heads * n * n, "weights",
      "layers*heads*N*N = " + detail::product_text({config_.layers, config_.heads, n, n}));
  GptPass pass(*this, settings, tokens, 1, n, n);
  pass.forward(weights);
}

void Gpt::Workspace::resize(const GptConfig& c, std::int64_t b, std::int64_t t) {
  batch = b;
  t_len = t;
  const auto r = static_cast<std::size_t>(b * t), cw = static_cast<std::size_t>(c.width);
  const auto layers = static_cast<std::size_t>(c.layers);
  const auto head_count = static_cast<std::size_t>(c.heads);
  const std::size_t f = c.attention_only ? 0 : static_cast<std::size_t>(mlp_width_of(c));
  const std::size_t mlp_layers = c.attention_only ? 0 : layers;
  x_in.resize((layers + 1) * r * cw);
  x_mid.resize(mlp_layers * r * cw);
  ln1.resize(layers * r * cw);
  ln2.resize(mlp_layers * r * cw);
  heads.resize(layers * 3 * r * cw);
  att.resize(layers * r * cw);
  lse.resize(layers * r * head_count);
  merged.resize(layers * r * cw);
  fc_pre.resize(mlp_layers * r * f);
  fc_act.resize(mlp_layers * r * f);
  lnf.resize(r * cw);
  logits.resize(r * static_cast<std::size_t>(c.vocab));
  qkv.resize(r * 3 * cw);
  proj.resize(r * std::max(3 * cw, f));
  residual_grad.resize(r * cw);
  grad_heads.resize(3 * r * cw);
}

}  // namespace attnlens::training
