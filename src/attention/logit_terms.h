// The terms between a panel's scores and its softmax (attention.h): the soft cap, the caller's
// bias and ALiBi, applied to a chunk of scores held [key][query] (QueryPanel, the backward's
// KeyPanel holds [query][key]), and the bound that says whether their sum could overflow.
//
// The panels fold a factor into the queries so that one pass finishes the logits (base 2, see
// base2_logit_factor): without a soft cap the fold is scale / temperature (times log2(e)) and the
// pass adds bias_factor * (bias + alibi); with one the fold is scale / softcap, so the scores
// arrive as s / softcap, and the pass makes them softcap_factor * tanh(x) + bias_factor * (...),
// where softcap_factor = softcap * log2(e) / temperature and bias_factor = log2(e) / temperature.
#pragma once

#include <cstdint>

#include "attnlens/attention.h"
#include "attnlens/kernels.h"

namespace attnlens::detail {

// The online-softmax kernel works in base 2 (attnlens/kernels.h), so the panels fold log2(e)
// into the logit factor: one rounding of the product, one multiplication fewer per score.
inline float base2_logit_factor(float logit_factor) {
  return static_cast<float>(static_cast<double>(logit_factor) * 1.4426950408889634);
}

struct LogitTerms {
  float query_fold = 0.0f;      // what the queries are multiplied by (see above)
  float softcap_factor = 0.0f;  // 0 without a soft cap
  float bias_factor = 0.0f;
  const float* bias = nullptr;
  std::int64_t bias_head_stride = 0;  // Nq * Nk, or 0 when one [Nq, Nk] matrix serves every head
  const float* slopes = nullptr;      // ALiBi's, [H]
  std::int64_t query_offset = 0, query_len = 0, key_len = 0;

  bool additive() const { return bias != nullptr || slopes != nullptr; }
  bool any() const { return softcap_factor != 0.0f || additive(); }

  // Finishes the logits of queries q0 .. q0 + rows of head h against keys [k0, k1) (k1 <= Nk):
  // element (query q0 + j, key k) is s[(k - k0) * key_step + j * query_step] (QueryPanel: key_step
  // 8, query_step 1). Elements outside are left alone (the callers mask them).
  void apply(const KernelSet& kernels, std::int64_t h, std::int64_t q0, std::int64_t rows,
             std::int64_t k0, std::int64_t k1, std::int64_t key_step, std::int64_t query_step,
             float* s) const noexcept;
};

// The terms of a validated call; `scale` is the resolved scale of the score.
LogitTerms logit_terms(const AttentionShape& shape, const AttentionOptions& options, float scale);

// Sizes and ranges of softcap, bias and alibi_slopes (RangeError / ShapeError / NonFiniteError
// naming them); returns the largest bias and the largest |slope| for the overflow bound (0 for
// none). -inf in the bias hides a key; +inf and NaN are errors.
struct TermMagnitudes {
  float bias = 0.0f;   // largest finite bias (0 when none is positive)
  float slope = 0.0f;  // largest |slope|
};
TermMagnitudes validate_logit_terms(const AttentionShape& shape, const AttentionOptions& options);

// Whether bias and ALiBi could carry a logit past FLT_MAX / 4 (the scores' own bound is
// logits_may_overflow's): the strategies then check the finished logits too.
bool terms_may_overflow(const AttentionShape& shape, const AttentionOptions& options, float scale,
                        double max_abs_score, const TermMagnitudes& magnitudes);

}  // namespace attnlens::detail
