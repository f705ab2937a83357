// The pieces of attention_backward() (attnlens/training/attention_backward.h) share one validated
// problem; the inputs are checked before any of them runs.
#pragma once

#include <cstdint>

#include "attnlens/kernels.h"
#include "attnlens/training/attention_backward.h"
#include "mask_eval.h"

namespace attnlens::detail {

struct BackwardProblem {
  const AttentionBackwardInputs& inputs;
  const AttentionOptions& options;
  const AttentionGradients& gradients;
  const KernelSet& kernels;
  const MaskEvaluator& mask;
  float logit_factor;  // scale / temperature
  // True when a logit could overflow float32 (logits_may_overflow): every score tile is then
  // checked, as in the forward.
  bool check_scores;
  int threads;               // resolve_threads of options.threads
  std::int64_t query_block;  // the forward's tile grid (query blocks x key tiles), resolved
  std::int64_t key_block;
};

// The most queries one step of a key panel covers (a multiple of 4): the reduction length of
// dV^T += dO^T P and dK^T += Q^T dS, and the size of the per-step scratch.
constexpr std::int64_t kBackwardChunk = 128;
// Keys per group: the unit of work a thread takes (with its own partial dQ). Fixed by the shape
// alone, never by the thread count, so that the order of every sum is too.
constexpr std::int64_t kKeysPerGroup = 256;

}  // namespace attnlens::detail
