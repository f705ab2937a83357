// The checks every feature's validation is built from: size arithmetic that cannot overflow,
// ranges, lengths and finiteness. Each throws a typed attnlens::Error whose message starts with
// the parameter name. Depends on nothing but the public types, so any part of the core may use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

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

// Human-readable "2*3*4 = 24" for messages.
std::string product_text(std::initializer_list<std::int64_t> factors);

// require_length for a tensor of `factors` elements (already validated not to overflow); the
// message text ("q", "H*Nq*D = 2*3*4 = 24") is only formatted when the check fails, so a valid
// call formats nothing.
void require_product_length(std::size_t actual, const char* name, const char* symbols,
                            std::initializer_list<std::int64_t> factors);

// Shape sizes >= 1 and the size products fit (OverflowError otherwise).
void validate_shape(const AttentionShape& shape);

}  // namespace attnlens::detail
