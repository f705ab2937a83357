// Config validation, and the weight table of a config from its architecture's unit (units/).
#include "models/weights.h"

#include <cmath>
#include <string>
#include <utility>

#include "models/units/unit.h"
#include "validate.h"

namespace attnlens::models {
namespace {

// Every count must fit an int32 token id or index, which also keeps every product below 2^62.
constexpr std::int64_t kMaxDimension = 2147483647;
// Far beyond any checkpoint (the largest have ~100 layers); bounds the weight table itself.
constexpr std::int64_t kMaxLayers = 4096;
// A vision model's patch side and grid: far beyond any checkpoint (DINOv2: 14 px, 37 x 37).
constexpr std::int64_t kMaxImageSide = 4096;
constexpr std::int64_t kMaxRegisters = 1024;  // DINOv2 has 4

void require_dimension(std::int64_t value, const char* name) {
  detail::require_in_range(value, 1, kMaxDimension, name);
}

// The llama family's own fields: grouped K/V heads, the head size, the gate activation, RoPE.
void validate_llama_fields(const TransformerConfig& c) {
  const bool llama = c.architecture == Architecture::kLlama;
  if (!llama) {
    const std::pair<bool, const char*> own[] = {
        {c.kv_heads != 0 && c.kv_heads != c.heads, "kv_heads"},
        {c.head_dim != 0 && c.head_dim * c.heads != c.hidden, "head_dim"},
        {c.qkv_bias, "qkv_bias"},
        {c.output_bias, "output_bias"},
        {c.mlp_bias, "mlp_bias"},
        {!c.tie_word_embeddings, "tie_word_embeddings"},
        {c.activation == Activation::kSilu && c.architecture != Architecture::kMarian,
         "activation"}};
    for (const auto& [set, field] : own) {
      if (set) throw InvalidArgumentError(field, "only the llama family has this setting");
    }
    return;
  }
  if (c.kv_heads != 0) {
    detail::require_in_range(c.kv_heads, 1, c.heads, "kv_heads");
    if (c.heads % c.kv_heads != 0) {
      throw RangeError("kv_heads", "heads (" + std::to_string(c.heads) +
                                       ") must be a multiple of kv_heads, got " +
                                       std::to_string(c.kv_heads));
    }
  }
  if (c.head_dim != 0) require_dimension(c.head_dim, "head_dim");
  if (c.head_dim == 0 && c.hidden % c.heads != 0) {
    throw RangeError("heads", "hidden (" + std::to_string(c.hidden) +
                                  ") must be a multiple of heads, got " + std::to_string(c.heads));
  }
  if (head_dim_of(c) % 2 != 0) {
    throw RangeError("head_dim", "rotary embeddings rotate two halves of a head: head_dim " +
                                     std::to_string(head_dim_of(c)) + " must be even");
  }
  if (c.activation != Activation::kSilu) {
    throw InvalidArgumentError("activation", "the llama family's gated MLP takes silu");
  }
  const RotaryConfig& r = c.rotary;
  const auto positive = [](double v, const char* name) {
    if (!(v > 0) || !std::isfinite(v)) {
      throw RangeError(name, "must be a positive finite number, got " + std::to_string(v));
    }
  };
  positive(r.theta, "rope_theta");
  if (r.scaling != RopeScaling::kNone && r.scaling != RopeScaling::kLinear &&
      r.scaling != RopeScaling::kLlama3) {
    throw InvalidArgumentError("rope_scaling", "unknown scaling code");
  }
  if (r.scaling == RopeScaling::kNone) return;
  positive(r.factor, "rope_factor");
  if (r.scaling == RopeScaling::kLlama3) {
    positive(r.low_freq_factor, "rope_low_freq_factor");
    positive(r.high_freq_factor, "rope_high_freq_factor");
    if (!(r.high_freq_factor > r.low_freq_factor)) {
      throw RangeError("rope_high_freq_factor", "must be greater than low_freq_factor");
    }
    require_dimension(r.original_max_positions, "rope_original_max_positions");
  }
}

// A vision transformer's patches and position grid; none of it elsewhere.
void validate_vision_fields(const TransformerConfig& c) {
  if (c.architecture != Architecture::kVit) {
    const std::pair<bool, const char*> own[] = {{c.patch_size != 0, "patch_size"},
                                                {c.channels != 0, "channels"},
                                                {c.image_grid != 0, "image_grid"},
                                                {c.layer_scale, "layer_scale"},
                                                {c.interpolate_positions, "interpolate_positions"},
                                                {c.registers != 0, "registers"},
                                                {c.antialias_positions, "antialias_positions"}};
    for (const auto& [set, field] : own) {
      if (set) throw InvalidArgumentError(field, "only vision transformers have this setting");
    }
    return;
  }
  detail::require_in_range(c.patch_size, 1, kMaxImageSide, "patch_size");
  detail::require_in_range(c.channels, 1, 16, "channels");
  detail::require_in_range(c.image_grid, 1, kMaxImageSide, "image_grid");
  detail::require_in_range(c.registers, 0, kMaxRegisters, "registers");
  if (c.max_positions != c.image_grid * c.image_grid + 1) {
    throw RangeError("max_positions", "a vision transformer has the class token's and " +
                                          std::to_string(c.image_grid) + " x " +
                                          std::to_string(c.image_grid) + " patches' positions (" +
                                          std::to_string(c.image_grid * c.image_grid + 1) +
                                          "), got " + std::to_string(c.max_positions));
  }
}

// An encoder-decoder's split of its layers, and the embedding scale only Marian has.
void validate_encoder_decoder_fields(const TransformerConfig& c) {
  if (!is_encoder_decoder(c)) {
    if (c.encoder_layers != 0) {
      throw InvalidArgumentError("encoder_layers", "only encoder-decoder models have an encoder");
    }
    if (c.scale_embedding) {
      throw InvalidArgumentError("scale_embedding", "only Marian models scale their embeddings");
    }
    return;
  }
  if (c.layers < 2) {
    throw RangeError("layers", "an encoder-decoder needs at least one layer in each stack");
  }
  detail::require_in_range(c.encoder_layers, 1, c.layers - 1, "encoder_layers");
}

}  // namespace

void validate_config(const TransformerConfig& c) {
  if (c.architecture != Architecture::kGpt2 && c.architecture != Architecture::kGptNeo &&
      c.architecture != Architecture::kBert && c.architecture != Architecture::kLlama &&
      c.architecture != Architecture::kVit && c.architecture != Architecture::kMarian) {
    throw InvalidArgumentError("architecture", "unknown architecture code");
  }
  detail::require_in_range(c.layers, 1, kMaxLayers, "layers");
  require_dimension(c.heads, "heads");
  require_dimension(c.hidden, "hidden");
  require_dimension(c.intermediate, "intermediate");
  require_dimension(c.vocab, "vocab");
  require_dimension(c.max_positions, "max_positions");
  if (c.architecture != Architecture::kLlama && c.hidden % c.heads != 0) {
    throw RangeError("heads", "hidden (" + std::to_string(c.hidden) +
                                  ") must be a multiple of heads, got " + std::to_string(c.heads));
  }
  if (c.architecture == Architecture::kBert) require_dimension(c.token_types, "token_types");
  if (!c.final_norm && c.architecture != Architecture::kGpt2) {
    throw InvalidArgumentError("final_norm",
                               "only GPT-2 models can leave out the final layer norm");
  }
  if (!(c.layer_norm_eps > 0.0f) || !std::isfinite(c.layer_norm_eps)) {
    throw RangeError("layer_norm_eps",
                     "must be a positive finite number, got " + std::to_string(c.layer_norm_eps));
  }
  if (c.activation != Activation::kGeluTanh && c.activation != Activation::kGeluErf &&
      c.activation != Activation::kSilu) {
    throw InvalidArgumentError("activation", "unknown activation code");
  }
  if (c.matrix_dtype != WeightDtype::kF32 && c.matrix_dtype != WeightDtype::kF16 &&
      c.matrix_dtype != WeightDtype::kQ8_0 && c.matrix_dtype != WeightDtype::kQ4) {
    throw InvalidArgumentError("matrix_dtype", "unknown dtype code");
  }
  validate_llama_fields(c);
  validate_vision_fields(c);
  validate_encoder_decoder_fields(c);
  if (!c.local_windows.empty()) {
    if (c.architecture != Architecture::kGptNeo && c.architecture != Architecture::kLlama) {
      throw InvalidArgumentError("local_windows",
                                 "only GPT-Neo and the llama family have local attention layers");
    }
    if (static_cast<std::int64_t>(c.local_windows.size()) != c.layers) {
      throw RangeError("local_windows", "needs one entry per layer (" + std::to_string(c.layers) +
                                            "), got " + std::to_string(c.local_windows.size()));
    }
    for (std::int64_t w : c.local_windows)
      detail::require_in_range(w, 0, kMaxDimension, "local_windows");
  }
  if (!c.lm_head && c.architecture != Architecture::kBert && c.architecture != Architecture::kVit) {
    throw InvalidArgumentError("lm_head", "causal models always have their LM head");
  }
  // Every tensor size and the sums in model_size() fit in int64 and size_t.
  const WeightTable table = build_weight_table(c);
  std::int64_t total = 0;
  for (const WeightInfo& w : table.infos) {
    detail::to_size(w.elements, sizeof(float), w.name.c_str());
    if (__builtin_add_overflow(total, w.elements, &total) || total > (std::int64_t{1} << 60)) {
      throw OverflowError("parameters", "the model has more than 2^60 parameters");
    }
  }
}

WeightTable build_weight_table(const TransformerConfig& c) {
  TableBuilder t(c);
  unit_of(c.architecture).add_weights(c, t);
  return t.take();
}

}  // namespace attnlens::models
