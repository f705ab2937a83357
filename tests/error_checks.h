// What every error test checks of a rejected call: the documented Error subclass and kind, a
// parameter naming the argument at fault, and a message that starts with it.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <limits>
#include <string>

#include "attnlens/errors.h"

namespace attnlens_test {

// The values the finiteness checks must catch.
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

template <typename E>
constexpr attnlens::ErrorKind kind_of();
template <>
constexpr attnlens::ErrorKind kind_of<attnlens::InvalidArgumentError>() {
  return attnlens::ErrorKind::kInvalidArgument;
}
template <>
constexpr attnlens::ErrorKind kind_of<attnlens::ShapeError>() {
  return attnlens::ErrorKind::kShapeMismatch;
}
template <>
constexpr attnlens::ErrorKind kind_of<attnlens::RangeError>() {
  return attnlens::ErrorKind::kOutOfRange;
}
template <>
constexpr attnlens::ErrorKind kind_of<attnlens::NonFiniteError>() {
  return attnlens::ErrorKind::kNonFinite;
}
template <>
constexpr attnlens::ErrorKind kind_of<attnlens::OverflowError>() {
  return attnlens::ErrorKind::kSizeOverflow;
}

inline bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The parameter names `expected` when it is exactly that, a dotted path ending in it
// ("window.before" names "before"), or a size product listing it ("heads*query_len").
inline bool names_parameter(const std::string& parameter, const std::string& expected) {
  if (parameter == expected || ends_with(parameter, "." + expected)) return true;
  std::size_t start = 0;
  while (start <= parameter.size()) {
    const std::size_t end = std::min(parameter.find('*', start), parameter.size());
    if (parameter.substr(start, end - start) == expected) return true;
    start = end + 1;
  }
  return false;
}

// `call` must throw E whose parameter() names `parameter`, whose what() starts with that
// parameter and contains `message_part` (when given).
template <typename E, typename Call>
void check_error(Call&& call, const std::string& parameter, const std::string& message_part = "") {
  INFO("expected " << attnlens::error_kind_name(kind_of<E>()) << " naming \"" << parameter << "\"");
  REQUIRE_THROWS_AS(call(), E);
  try {
    call();
  } catch (const E& e) {
    const std::string what = e.what();
    INFO("what(): \"" << what << "\", parameter(): \"" << e.parameter() << "\"");
    CHECK(e.kind() == kind_of<E>());
    CHECK(names_parameter(e.parameter(), parameter));
    CHECK(what.rfind(e.parameter(), 0) == 0);
    if (!message_part.empty()) CHECK(what.find(message_part) != std::string::npos);
  }
}

// For errors whose parameter is not one field (a size product, an overflowing result): `call`
// must throw E with some parameter that its message starts with.
template <typename E, typename Call>
void check_error_of_kind(Call&& call) {
  REQUIRE_THROWS_AS(call(), E);
  try {
    call();
  } catch (const E& e) {
    INFO("what(): \"" << e.what() << "\"");
    CHECK(e.kind() == kind_of<E>());
    CHECK_FALSE(e.parameter().empty());
    CHECK(std::string(e.what()).rfind(e.parameter(), 0) == 0);
  }
}

}  // namespace attnlens_test
