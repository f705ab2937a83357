// Argument checks shared by every entry point. Each throws a typed attnlens::Error whose
// message starts with the parameter name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "attention/logit_terms.h"
#include "attnlens/attention.h"
#include "attnlens/span.h"

namespace attnlens::detail {

// a * b, or OverflowError naming `what` when it does not fit in int64.
std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what);

// Converts an element count to size_t, or OverflowError if it exceeds this platform's memory
// (on wasm32 that is 4 GiB of floats at most).
std::size_t to_size(std::int64_t count, std::size_t element_bytes, const char* what);

// RangeError unless lo <= value <= hi.
void require_in_range(std::int64_t value, std::int64_t lo, std::int64_t hi, const char* name);

// ShapeError unless `actual == expected`; `formula` explains the expectation ("H*Nq*D").
void require_length(std::size_t actual, std::int64_t expected, const char* name,
                    const std::string& formula);

// The largest sign-cleared bit pattern of `values` (0 for none): for non-negative floats integer
// order is float order, so this is max |x| when all are finite, and an integer max reduction
// vectorises where a float max (with its NaN rules) does not. Inf and NaN exceed every finite one.
std::uint32_t largest_abs_bits(FloatView values);
// max |x| as a float (Inf or a NaN pattern when some value is not finite).
float max_abs(FloatView values);

// NonFiniteError naming the first NaN/Inf element of `values`; otherwise max |x| over them
// (0 for none), which the same pass yields for free.
float require_finite(FloatView values, const char* name);

// Shape sizes >= 1 and the size products fit (OverflowError otherwise).
void validate_shape(const AttentionShape& shape);

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

// The mask alone against a shape (also used by mask_matrix).
void validate_mask(const MaskSpec& mask, const AttentionShape& shape);

// Score, scale, temperature, tile sizes, threads, additive weights, strategy, top_k and lsh (the
// logit terms: validate_logit_terms).
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

// Human-readable "2*3*4 = 24" for messages.
std::string product_text(std::initializer_list<std::int64_t> factors);

// require_length for a tensor of `factors` elements (already validated not to overflow); the
// message text ("q", "H*Nq*D = 2*3*4 = 24") is only formatted when the check fails, so a valid
// call formats nothing.
void require_product_length(std::size_t actual, const char* name, const char* symbols,
                            std::initializer_list<std::int64_t> factors);

}  // namespace attnlens::detail
