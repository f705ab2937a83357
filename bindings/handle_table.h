// What JavaScript holds by handle (models, trainers): handles are small integers (index + 1)
// looked up in a table, never pointers, so a stale or made-up handle is an error value, not
// undefined behaviour. A disposed object leaves an empty slot: handles are never reused.
#pragma once

#include <cmath>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "attnlens/errors.h"

namespace attnlens_bindings {

template <typename T>
class HandleTable {
 public:
  // `what` names the objects in errors ("model": "no such model (it was disposed)").
  explicit HandleTable(const char* what) : what_(what) {}

  double add(std::unique_ptr<T> object) {
    objects_.push_back(std::move(object));
    return static_cast<double>(objects_.size());
  }

  T& get(double handle) { return *slot(handle); }

  void remove(double handle) { slot(handle).reset(); }

 private:
  std::unique_ptr<T>& slot(double handle) {
    const double index = handle - 1;
    if (!(index >= 0 && index < static_cast<double>(objects_.size())) ||
        index != std::trunc(index) || !objects_[static_cast<std::size_t>(index)]) {
      throw attnlens::InvalidArgumentError(what_,
                                           std::string("no such ") + what_ + " (it was disposed)");
    }
    return objects_[static_cast<std::size_t>(index)];
  }

  const char* what_;
  std::vector<std::unique_ptr<T>> objects_;
};

}  // namespace attnlens_bindings
