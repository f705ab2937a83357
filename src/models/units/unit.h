// One unit per architecture, the way llama.cpp keeps a file per model: each owns its weight
// table (the tensors, their checkpoint layout, the role each plays) and a list of stacks, each
// stack a run of layers over one input sequence (a decoder-only model's one stack; an
// encoder-decoder's encoder, then its decoder whose cross-attention reads the encoder's output;
// a vision encoder over patch embeddings). A stack owns its embeddings, its layer function built
// from the shared blocks (blocks.h), what follows its last layer, and each layer's mask and score
// scale. forward.cpp runs a stack with run_stack(); the model's LM head reads the last stack.
//
// Adding an architecture: a file here with its StackUnit(s) and ModelUnit, an Architecture
// value, a line in units.cpp, and a tiny checkpoint and reference in tests/models/
// (docs/ARCHITECTURE.md, "How to add").
#pragma once

#include <cstdint>
#include <vector>

#include "attnlens/models/transformer.h"
#include "models/blocks.h"
#include "models/weights.h"

namespace attnlens::models {

// The layers of a stack: rows first .. first + count - 1 of the weight table's per-layer roles
// (an encoder-decoder numbers its encoder's layers first, then its decoder's).
struct LayerRange {
  std::int64_t first = 0;
  std::int64_t count = 0;
};

struct StackUnit {
  const char* name;  // what the stack is: "decoder", "encoder"
  LayerRange (*layers)(const TransformerConfig& config);
  // Which shared blocks its pass prepares: the gated MLP's gate buffer, the rotary tables.
  MlpKind mlp;
  bool rotary;
  // Causal self-attention: no position sees a later one, so a prefix's keys and values never
  // change and the stack can run one step at a time against a KV cache (kv_cache.h).
  bool causal;
  // x = the embeddings of the input tokens (at positions pass.past onwards).
  void (*embed)(ForwardPass& pass, const ForwardInputs& inputs);
  // x = layer l(x), l a row of the weight table (inside `layers`).
  void (*layer)(ForwardPass& pass, std::int64_t l);
  // After the last layer (GPT's ln_f); null for none. `hidden_after_finish`: the last hidden
  // state is x after it (GPT, llama) rather than the last layer's output (BERT).
  void (*finish)(ForwardPass& pass);
  bool hidden_after_finish;
  // A layer's own self-attention mask and the factor its scores are multiplied by.
  MaskSpec (*layer_mask)(const TransformerConfig& config, std::int64_t layer);
  float (*attention_scale)(const TransformerConfig& config, std::int64_t layer);
};

struct ModelUnit {
  const char* name;  // the model_type family: "gpt2", "gpt_neo", "bert", "llama"
  // Every tensor of a validated config, in the order the caller writes them.
  void (*add_weights)(const TransformerConfig& config, TableBuilder& table);
  // In the order they run; the last one's output feeds the LM head.
  std::vector<StackUnit> stacks;
  // The rows the LM head reads, transformed in place (BERT's MLM transform); null for none.
  // Returns the head's bias (null for none).
  const float* (*head_transform)(ForwardPass& pass, std::vector<float>& rows,
                                 std::int64_t positions);

  const StackUnit& head_stack() const { return stacks.back(); }
  // The stack whose layers include row `layer` of the weight table.
  const StackUnit& stack_of_layer(const TransformerConfig& config, std::int64_t layer) const;
};

// Runs the pass's stack over `inputs`: embed, each layer (its output checked finite), finish;
// its hidden states into the pass's outputs when asked (state 0 the embeddings', then each
// layer's in the stack's order). Leaves the stack's output in pass.x, where the LM head or a
// decoder's cross-attention (ForwardPass::encoder) reads it.
void run_stack(ForwardPass& pass, const ForwardInputs& inputs);

// The unit of an architecture (a validated config's).
const ModelUnit& unit_of(Architecture architecture);

// The units, and what several of them share.
extern const ModelUnit kGpt2Unit, kGptNeoUnit, kBertUnit, kLlamaUnit, kVitUnit, kMarianUnit;

// Every layer of the config: the one stack of a decoder-only model or an encoder.
LayerRange all_layers(const TransformerConfig& config);
// Causal, with a left window of window - 1 keys on the layers local_windows names (GPT-Neo's
// local layers, llama's sliding-window layers).
MaskSpec causal_mask(const TransformerConfig& config, std::int64_t layer);
// 1 / sqrt(head_dim): the transformers library's default score scale.
float inverse_sqrt_head_dim(const TransformerConfig& config, std::int64_t layer);
// The final norm of a pre-norm stack (GPT's ln_f, llama's norm) when the config has one.
void final_norm(ForwardPass& pass, NormKind kind);

}  // namespace attnlens::models
