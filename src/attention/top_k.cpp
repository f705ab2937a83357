#include "top_k.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "checks.h"

namespace attnlens::detail {
namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr std::int64_t kCols = static_cast<std::int64_t>(kPanelCols);
}  // namespace

void validate_top_k(std::int64_t k, const AttentionShape& shape) {
  require_in_range(k, 0, shape.key_len, "top_k");
}

TopKSelector::TopKSelector(std::int64_t k) : k_(k) {
  for (std::vector<Entry>& heap : heaps_) heap.reserve(static_cast<std::size_t>(k));
  reset();
}

void TopKSelector::reset() noexcept {
  for (std::int64_t j = 0; j < kCols; ++j) {
    heaps_[j].clear();
    limited_[j] = false;
  }
}

void TopKSelector::collect(const float* s, std::int64_t k0, std::int64_t lo, std::int64_t hi,
                           std::int64_t rows) noexcept {
  const auto size = static_cast<std::size_t>(k_);
  for (std::int64_t j = 0; j < rows; ++j) {
    std::vector<Entry>& heap = heaps_[j];
    for (std::int64_t key = lo; key < hi; ++key) {
      const Entry e{s[(key - k0) * kCols + j], key};
      if (e.logit == kNegInf) continue;  // hidden
      if (heap.size() < size) {
        heap.push_back(e);  // within the capacity reserved: no allocation
        std::push_heap(heap.begin(), heap.end(), before);
      } else if (before(e, heap.front())) {
        std::pop_heap(heap.begin(), heap.end(), before);
        heap.back() = e;
        std::push_heap(heap.begin(), heap.end(), before);
      }
    }
  }
}

void TopKSelector::settle() noexcept {
  const auto size = static_cast<std::size_t>(k_);
  for (std::int64_t j = 0; j < kCols; ++j) {
    limited_[j] = heaps_[j].size() == size;
    if (limited_[j]) last_[j] = heaps_[j].front();
  }
}

void TopKSelector::keep(float* s, std::int64_t k0, std::int64_t lo, std::int64_t hi,
                        std::int64_t rows) const noexcept {
  for (std::int64_t j = 0; j < rows; ++j) {
    if (!limited_[j]) continue;
    const Entry last = last_[j];
    for (std::int64_t key = lo; key < hi; ++key) {
      float& x = s[(key - k0) * kCols + j];
      if (before(last, Entry{x, key})) x = kNegInf;  // after the last kept key
    }
  }
}

std::int64_t TopKSelector::bytes() const noexcept {
  return static_cast<std::int64_t>(kCols * static_cast<std::int64_t>(heaps_[0].capacity()) *
                                   static_cast<std::int64_t>(sizeof(Entry)));
}

}  // namespace attnlens::detail
