// Dynamic sparse attention (AttentionOptions::top_k): each query keeps its k largest logits among
// the keys it may see and hides the rest. For one panel of 8 queries: collect() reads the
// finished, masked logits of a chunk ([key][8], as QueryPanel holds them), settle() fixes each
// query's last kept (logit, key), keep() hides what comes after it.
//
// The order is logit descending, then key index ascending: equal logits go to the lower key, so
// exactly k keys are kept (fewer when fewer are visible) and the choice does not depend on how
// the keys were split into chunks. Logits are the same bits in both strategies (every score is
// one dot product in a fixed order), so materialized and streaming keep the same keys; only a
// materialized call that returns raw scores scales them after the product, so there logits that
// differ by a rounding may be kept the other way.
#pragma once

#include <cstdint>
#include <vector>

#include "attnlens/attention.h"
#include "attnlens/kernels.h"

namespace attnlens::detail {

// RangeError naming top_k unless 0 (off) <= k <= key_len.
void validate_top_k(std::int64_t k, const AttentionShape& shape);

class TopKSelector {
 public:
  explicit TopKSelector(std::int64_t k);

  void reset() noexcept;
  // Keys [lo, hi) of the chunk starting at key k0, queries j < rows.
  void collect(const float* s, std::int64_t k0, std::int64_t lo, std::int64_t hi,
               std::int64_t rows) noexcept;
  void settle() noexcept;
  void keep(float* s, std::int64_t k0, std::int64_t lo, std::int64_t hi,
            std::int64_t rows) const noexcept;

  std::int64_t bytes() const noexcept;

 private:
  struct Entry {
    float logit;
    std::int64_t key;
  };
  // a comes before b in the order of the kept keys.
  static bool before(const Entry& a, const Entry& b) noexcept {
    return a.logit > b.logit || (a.logit == b.logit && a.key < b.key);
  }

  std::int64_t k_;
  std::vector<Entry> heaps_[kPanelCols];  // the best k so far; front: the last of them
  Entry last_[kPanelCols];                // after settle(): the last key each query keeps
  bool limited_[kPanelCols];              // false: the query sees at most k keys, all kept
};

}  // namespace attnlens::detail
