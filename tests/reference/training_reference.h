// The double-precision yardsticks of training (src/training/, attnlens/training/): each op's
// backward written from the calculus in plain loops, and the whole GPT's loss through the
// reference forward pass of attnlens/models (transformer_reference.h), whose central
// differences the tests compare every gradient with. Tests only; never shipped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attnlens/training/gpt.h"

namespace attnlens::reference {

// Of y = x W + b with x [rows, in], W [in, out]: dx [rows, in], dw [in, out], db [out].
struct LinearGradients {
  std::vector<double> dx, dw, db;
};
LinearGradients linear_backward(const std::vector<double>& dy, const std::vector<double>& x,
                                const std::vector<double>& w, std::int64_t rows, std::int64_t in,
                                std::int64_t out);

// Of y = layer_norm(x) * gamma + beta over rows of n.
struct LayerNormGradients {
  std::vector<double> dx, dgamma, dbeta;
};
LayerNormGradients layer_norm_backward(const std::vector<double>& dy, const std::vector<double>& x,
                                       const std::vector<double>& gamma, std::int64_t rows,
                                       std::int64_t n, double eps);

// GELU, tanh form: the value and the derivative at x.
double gelu_tanh(double x);
double gelu_tanh_slope(double x);

// The mean cross-entropy of rows of logits [rows, vocab] against targets, and its gradient
// (softmax - onehot) / rows.
double cross_entropy(const std::vector<double>& logits, const std::vector<std::int32_t>& targets,
                     std::int64_t vocab, std::vector<double>* gradient);

// A Gpt's parameters by name, in double.
std::map<std::string, std::vector<double>> gpt_weights(const training::Gpt& model);

// The loss Gpt::loss computes, from `weights` (gpt_weights' form) through the reference forward
// pass of a GPT-2 of the same config (an attention-only model as one with zero MLP weights),
// the temperature folded into the query projection.
double gpt_loss(const training::GptConfig& config,
                const std::map<std::string, std::vector<double>>& weights,
                const std::vector<std::int32_t>& tokens, std::int64_t batch, double temperature);

// Every layer's and head's attention weights [layers, heads, N, N] for one sequence, likewise.
std::vector<double> gpt_attention(const training::GptConfig& config,
                                  const std::map<std::string, std::vector<double>>& weights,
                                  const std::vector<std::int32_t>& tokens, double temperature);

}  // namespace attnlens::reference
