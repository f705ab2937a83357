// Naive double-precision attention, written straight from the formulas in attention.h, mask.h
// and multihead.h with Eigen, sharing no code with the kernels it checks. Tests and benchmarks
// compare every kernel and strategy against it. Not part of the shipped library.
#pragma once

#include <cstdint>
#include <vector>

#include "attnlens/attention.h"
#include "attnlens/multihead.h"

namespace attnlens::reference {

// Visibility of key j to query i in head h, from the documented mask formula (independent of
// the library's own mask evaluator).
bool visible(const MaskSpec& mask, const AttentionShape& shape, std::int64_t head,
             std::int64_t query, std::int64_t key);

struct Result {
  std::vector<double> output;   // [H, Nq, Dv]
  std::vector<double> weights;  // [H, Nq, Nk]
  std::vector<double> scores;   // [H, Nq, Nk] raw score function values
};

// Same inputs and options as attnlens::attention (strategy and kernels are ignored), the terms,
// top-k and hashing of reference/terms.h included. Inputs are assumed valid.
Result attention(const AttentionInputs& inputs, const AttentionOptions& options);

struct MultiHeadResult {
  std::vector<double> output;   // [Nq, out_dim]
  std::vector<double> weights;  // [H, Nq, Nk]
  std::vector<double> q, k, v;  // projected, head-major
};

// options.lsh is ignored (see reference.cpp).
MultiHeadResult multi_head_attention(const MultiHeadInputs& inputs,
                                     const AttentionOptions& options);

// Reference versions of the kernel-level operations in kernels.h, in double. c_out has C's own
// layout [m, ldc]: columns n..ldc are copied from c_in, so a test can check that a kernel never
// writes past n.
void gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
          const float* b, std::size_t ldb, const float* c_in, std::size_t ldc, bool accumulate,
          std::vector<double>& c_out);

}  // namespace attnlens::reference
