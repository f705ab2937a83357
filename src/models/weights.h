// The weight table of a config: every tensor the caller writes (name, checkpoint-layout shape,
// dtype, whether it is transposed at load) and which role each plays in the forward pass. Each
// architecture's unit (units/*.cpp) lists its own tensors through a TableBuilder.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attnlens/models/transformer.h"
#include "validate.h"

namespace attnlens::models {

// What a weight does. Model-wide roles are looked up in row `layers` of the role index, layer
// roles in row `layer`; an architecture without a role (GPT-Neo's q/k/v biases) has -1 there.
enum Role : int {
  // Model-wide.
  kTokenEmbedding,       // [vocab, hidden]
  kPositionEmbedding,    // [max_positions, hidden]
  kTokenTypeEmbedding,   // BERT [token_types, hidden]
  kEmbeddingNormWeight,  // BERT: LayerNorm after the embeddings
  kEmbeddingNormBias,
  kFinalNormWeight,  // GPT: ln_f
  kFinalNormBias,
  kHeadDenseWeight,  // BERT MLM head: transform.dense [hidden, hidden] (nn.Linear)
  kHeadDenseBias,
  kHeadNormWeight,  // transform.LayerNorm
  kHeadNormBias,
  kHeadBias,  // cls.predictions.bias [vocab]
  kLmHead,    // llama's untied lm_head.weight [vocab, hidden] (nn.Linear, read like an embedding);
              // a vision classifier [labels, hidden] (its bias: kHeadBias)
  kClassToken,   // vision: the class token [1, hidden]
  kPatchWeight,  // vision: the patch convolution as a linear layer [hidden, channels * patch^2]
  kPatchBias,
  kRegisterTokens,  // vision: DINOv2's register tokens [1, registers, hidden]
  // Per layer.
  kAttentionNormWeight,  // GPT ln_1 (before attention); BERT attention.output.LayerNorm (after);
                         // llama input_layernorm (an RMSNorm: weight only)
  kAttentionNormBias,
  kQkvWeight,  // GPT-2 c_attn: Conv1D [hidden, 3 * hidden], q | k | v along the output
  kQkvBias,
  kQueryWeight,  // GPT-Neo, BERT: nn.Linear [hidden, hidden]; llama [heads * head_dim, hidden]
  kQueryBias,    // BERT; llama with qkv_bias
  kKeyWeight,
  kKeyBias,
  kValueWeight,
  kValueBias,
  kAttentionOutWeight,  // c_proj / out_proj / attention.output.dense
  kAttentionOutBias,
  // A decoder's cross-attention over an encoder's output (blocks.h, cross_attention): its norm
  // (pre-LN) or the norm after it (post-LN), q from the decoder, k and v from the encoder rows.
  kCrossNormWeight,
  kCrossNormBias,
  kCrossQueryWeight,
  kCrossQueryBias,
  kCrossKeyWeight,
  kCrossKeyBias,
  kCrossValueWeight,
  kCrossValueBias,
  kCrossOutWeight,
  kCrossOutBias,
  kMlpNormWeight,  // GPT ln_2 (before the MLP); BERT output.LayerNorm (after); llama
                   // post_attention_layernorm
  kMlpNormBias,
  kMlpGateWeight,  // llama gate_proj: hidden -> intermediate
  kMlpGateBias,
  kMlpInWeight,  // c_fc / intermediate.dense / llama up_proj: hidden -> intermediate
  kMlpInBias,
  kMlpOutWeight,  // c_proj / output.dense / llama down_proj: intermediate -> hidden
  kMlpOutBias,
  kLayerScaleAttention,  // DINOv2's layer_scale1.lambda1 [hidden]: the attention block's scale
  kLayerScaleMlp,        // layer_scale2.lambda1: the MLP block's
  kRoleCount
};

struct WeightTable {
  std::vector<WeightInfo> infos;
  std::vector<std::int64_t> role_index;  // [(layers + 1) * kRoleCount], -1 where absent
  // Per weight: 0 when it stays as written (embeddings, vectors); for a linear layer's matrix,
  // how many equal column groups finalize() packs it as (packing.h): 3 for GPT-2's q | k | v.
  std::vector<std::int64_t> column_groups;
};

// Builds a WeightTable, one tensor at a time in the order the caller writes them: what each
// unit's add_weights() (units/unit.h) calls.
class TableBuilder {
 public:
  explicit TableBuilder(const TransformerConfig& config)
      : config_(config),
        table_{{},
               std::vector<std::int64_t>(static_cast<std::size_t>((config.layers + 1) * kRoleCount),
                                         -1),
               {}} {}

