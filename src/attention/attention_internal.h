// The two strategies behind attention(); inputs are validated before either runs.
#pragma once

#include "attnlens/attention.h"
#include "attnlens/kernels.h"
#include "logit_terms.h"
#include "lsh.h"
#include "mask_eval.h"
#include "validate.h"

namespace attnlens::detail {

struct Problem {
  const AttentionInputs& inputs;
  const AttentionOptions& options;
  const AttentionOutputs& outputs;
  const KernelSet& kernels;
  const MaskEvaluator& mask;
  float logit_factor;  // scale / temperature
  // True when the inputs are large enough that a logit could overflow float32; the strategies
  // then check every score tile (QueryPanel::check_finite) instead of trusting the bound.
  bool check_scores;
  // Soft cap, bias and ALiBi (terms.query_fold is what the queries are multiplied by), and
  // whether their sum could overflow: then the finished logits are checked too.
  const LogitTerms& terms;
  bool check_terms;
  const LshBuckets* lsh;  // nullptr without hashed attention
  std::int64_t top_k;     // 0: every visible key
  int threads;  // the most threads the strategy may use (resolve_threads of options.threads)
  // The unnormalised output sums up to Nk weights of at most 1 times |v|, which can overflow
  // float32 although the output itself, a weighted mean of values, cannot. When Nk * max |v|
  // could, values are packed times value_scale, a power of two (exact, so the bits are those of
  // an unscaled run), and the outputs are divided by it again; otherwise it is 1.
  float value_scale;
  float max_abs_value;  // max |v|: the outputs, means of values, are clamped to it when scaled
};

// An upper bound on |score(q, k)| for these (validated) inputs, from max |q|, |k| (found by
// validation) and the additive weights; +inf when a score's own sums could overflow float32.
double max_abs_score(const AttentionInputs& inputs, const AttentionOptions& options,
                     const InputMagnitudes& magnitudes);
// Whether a score times `factor` (what the panels fold into the queries, before log2(e)) can
// overflow float32: the common case proves it cannot and skips the checks.
bool logits_may_overflow(const AttentionInputs& inputs, const AttentionOptions& options,
                         float factor, const InputMagnitudes& magnitudes);
// scale / softcap with a soft cap, else scale / temperature: the queries' fold before log2(e).
float query_factor(const AttentionOptions& options, float scale);

// 1, or the power of two that keeps key_len * max |v| * scale within FLT_MAX / 4 (the same
// headroom as the logit bound) so that the output accumulators cannot overflow.
float value_scale_for(std::int64_t key_len, float max_abs_value);

// Default tile sizes of the streaming strategy (rows of Q, columns of K per tile): the grid
// on which whole tiles are skipped and AttentionStats counts. Work inside a tile is done per
// panel of 8 queries and narrowed to what each panel can see, so these matter little.
constexpr std::int64_t kDefaultQueryBlock = 32;
constexpr std::int64_t kDefaultKeyBlock = 64;
// The most keys one online-softmax step of the streaming strategy covers (a multiple of 4):
// larger chunks rescale the running output less often, smaller ones keep scores in L1.
constexpr std::int64_t kStreamingChunk = 128;
// The tile width the materialized strategy reports its (unskippable) tiles in.
constexpr std::int64_t kMaterializedKeyBlock = 64;

AttentionStats run_materialized(const Problem& problem);
AttentionStats run_streaming(const Problem& problem);

}  // namespace attnlens::detail
