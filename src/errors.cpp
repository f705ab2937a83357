#include "attnlens/errors.h"

#include <utility>

namespace attnlens {

Error::Error(ErrorKind kind, std::string parameter, const std::string& detail)
    : std::runtime_error(parameter + ": " + detail),
      kind_(kind),
      parameter_(std::move(parameter)) {}

const char* error_kind_name(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::kInvalidArgument:
      return "invalid_argument";
    case ErrorKind::kShapeMismatch:
      return "shape_mismatch";
    case ErrorKind::kOutOfRange:
      return "out_of_range";
    case ErrorKind::kNonFinite:
      return "non_finite";
    case ErrorKind::kSizeOverflow:
      return "size_overflow";
  }
  return "unknown";
}

}  // namespace attnlens
