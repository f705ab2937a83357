// A small GPT to train: GPT-2's blocks (pre-LN, x += attn(ln_1(x)); x += mlp(ln_2(x)); ln_f,
// which `final_norm` can leave out),
// causal attention scaled by 1/sqrt(head_dim) and divided by a temperature, learned absolute
// positions, the GELU of "gelu_new" (tanh form), the LM head tied to the token embedding, and
// the mean cross-entropy of next-token prediction as the loss. `attention_only` drops the MLP
// blocks (and ln_2), the classic setting in which induction heads form.
//
// Parameters use the names, shapes and layouts of attnlens/models' GPT-2 weight table
// (src/models/weights.cpp): "token_embedding" [vocab, width], "position_embedding"
// [context, width], "layers.L.attention_norm.weight", "layers.L.attention.qkv.weight"
// [width, 3 * width] (Conv1D, q | k | v along the output), ..., "final_norm.bias". A model's
// parameters written into a Transformer of the same config (with zero MLP weights for an
// attention-only one) give the same forward pass, bit for bit.
//
// The forward pass runs on the ops of attnlens/models (layer norm, GELU, linear layers on the
// packed panel GEMM) and attention() itself; the backward on their twins (src/training/) and
// attention_backward(). Every reduction runs in one fixed order, so the loss and the gradients
// are the same bits for any thread count.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnlens/errors.h"
#include "attnlens/kernels.h"
#include "attnlens/span.h"

namespace attnlens::training {

struct GptConfig {
  std::int64_t layers = 2;      // 1..64
  std::int64_t heads = 4;       // 1..256, dividing width
  std::int64_t width = 64;      // model width, 1..8192
  std::int64_t context = 64;    // positions, 1..8192
  std::int64_t vocab = 0;       // 1..2^20
  bool attention_only = false;  // no MLP blocks
  std::int64_t mlp_width = 0;   // 0: 4 * width
  float layer_norm_eps = 1e-5f;
  // false leaves out ln_f: the logits are the last layer's output times the tied head. With ln_f,
  // a 2-layer attention-only model on repeated random tokens flattens its logits and grows no
  // induction head in minutes, even with ln_f's gain held at 1: the normalisation itself stands
  // in the way, not its parameters (docs/benchmarks.md has the experiments).
  bool final_norm = true;
  // The token embedding's initial standard deviation (GPT-2's 0.02); in (0, 1].
  float token_embedding_std = 0.02f;
};

// One parameter tensor: where it lies in the flat array of all parameters.
struct ParameterInfo {
  std::string name;
  std::vector<std::int64_t> shape;
  std::int64_t offset = 0;  // in floats, into Gpt::parameter_values()
  std::int64_t elements = 0;
  // AdamW decays the matrices of the linear layers only: never biases, layer-norm gains and
  // offsets, or the embeddings (the token embedding is also the tied LM head).
  bool decay = false;
};

// What one forward (and backward) pass runs with.
struct ForwardSettings {
  float temperature = 1.0f;  // attention logits are divided by it; positive and finite
  std::int64_t threads = 1;  // as AttentionOptions::threads; the results do not depend on it
  const KernelSet* kernels = nullptr;  // nullptr: the fastest set compiled in
};

class Gpt {
 public:
  // Validates `config` (RangeError naming the field) and initialises the parameters from `seed`
  // as GPT-2 does: matrices and the position embedding with standard deviation 0.02 (the
  // projections into the residual stream 0.02 / sqrt(2 * layers)), the token embedding with
  // config.token_embedding_std, biases 0, layer-norm gains 1. The draws are
  // integer arithmetic, so a seed gives the same parameters on every platform.
  Gpt(const GptConfig& config, std::uint64_t seed);
  ~Gpt();
  Gpt(Gpt&&) noexcept;
  Gpt& operator=(Gpt&&) noexcept;

  const GptConfig& config() const { return config_; }
  const std::vector<ParameterInfo>& parameters() const { return infos_; }
  // Every parameter, flat, in parameters() order; written in place to load a model.
  MutableFloatView parameter_values() { return values_; }
  FloatView parameter_values() const { return values_; }
  // The gradients of the last loss() with backward = true, same layout (zero before).
  FloatView gradients() const { return gradients_; }

  // NonFiniteError naming the first tensor (and index) that holds NaN or Infinity: for
  // parameters written from outside.
  void check_parameters() const;

  // The mean cross-entropy of predicting tokens[b][t + 1] from tokens[b][0..t] for a batch of
  // `batch` sequences of T + 1 tokens each (tokens.size = batch * (T + 1), 1 <= T <= context,
  // ids < vocab). With `backward`, also fills gradients(). Bad input throws before any work,
  // naming the parameter; a loss or gradient that overflowed float32 is a NonFiniteError.
  float loss(Span<const std::int32_t> tokens, std::int64_t batch, const ForwardSettings& settings,
             bool backward);

  // Every layer's and head's attention weights for one sequence of N <= context tokens, into
  // `weights` [layers, heads, N, N] (row i of (layer, head): what token i attends to).
  void attention(Span<const std::int32_t> tokens, const ForwardSettings& settings,
                 MutableFloatView weights);

  struct Workspace;  // the activations one pass saves for its backward (src/training/)

 private:
  GptConfig config_;
  std::vector<ParameterInfo> infos_;
  std::vector<std::int64_t> role_index_;  // models::Role -> tensor, per layer (weights.h)
  std::vector<float> values_;
  std::vector<float> gradients_;
  std::unique_ptr<Workspace> workspace_;

  friend struct GptPass;
};

}  // namespace attnlens::training
