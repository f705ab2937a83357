// The argument checks of a whole attention call. Each throws a typed attnlens::Error whose message
// starts with the parameter name. The checks of one feature's options live with the feature
// (validate_logit_terms, validate_mask, validate_top_k, validate_lsh); validate_attention calls
// them in a fixed order. The checks they are built from are in checks.h.
#pragma once

#include <cstdint>

#include "attention/logit_terms.h"
#include "attnlens/attention.h"
#include "attnlens/span.h"
#include "checks.h"

namespace attnlens::detail {

// The whole attention call: shapes, buffers, options, mask, finiteness. Returns max |q|,
// max |k| and max |v|, found while checking finiteness, for the overflow bounds.
struct InputMagnitudes {
  float q = 0.0f;
  float k = 0.0f;
  float v = 0.0f;
  TermMagnitudes terms;  // the largest bias and ALiBi slope
};
InputMagnitudes validate_attention(const AttentionInputs& inputs, const AttentionOptions& options,
                                   const AttentionOutputs& outputs);

// Score, scale, temperature, tile sizes, threads, additive weights, strategy, top_k
// (validate_top_k) and lsh (validate_lsh). The mask and the logit terms are checked after them, by
// validate_attention.
void validate_options(const AttentionShape& shape, const AttentionOptions& options);

// The rows of k and v a call reads: Nk of kv_capacity per K/V head (kv_capacity 0: Nk).
std::int64_t kv_rows_per_head(const AttentionInputs& inputs);
// max |x| over the first `rows` of every `capacity` rows of `width` values of x, or
// NonFiniteError naming `name` and the first bad index.
float require_finite_rows(FloatView x, std::int64_t heads, std::int64_t capacity, std::int64_t rows,
                          std::int64_t width, const char* name);

// Finite inputs can still overflow float32 inside a product: NonFiniteError naming `name`, the
// head and the row (`row_name`: "query", "key") of the first non-finite value of a result laid
// out [H, rows_per_head, row_len], instead of handing back NaN or Infinity. `computation` starts
// the message ("attention").
void require_finite_result(FloatView values, std::int64_t rows_per_head, std::int64_t row_len,
                           const char* name, const char* row_name, const char* computation);

// NonFiniteError("scores", ...) for the logit of (query, key) in `head` that overflowed float32.
[[noreturn]] void throw_logit_overflow(std::int64_t head, std::int64_t query, std::int64_t key);

}  // namespace attnlens::detail
