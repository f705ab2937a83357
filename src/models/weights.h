// The weight table of a config: every tensor the caller writes (name, checkpoint-layout shape,
// dtype, whether it is transposed at load) and which role each plays in the forward pass.
#pragma once

#include <cstdint>
#include <vector>

#include "attnlens/models/transformer.h"

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
  kLmHead,    // llama's untied lm_head.weight [vocab, hidden] (nn.Linear, read like an embedding)
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
  kMlpNormWeight,  // GPT ln_2 (before the MLP); BERT output.LayerNorm (after); llama
                   // post_attention_layernorm
  kMlpNormBias,
  kMlpGateWeight,  // llama gate_proj: hidden -> intermediate
  kMlpGateBias,
  kMlpInWeight,  // c_fc / intermediate.dense / llama up_proj: hidden -> intermediate
  kMlpInBias,
  kMlpOutWeight,  // c_proj / output.dense / llama down_proj: intermediate -> hidden
  kMlpOutBias,
  kRoleCount
};

struct WeightTable {
  std::vector<WeightInfo> infos;
  std::vector<std::int64_t> role_index;  // [(layers + 1) * kRoleCount], -1 where absent
  // Per weight: 0 when it stays as written (embeddings, vectors); for a linear layer's matrix,
  // how many equal column groups finalize() packs it as (packing.h): 3 for GPT-2's q | k | v.
  std::vector<std::int64_t> column_groups;
};

// Assumes a validated config (validate_config).
WeightTable build_weight_table(const TransformerConfig& config);

// RangeError / InvalidArgumentError naming the first bad field; also checks that every size
// product fits in 64 bits and in size_t.
void validate_config(const TransformerConfig& config);

inline std::int64_t role_of(const std::vector<std::int64_t>& role_index, std::int64_t row,
                            Role role) {
  return role_index[static_cast<std::size_t>(row * kRoleCount + role)];
}

}  // namespace attnlens::models
