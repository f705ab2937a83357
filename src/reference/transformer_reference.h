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
  std::vector<double> attention;  // [layers, heads, N, N]
  std::vector<double> logits;     // [N, vocab] at every position (empty without an LM head)
  std::vector<double> hidden;     // [layers + 1, N, hidden], as ForwardOutputs::hidden_states
};

// The ops of the reference forward pass, in double (rows of `n`, row-major), for the other
// references to build on. linear: torch.nn.Linear y = x W^T + b with W [out, in], or with
// `conv1d` (GPT-2's Conv1D) y = x W + b with W [in, out]; b may be null. layer_norm: as
// torch.nn.LayerNorm (biased variance). activation: in place.
std::vector<double> linear(const std::vector<double>& x, std::int64_t n, std::int64_t in,
                           std::int64_t out, const std::vector<double>& w,
                           const std::vector<double>* b, bool conv1d);
std::vector<double> layer_norm(const std::vector<double>& x, std::int64_t n, std::int64_t h,
                               const std::vector<double>& g, const std::vector<double>& b,
                               double eps);
void activation(std::vector<double>& x, models::Activation act);

// `weights` by the names of Transformer::weights(), values in checkpoint layout. `masks`: empty
// for each layer's own mask (from the config, written here independently), else one per layer
// or one for all, evaluated with reference::visible.
TransformerResult transformer(const models::TransformerConfig& config,
                              const std::map<std::string, std::vector<double>>& weights,
                              const std::vector<std::int32_t>& token_ids,
                              const std::vector<std::int32_t>& token_types,
                              const std::vector<MaskSpec>& masks = {});

}  // namespace attnlens::reference