  // A model-wide tensor (row = layers) or a layer's (row = layer).
  void add(std::int64_t row, Role role, std::string name, std::vector<std::int64_t> shape,
           bool transposed = false, std::int64_t column_groups = 0) {
    WeightInfo info;
    info.name = std::move(name);
    info.elements = 1;
    for (std::int64_t d : shape) info.elements = detail::checked_mul(info.elements, d, "weights");
    info.shape = std::move(shape);
    info.transposed = transposed;
    info.dtype = dtype_of(info, column_groups);
    table_.role_index[static_cast<std::size_t>(row * kRoleCount + role)] =
        static_cast<std::int64_t>(table_.infos.size());
    table_.infos.push_back(std::move(info));
    table_.column_groups.push_back(column_groups);
  }

  // A matrix mapping `in` to `out` features with an optional bias: Conv1D [in, out] for GPT-2,
  // nn.Linear [out, in] (transposed at load) otherwise.
  void linear(std::int64_t row, Role weight, Role bias, const std::string& name, std::int64_t in,
              std::int64_t out, bool conv1d, bool has_bias = true, std::int64_t groups = 1) {
    if (conv1d) {
      add(row, weight, name + ".weight", {in, out}, false, groups);
    } else {
      add(row, weight, name + ".weight", {out, in}, /*transposed=*/true, groups);
    }
    if (has_bias) add(row, bias, name + ".bias", {out});
  }

  void norm(std::int64_t row, Role weight, Role bias, const std::string& name) {
    add(row, weight, name + ".weight", {config_.hidden});
    add(row, bias, name + ".bias", {config_.hidden});
  }

  // An RMSNorm: a weight, no bias.
  void rms_norm(std::int64_t row, Role weight, const std::string& name) {
    add(row, weight, name + ".weight", {config_.hidden});
  }

  WeightTable take() { return std::move(table_); }

 private:
  // Matrices (2-D) take the config's dtype, vectors stay f32. Under kQ8_0 (kQ4) only a linear
  // layer (packed: column groups) whose input width is a multiple of 32 is Q8_0 (4-bit); the
  // other matrices are f16, as llama.cpp leaves a tensor its block size does not divide in a
  // wider type.
  WeightDtype dtype_of(const WeightInfo& info, std::int64_t column_groups) const {
    if (info.shape.size() != 2) return WeightDtype::kF32;
    const WeightDtype dtype = config_.matrix_dtype;
    if (dtype != WeightDtype::kQ8_0 && dtype != WeightDtype::kQ4) return dtype;
    const std::int64_t in = info.transposed ? info.shape[1] : info.shape[0];
    return column_groups > 0 && in % 32 == 0 ? dtype : WeightDtype::kF16;
  }

  const TransformerConfig& config_;
  WeightTable table_;
};

// Assumes a validated config (validate_config): the config's unit lists its tensors.
WeightTable build_weight_table(const TransformerConfig& config);

// RangeError / InvalidArgumentError naming the first bad field; also checks that every size
// product fits in 64 bits and in size_t.
void validate_config(const TransformerConfig& config);

// A byte count as the memory errors state it ("72.0 MiB"; transformer.cpp).
std::string format_bytes(std::int64_t bytes);

inline std::int64_t role_of(const std::vector<std::int64_t>& role_index, std::int64_t row,
                            Role role) {
  return role_index[static_cast<std::size_t>(row * kRoleCount + role)];
}

}  // namespace attnlens::models
