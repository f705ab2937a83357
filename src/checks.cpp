#include "checks.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "attnlens/errors.h"

namespace attnlens::detail {

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw OverflowError(
        what, "size product " + std::to_string(a) + "*" + std::to_string(b) + " overflows 64 bits");
  }
  return r;
}

std::size_t to_size(std::int64_t count, std::size_t element_bytes, const char* what) {
  const auto max_elems =
      static_cast<std::uint64_t>(std::numeric_limits<std::size_t>::max() / 2) / element_bytes;
  if (count < 0 || static_cast<std::uint64_t>(count) > max_elems) {
    throw OverflowError(what, std::to_string(count) + " elements of " +
                                  std::to_string(element_bytes) +
                                  " bytes do not fit in this platform's address space");
  }
  return static_cast<std::size_t>(count);
}

void require_in_range(std::int64_t value, std::int64_t lo, std::int64_t hi, const char* name) {
  if (value < lo || value > hi) {
    throw RangeError(name, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                               ", got " + std::to_string(value));
  }
}

void require_length(std::size_t actual, std::int64_t expected, const char* name,
                    const std::string& formula) {
  if (static_cast<std::uint64_t>(actual) != static_cast<std::uint64_t>(expected)) {
    throw ShapeError(name, "expected " + formula + " elements, got " + std::to_string(actual));
  }
}

std::uint32_t largest_abs_bits(FloatView values) {
  std::uint32_t largest = 0;
  for (std::size_t i = 0; i < values.size; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &values.data[i], sizeof bits);
    bits &= 0x7fffffffu;
    largest = bits > largest ? bits : largest;
  }
  return largest;
}

namespace {
float float_from_bits(std::uint32_t bits) {
  float result;
  std::memcpy(&result, &bits, sizeof result);
  return result;
}
}  // namespace

float max_abs(FloatView values) { return float_from_bits(largest_abs_bits(values)); }

float require_finite(FloatView values, const char* name) {
  // One branch-free sweep (Inf and NaN patterns exceed every finite one); the exact index is
  // looked for only when something is wrong.
  const std::uint32_t largest = largest_abs_bits(values);
  if (largest < 0x7f800000u) return float_from_bits(largest);
  for (std::size_t i = 0; i < values.size; ++i) {
    const float x = values[i];
    if (!std::isfinite(x)) {
      const char* what = std::isnan(x) ? "NaN" : (x > 0 ? "+Infinity" : "-Infinity");
      throw NonFiniteError(name, std::string(name) + "[" + std::to_string(i) + "] is " + what +
                                     "; inputs must be finite");
    }
  }
  return 0.0f;  // not reached: some value was not finite
}

void require_product_length(std::size_t actual, const char* name, const char* symbols,
                            std::initializer_list<std::int64_t> factors) {
  std::int64_t expected = 1;
  for (std::int64_t f : factors) expected *= f;
  if (static_cast<std::uint64_t>(actual) != static_cast<std::uint64_t>(expected)) {
    require_length(actual, expected, name, std::string(symbols) + " = " + product_text(factors));
  }
}

// Built with std::to_string rather than an ostringstream: streams pull libc++'s locale and
// iostream machinery into the wasm module (about 100 KiB, a third of it).
std::string product_text(std::initializer_list<std::int64_t> factors) {
  std::string s;
  std::int64_t p = 1;
  for (auto f : factors) {
    if (!s.empty()) s += '*';
    s += std::to_string(f);
    p *= f;
  }
  if (factors.size() > 1) s += " = " + std::to_string(p);
  return s;
}

void validate_shape(const AttentionShape& shape) {
  struct Dim {
    std::int64_t value;
    const char* name;
  };
  for (const Dim& d :
       {Dim{shape.heads, "heads"}, Dim{shape.query_len, "query_len"}, Dim{shape.key_len, "key_len"},
        Dim{shape.head_dim, "head_dim"}, Dim{shape.value_dim, "value_dim"}}) {
    if (d.value < 1) {
      throw RangeError(d.name, "must be at least 1, got " + std::to_string(d.value));
    }
  }
  if (shape.kv_heads < 0 || shape.kv_heads > shape.heads ||
      (shape.kv_heads > 0 && shape.heads % shape.kv_heads != 0)) {
    throw RangeError("kv_heads", "must be 0 (as many as heads) or a divisor of heads = " +
                                     std::to_string(shape.heads) + ", got " +
                                     std::to_string(shape.kv_heads));
  }
  // Every buffer size the call can touch, checked once so later arithmetic cannot overflow.
  const std::int64_t hq = checked_mul(shape.heads, shape.query_len, "heads*query_len");
  const std::int64_t hk = checked_mul(kv_head_count(shape), shape.key_len, "kv_heads*key_len");
  // The weight matrix need only count in 64 bits (tile and flop counts): the streaming strategy
  // never forms it, so it may exceed the address space (N = 8192, H = 8 in wasm32). Where it is
  // formed (weights or scores requested, a materialized head) its size is checked there.
  checked_mul(hq, shape.key_len, "heads*query_len*key_len");
  to_size(checked_mul(hq, shape.head_dim, "heads*query_len*head_dim"), sizeof(float),
          "heads*query_len*head_dim");
  to_size(checked_mul(hq, shape.value_dim, "heads*query_len*value_dim"), sizeof(float),
          "heads*query_len*value_dim");
  to_size(checked_mul(hk, shape.head_dim, "kv_heads*key_len*head_dim"), sizeof(float),
          "kv_heads*key_len*head_dim");
  to_size(checked_mul(hk, shape.value_dim, "kv_heads*key_len*value_dim"), sizeof(float),
          "kv_heads*key_len*value_dim");
}

}  // namespace attnlens::detail
