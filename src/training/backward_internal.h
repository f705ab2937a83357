// The pieces of attention_backward() (attnlens/training/attention_backward.h) share one validated
// problem; the inputs are checked before any of them runs.
#pragma once

#include <cstdint>

#include "attention/mask_eval.h"
#include "attnlens/kernels.h"
#include "attnlens/training/attention_backward.h"
#include "validate.h"

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

// Every argument of attention_backward(), before anything runs (validate_backward.cpp); returns
// max |q| and max |k| for the overflow bound.
InputMagnitudes validate_backward(const AttentionBackwardInputs& inputs,
                                  const AttentionOptions& options,
                                  const AttentionGradients& gradients);
// InvalidArgumentError naming "score" for the additive score, which has no backward here.
void require_differentiable_score(const AttentionOptions& options);
// InvalidArgumentError naming the option (softcap, bias, alibi_slopes, top_k, lsh.buckets,
// kv_capacity) that the backward does not differentiate.
void require_plain_logits(const AttentionInputs& inputs, const AttentionOptions& options);

// The most queries one step of a key panel covers (a multiple of 4): the reduction length of
// dV^T += dO^T P and dK^T += Q^T dS, and the size of the per-step scratch.
constexpr std::int64_t kBackwardChunk = 128;
// Key panels whose share of dQ += dS K is one panel GEMM: 8 panels, 64 keys side by side in its
// A panels (their dS transposed, kDqKeys * 4 floats per group of 4 queries) and its B (their key
// rows, [D8 / 8][kDqKeys][8]), so that product reduces over 64 keys, not 8.
constexpr std::int64_t kDqKeys = 64;
constexpr std::int64_t kDqPanels = kDqKeys / static_cast<std::int64_t>(kPanelCols);
constexpr std::int64_t kDqStride = kDqKeys * static_cast<std::int64_t>(kPanelRows);
// c_scale of a panel GEMM that accumulates: C = C * 1 + A B.
inline constexpr float kKeep[kPanelCols] = {1, 1, 1, 1, 1, 1, 1, 1};

// Keys per group: the unit of work a thread takes (with its own partial dQ). Fixed by the shape
// alone, never by the thread count, so that the order of every sum is too.
constexpr std::int64_t kKeysPerGroup = 256;

}  // namespace attnlens::detail
