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

// The mask alone against a shape (RangeError, ShapeError or OverflowError naming the field);
// validate_attention and mask_matrix call it.
void validate_mask(const MaskSpec& mask, const AttentionShape& shape);

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
    const std::int64_t position = query + offset_;  // where the query sits among the keys
    if (causal_ && key > position) return false;
    if (global_query(query) || global_key(key)) return true;
    if (windowed_) {
      const std::int64_t delta = key - position;
      if (delta % dilation_ != 0) return false;
      const std::int64_t steps = delta / dilation_;
      if (steps < -before_ || steps > after_) return false;
    }
    switch (sparse_) {
      case SparsePattern::kNone:
        break;
      case SparsePattern::kStrided: {
        const std::int64_t d = position - key;
        if (!(d < stride_ && -d < stride_) && d % stride_ != 0) return false;
        break;
      }
      case SparsePattern::kFixed:
        if (position / stride_ != key / stride_ && key % stride_ < stride_ - summary_) return false;
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

  // Queries [q0, q1) (by index) and keys [k0, k1) that are global tokens.
  bool any_global_query(std::int64_t q0, std::int64_t q1) const {
    return count(query_global_prefix_, q0, q1) > 0;
  }
  bool any_global_key(std::int64_t k0, std::int64_t k1) const {
    return count(key_global_prefix_, k0, k1) > 0;
  }
  bool has_global_tokens() const {
    return any_global_query(0, query_len_) || any_global_key(0, key_len_);
  }

  // True when each query's visible keys form one contiguous range (causal, an undilated window
  // and key lengths only), which row_range() then gives; masking a block is then a fill outside
  // that range instead of a visible() call per element.
  bool rows_are_ranges() const {
    return !key_valid_ && !custom_ && sparse_ == SparsePattern::kNone &&
           (!windowed_ || dilation_ == 1) && query_global_prefix_.empty() &&
           key_global_prefix_.empty();
  }
  KeyRange row_range(std::int64_t head, std::int64_t query) const {
    KeyRange r{0, key_limit(head)};
    const std::int64_t position = query + offset_;
    if (causal_) r.end = std::min(r.end, position + 1);
    if (windowed_) {
      r.begin = std::max(r.begin, position - before_);
      r.end = std::min(r.end, position + after_ + 1);
    }
    return r;
  }

  // True when every (query, key) in the block is visible, so the block needs no masking.
  bool block_fully_visible(std::int64_t head, std::int64_t q0, std::int64_t q1, std::int64_t k0,
                           std::int64_t k1) const noexcept;

 private:
  // Global tokens by query index and by key index (a query's position is its index plus the
  // offset): one prefix count each, empty when no listed position falls among them.
  bool global_query(std::int64_t query) const {
    return !query_global_prefix_.empty() && count(query_global_prefix_, query, query + 1) > 0;
  }
  bool global_key(std::int64_t key) const {
    return !key_global_prefix_.empty() && count(key_global_prefix_, key, key + 1) > 0;
  }
  static std::int64_t count(const std::vector<std::int64_t>& prefix, std::int64_t b,
                            std::int64_t e) noexcept;

  std::int64_t query_len_, key_len_;
  std::int64_t offset_;  // query_offset
  bool causal_;
  bool windowed_ = false;
  std::int64_t before_ = 0, after_ = 0, dilation_ = 1;
  SparsePattern sparse_;
  std::int64_t stride_ = 1, summary_ = 1;
  const std::int64_t* key_lengths_ = nullptr;
  const unsigned char* key_valid_ = nullptr;
  const unsigned char* custom_ = nullptr;
  std::vector<std::int64_t> query_global_prefix_;  // Nq + 1 counts, or empty
  std::vector<std::int64_t> key_global_prefix_;    // Nk + 1 counts, or empty
  bool restricts_nothing_;
};

}  // namespace attnlens::detail
