// Typed errors raised by the attnlens core.
//
// Every check that rejects caller input throws one of these, with a message that starts with the
// name of the offending parameter. The bindings map each kind to a JavaScript error class, so the
// kind is part of the public contract.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace attnlens {

enum class ErrorKind {
  kInvalidArgument,  // a value of the wrong kind (e.g. additive weights missing)
  kShapeMismatch,    // a buffer length disagrees with the declared shape
  kOutOfRange,       // a number outside its allowed range (zero sizes, window, temperature)
  kNonFinite,        // NaN or Infinity inside an input tensor, or an overflowing result
  kSizeOverflow,     // a size product does not fit in memory or in 64 bits
};

// Base class; `parameter()` names the argument at fault ("q", "window.before", ...).
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string parameter, const std::string& detail);
  ErrorKind kind() const noexcept { return kind_; }
  const std::string& parameter() const noexcept { return parameter_; }

 private:
  ErrorKind kind_;
  std::string parameter_;
};

class InvalidArgumentError : public Error {
 public:
  InvalidArgumentError(std::string parameter, const std::string& detail)
      : Error(ErrorKind::kInvalidArgument, std::move(parameter), detail) {}
};

class ShapeError : public Error {
 public:
  ShapeError(std::string parameter, const std::string& detail)
      : Error(ErrorKind::kShapeMismatch, std::move(parameter), detail) {}
};

class RangeError : public Error {
 public:
  RangeError(std::string parameter, const std::string& detail)
      : Error(ErrorKind::kOutOfRange, std::move(parameter), detail) {}
};

class NonFiniteError : public Error {
 public:
  NonFiniteError(std::string parameter, const std::string& detail)
      : Error(ErrorKind::kNonFinite, std::move(parameter), detail) {}
};

class OverflowError : public Error {
 public:
  OverflowError(std::string parameter, const std::string& detail)
      : Error(ErrorKind::kSizeOverflow, std::move(parameter), detail) {}
};

// "invalid_argument", "shape_mismatch", ...: stable names for bindings and logs.
const char* error_kind_name(ErrorKind kind) noexcept;

}  // namespace attnlens
