// The double-precision yardstick of attention_backward() (attnlens/training/attention_backward.h):
// plain loops written from the calculus of softmax attention, sharing nothing with the kernels
// (not the log-sum-exp shortcut, not rowsum(dO * O), not the mask evaluator). Tests, the fuzzer
// and benchmarks only; never shipped.
#pragma once

#include <vector>

#include "attnlens/attention.h"

namespace attnlens::reference {

struct BackwardResult {
  std::vector<double> output;         // [H, Nq, Dv]
  std::vector<double> row_logsumexp;  // [H, Nq]; -inf for a row that sees no key
  std::vector<double> dq, dk, dv;     // of L = sum(d_output * output)
};

// Scaled dot, dot and cosine scores (the ones with a backward); inputs are assumed valid.
BackwardResult attention_backward(const AttentionInputs& inputs, FloatView d_output,
                                  const AttentionOptions& options);

// attention()'s output [H, Nq, Dv] from double inputs (q [H, Nq, D], k, v as attention.h lays
// them out): the function whose central differences the tests compare the gradients with.
std::vector<double> attention_output(const AttentionShape& shape, const AttentionOptions& options,
                                     const std::vector<double>& q, const std::vector<double>& k,
                                     const std::vector<double>& v);

}  // namespace attnlens::reference
