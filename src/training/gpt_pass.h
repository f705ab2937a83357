// One forward (and backward) pass of a Gpt (attnlens/training/gpt.h) and the activations it
// keeps for the backward. R = batch * T rows (token-major), C = width, F = MLP width,
// B * H attention "heads" (each sequence's heads side by side, one attention() call per layer).
#pragma once

#include <cstdint>
#include <vector>

#include "attnlens/attention.h"
#include "attnlens/training/gpt.h"
#include "layer_ops.h"
#include "models/weights.h"

namespace attnlens::training {

struct Gpt::Workspace {
  std::int64_t batch = 0, t_len = 0;
  std::vector<float> x_in;           // [layers + 1][R][C]: each layer's input, then ln_f's
  std::vector<float> x_mid;          // [layers][R][C]: after the attention block (MLP models)
  std::vector<float> ln1;            // [layers][R][C]
  std::vector<float> ln2;            // [layers][R][C] (MLP models)
  std::vector<float> heads;          // [layers][3][B * H][T][d]: q, k, v
  std::vector<float> att;            // [layers][B * H][T][d]: attention's output
  std::vector<float> lse;            // [layers][B * H][T]: its row log-sum-exp
  std::vector<float> merged;         // [layers][R][C]: heads merged, the output projection's input
  std::vector<float> fc_pre;         // [layers][R][F]: GELU's input (MLP models)
  std::vector<float> fc_act;         // [layers][R][F]: GELU's output
  std::vector<float> lnf;            // [R][C]
  std::vector<float> logits;         // [R][V], then dL/dlogits
  std::vector<float> qkv;            // [R][3C] scratch
  std::vector<float> proj;           // [R][max(3C, F)] scratch
  std::vector<float> residual_grad;  // [R][C]: dL/dx of the residual stream
  std::vector<float> grad_heads;     // [3][B * H][T][d]: dq, dk, dv
  std::vector<float> pack;           // a weight as packed for one product
  models::RowPanels panels;

  void resize(const GptConfig& c, std::int64_t batch, std::int64_t t_len);
};

inline std::int64_t mlp_width_of(const GptConfig& c) {
  return c.mlp_width > 0 ? c.mlp_width : 4 * c.width;
}

// What a pass reads of the model, and the pass itself.
struct GptPass {
  Gpt& model;
  const ForwardSettings& settings;
  StepContext ctx;
  Gpt::Workspace& ws;
  std::int64_t batch, t_len, id_stride;
  const std::int32_t* ids;

  GptPass(Gpt& model, const ForwardSettings& settings, Span<const std::int32_t> tokens,
          std::int64_t batch, std::int64_t t_len, std::int64_t id_stride);

  // A parameter's values (or, for the backward, its gradient) by role; row = layer, or layers
  // for the model-wide ones.
  float* value(std::int64_t row, models::Role role) const;
  float* gradient(std::int64_t row, models::Role role) const;

  AttentionOptions attention_options() const;

  // `weights`: empty while training (streaming attention, saving each row's log-sum-exp), else
  // [layers, heads, T, T] for one sequence, where the pass stops after the last layer.
  void forward(MutableFloatView weights);
  // The mean loss over the batch; with `gradient`, logits become dL/dlogits.
  double loss(bool gradient);
  // After forward() and loss(true): every parameter's gradient.
  void backward();
};

}  // namespace attnlens::training
