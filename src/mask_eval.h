// Evaluates a validated MaskSpec: per-element visibility for masking partial tiles, and whole-
// tile answers so the streaming kernel can skip what a mask removes and leave unmasked what it
// keeps entirely.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "attnlens/attention.h"
#include "attnlens/mask.h"

namespace attnlens::detail {

struct KeyRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;  // exclusive; empty when end <= begin
};

class MaskEvaluator {
 public:
  // `mask` must already be validated against `shape`; `mask` must outlive the evaluator.
  MaskEvaluator(const MaskSpec& mask, const AttentionShape& shape);

  bool restricts_nothing() const { return restricts_nothing_; }

  bool visible(std::int64_t head, std::int64_t query, std::int64_t key) const {
    if (key >= key_limit(head)) return false;
    if (key_valid_ && !key_valid_[key]) return false;
    if (custom_ && !custom_[query * key_len_ + key]) return false;
    if (causal_ && key > query) return false;
    if (is_global(query) || is_global(key)) return true;
    if (windowed_) {
      const std::int64_t delta = key - query;
      if (delta % dilation_ != 0) return false;
      const std::int64_t steps = delta / dilation_;
      if (steps < -before_ || steps > after_) return false;
    }
    switch (sparse_) {
      case SparsePattern::kNone:
        break;
      case SparsePattern::kStrided: {
        const std::int64_t d = query - key;
        if (!(d < stride_ && -d < stride_) && d % stride_ != 0) return false;
        break;
      }
      case SparsePattern::kFixed:
        if (query / stride_ != key / stride_ && key % stride_ < stride_ - summary_) return false;
        break;
    }
    return true;
  }

  // Keys beyond this are padding for `head`.
  std::int64_t key_limit(std::int64_t head) const {
    return key_lengths_ ? std::min<std::int64_t>(key_lengths_[head], key_len_) : key_len_;
  }

  // A superset of the keys visible to any query in [q0, q1) of `head`: the band that causal,
  // window and key length allow, widened to everything when a global query or key is present
  // (global_keys_in answers the latter per tile).
  KeyRange band(std::int64_t head, std::int64_t q0, std::int64_t q1) const noexcept;

  // The keys any query in [q0, q1) could see at all, ignoring the window (for global queries).
  KeyRange reachable(std::int64_t head, std::int64_t q0, std::int64_t q1) const noexcept;

  bool any_global_query(std::int64_t q0, std::int64_t q1) const { return count_global(q0, q1) > 0; }
  bool any_global_key(std::int64_t k0, std::int64_t k1) const { return count_global(k0, k1) > 0; }
  bool has_global_tokens() const { return !global_prefix_.empty() && global_prefix_.back() > 0; }

  // True when each query's visible keys form one contiguous range (causal, an undilated window
  // and key lengths only), which row_range() then gives; masking a block is then a fill outside
  // that range instead of a visible() call per element.
  bool rows_are_ranges() const {
    return !key_valid_ && !custom_ && sparse_ == SparsePattern::kNone &&
           (!windowed_ || dilation_ == 1) && global_flags_.empty();
  }
  KeyRange row_range(std::int64_t head, std::int64_t query) const {
    KeyRange r{0, key_limit(head)};
    if (causal_) r.end = std::min(r.end, query + 1);
    if (windowed_) {
      r.begin = std::max(r.begin, query - before_);
      r.end = std::min(r.end, query + after_ + 1);
    }
    return r;
  }

  // True when every (query, key) in the block is visible, so the block needs no masking.
  bool block_fully_visible(std::int64_t head, std::int64_t q0, std::int64_t q1, std::int64_t k0,
                           std::int64_t k1) const noexcept;

 private:
  bool is_global(std::int64_t pos) const {
    return !global_flags_.empty() && global_flags_[static_cast<std::size_t>(pos)] != 0;
  }
  std::int64_t count_global(std::int64_t b, std::int64_t e) const noexcept;

  std::int64_t query_len_, key_len_;
  bool causal_;
  bool windowed_ = false;
  std::int64_t before_ = 0, after_ = 0, dilation_ = 1;
  SparsePattern sparse_;
  std::int64_t stride_ = 1, summary_ = 1;
  const std::int64_t* key_lengths_ = nullptr;
  const unsigned char* key_valid_ = nullptr;
  const unsigned char* custom_ = nullptr;
  std::vector<unsigned char> global_flags_;  // per position, empty when there are none
  std::vector<std::int64_t> global_prefix_;  // prefix counts of global_flags_
  bool restricts_nothing_;
};

}  // namespace attnlens::detail
