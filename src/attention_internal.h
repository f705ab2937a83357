// The two strategies behind attention(); inputs are validated before either runs.
#pragma once

#include "attnlens/attention.h"
#include "attnlens/kernels.h"
#include "mask_eval.h"

namespace attnlens::detail {

struct Problem {
  const AttentionInputs& inputs;
  const AttentionOptions& options;
  const AttentionOutputs& outputs;
  const KernelSet& kernels;
  const MaskEvaluator& mask;
  float logit_factor;  // scale / temperature
  // True when the inputs are large enough that a logit could overflow float32; the strategies
  // then check every score tile (require_finite_scores) instead of trusting the bound.
  bool check_scores;
};

// NonFiniteError naming the first non-finite logit of a [rows, width] tile at (q0, k0).
void require_finite_scores(const float* s, std::int64_t rows, std::int64_t width, std::size_t lds,
                           std::int64_t head, std::int64_t q0, std::int64_t k0);

// Whether a logit can overflow float32 for these (validated) inputs, from max |q|, |k| and the
// weights: the common case proves it cannot and skips the per-tile checks.
bool logits_may_overflow(const AttentionInputs& inputs, const AttentionOptions& options,
                         float logit_factor);

// Default tile sizes of the streaming strategy (rows of Q, columns of K per tile).
constexpr std::int64_t kDefaultQueryBlock = 32;
constexpr std::int64_t kDefaultKeyBlock = 64;
// Key tile width the materialized strategy packs keys in.
constexpr std::int64_t kMaterializedKeyBlock = 64;

AttentionStats run_materialized(const Problem& problem);
AttentionStats run_streaming(const Problem& problem);

}  // namespace attnlens::detail
