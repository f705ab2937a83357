// The forward pass's view of a finalized model's weights: each role resolved to a pointer, a
// packed linear matrix (packing.h) or an embedding matrix, per layer.
#pragma once

#include <cstdint>

#include "attnlens/models/transformer.h"
#include "models/linear.h"
#include "models/packing.h"
#include "models/q4.h"
#include "models/q8_0.h"
#include "models/weights.h"

namespace attnlens::models {

struct Norm {
  const float* weight = nullptr;
  const float* bias = nullptr;
};

// An attention block's projections: q, k, v and the output, each with an optional bias.
struct AttentionView {
  PackedMatrix q, k, v, out;
  const float* bq = nullptr;
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* b_out = nullptr;
};

struct LayerView {
  Norm attention_norm, cross_norm, mlp_norm;
  AttentionView attention;  // self-attention
  AttentionView cross;      // cross-attention over an encoder's output (empty without one)
  PackedMatrix mlp_gate, mlp_in, mlp_out;
  const float* b_mlp_gate = nullptr;
  const float* b_mlp_in = nullptr;
  const float* b_mlp_out = nullptr;
};

// Resolves roles to pointers and matrix views (after finalize: every matrix is [in, out]).
class Views {
 public:
  explicit Views(const Transformer& model) : model_(model) {}

  const float* vector(std::int64_t row, Role role) const {
    const std::int64_t i = role_of(model_.role_index(), row, role);
    return i < 0 ? nullptr : model_.f32_data(i);
  }

  Norm norm(std::int64_t row, Role weight, Role bias) const {
    return {vector(row, weight), vector(row, bias)};
  }

  // A linear layer's packed matrix ([in, out] in panels), or an empty one.
  PackedMatrix packed(std::int64_t row, Role role) const {
    const std::int64_t i = role_of(model_.role_index(), row, role);
    if (i < 0) return {};
    const WeightInfo& w = model_.weights()[static_cast<std::size_t>(i)];
    return {model_.f32_data(i),
            model_.f16_data(i),
            w.transposed ? w.shape[1] : w.shape[0],
            w.transposed ? w.shape[0] : w.shape[1],
            model_.q8_data(i),
            model_.q4_data(i)};
  }

  EmbeddingMatrix embedding(Role role) const {
    const std::int64_t i = role_of(model_.role_index(), model_.config().layers, role);
    if (i < 0) return {};
    const WeightInfo& w = model_.weights()[static_cast<std::size_t>(i)];
    return {model_.f32_data(i), model_.f16_data(i), w.shape[0], w.shape[1]};
  }

  LayerView layer(std::int64_t l) const {
    LayerView v;
    v.attention_norm = norm(l, kAttentionNormWeight, kAttentionNormBias);
    v.mlp_norm = norm(l, kMlpNormWeight, kMlpNormBias);
    const PackedMatrix qkv = packed(l, kQkvWeight);
    const std::int64_t h = model_.config().hidden;
    if (qkv.in > 0) {  // GPT-2: one matrix packed as three groups of whole panels, q | k | v
      const std::int64_t group = panels_of(h) * kPanelWidth * qkv.in;
      const std::int64_t q8_group = panels_of(h) * q8_panel_bytes(qkv.in);
      const std::int64_t q4_group = panels_of(h) * q4_panel_bytes(qkv.in);
      const auto part = [&](std::int64_t g) {
        return PackedMatrix{qkv.f32 ? qkv.f32 + g * group : nullptr,
                            qkv.f16 ? qkv.f16 + g * group : nullptr,
                            qkv.in,
                            h,
                            qkv.q8 ? qkv.q8 + g * q8_group : nullptr,
                            qkv.q4 ? qkv.q4 + g * q4_group : nullptr};
      };
      v.attention.q = part(0);
      v.attention.k = part(1);
      v.attention.v = part(2);
      const float* b = vector(l, kQkvBias);
      v.attention.bq = b;
      v.attention.bk = b + h;
      v.attention.bv = b + 2 * h;
    } else {
      v.attention.q = packed(l, kQueryWeight);
      v.attention.k = packed(l, kKeyWeight);
      v.attention.v = packed(l, kValueWeight);
      v.attention.bq = vector(l, kQueryBias);
      v.attention.bk = vector(l, kKeyBias);
      v.attention.bv = vector(l, kValueBias);
    }
    v.attention.out = packed(l, kAttentionOutWeight);
    v.attention.b_out = vector(l, kAttentionOutBias);
    v.cross_norm = norm(l, kCrossNormWeight, kCrossNormBias);
    v.cross = {packed(l, kCrossQueryWeight), packed(l, kCrossKeyWeight),
               packed(l, kCrossValueWeight), packed(l, kCrossOutWeight),
               vector(l, kCrossQueryBias),   vector(l, kCrossKeyBias),
               vector(l, kCrossValueBias),   vector(l, kCrossOutBias)};
    v.mlp_gate = packed(l, kMlpGateWeight);
    v.b_mlp_gate = vector(l, kMlpGateBias);
    v.mlp_in = packed(l, kMlpInWeight);
    v.b_mlp_in = vector(l, kMlpInBias);
    v.mlp_out = packed(l, kMlpOutWeight);
    v.b_mlp_out = vector(l, kMlpOutBias);
    return v;
  }

 private:
  const Transformer& model_;
};

}  // namespace attnlens::models
