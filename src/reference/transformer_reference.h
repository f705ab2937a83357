// A naive double-precision transformer forward pass, written from the Hugging Face modelling
// code's semantics (GPT2Model, GPTNeoModel, BertForMaskedLM), sharing no code with src/models/:
// it reads the weights in the layout checkpoints store them (nn.Linear [out, in], Conv1D
// [in, out]) and computes in loops. Tests only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attnlens/mask.h"
#include "attnlens/models/transformer.h"

namespace attnlens::reference {

struct TransformerResult {
  std::vector<double> attention;    // [layers, heads, N, N]
  std::vector<double> logits;       // [N, vocab] at every position (empty without an LM head)
  std::vector<double> hidden;       // [layers + 1, N, hidden], as ForwardOutputs::hidden_states
  std::vector<double> projections;  // [layers, 3, heads, N, head_dim]: each layer's q, k, v
};

// `weights` by the names of Transformer::weights(), values in checkpoint layout. `masks`: empty
// for each layer's own mask (from the config, written here independently), else one per layer
// or one for all, evaluated with reference::visible.
TransformerResult transformer(const models::TransformerConfig& config,
                              const std::map<std::string, std::vector<double>>& weights,
                              const std::vector<std::int32_t>& token_ids,
                              const std::vector<std::int32_t>& token_types,
                              const std::vector<MaskSpec>& masks = {});

}  // namespace attnlens::reference
