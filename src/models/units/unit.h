// One unit per architecture, the way llama.cpp keeps a file per model: each owns its weight
// table (the tensors, their checkpoint layout, the role each plays), its embeddings, its layer
// function built from the shared blocks (blocks.h), what follows the last layer, its LM head's
// transform, and each layer's mask and score scale. forward.cpp runs whichever unit the config
// names over one stack of layers; a model with more stacks (an encoder-decoder's encoder and
// decoder with cross-attention, a vision encoder's patch embedding) is a unit whose functions
// run each stack in turn.
//
// Adding an architecture: a file here with its ModelUnit, an Architecture value, a line in
// units.cpp, and a tiny checkpoint and reference in tests/models/ (docs/ARCHITECTURE.md, "How to
// add").
#pragma once

#include <cstdint>
#include <vector>

#include "attnlens/models/transformer.h"
#include "models/blocks.h"
#include "models/weights.h"

namespace attnlens::models {

struct ModelUnit {
  const char* name;  // the model_type family: "gpt2", "gpt_neo", "bert", "llama"
  // Which shared blocks the pass prepares: the gated MLP's gate buffer, the rotary tables.
  MlpKind mlp;
  bool rotary;
  // Every tensor of a validated config, in the order the caller writes them.
  void (*add_weights)(const TransformerConfig& config, TableBuilder& table);
  // x = the embeddings of the input tokens.
  void (*embed)(ForwardPass& pass, const ForwardInputs& inputs);
  // x = layer l(x).
  void (*layer)(ForwardPass& pass, std::int64_t l);
  // After the last layer (GPT's ln_f); null for none. `hidden_after_finish`: the last hidden
  // state is x after it (GPT, llama) rather than the last layer's output (BERT).
  void (*finish)(ForwardPass& pass);
  bool hidden_after_finish;
  // The rows the LM head reads, transformed in place (BERT's MLM transform); null for none.
  // Returns the head's bias (null for none).
  const float* (*head_transform)(ForwardPass& pass, std::vector<float>& rows,
                                 std::int64_t positions);
  // A layer's own mask and the factor its scores are multiplied by.
  MaskSpec (*layer_mask)(const TransformerConfig& config, std::int64_t layer);
  float (*attention_scale)(const TransformerConfig& config, std::int64_t layer);
};

// The unit of an architecture (a validated config's).
const ModelUnit& unit_of(Architecture architecture);

// The units, and what several of them share.
extern const ModelUnit kGpt2Unit, kGptNeoUnit, kBertUnit, kLlamaUnit;

// Causal, with a left window of window - 1 keys on the layers local_windows names (GPT-Neo's
// local layers, llama's sliding-window layers).
MaskSpec causal_mask(const TransformerConfig& config, std::int64_t layer);
// 1 / sqrt(head_dim): the transformers library's default score scale.
float inverse_sqrt_head_dim(const TransformerConfig& config, std::int64_t layer);
// The final norm of a pre-norm stack (GPT's ln_f, llama's norm) when the config has one.
void final_norm(ForwardPass& pass, NormKind kind);

}  // namespace attnlens::models
