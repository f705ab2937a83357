// One panel of up to 8 keys of one K/V head, run against queries a chunk at a time: the backward's
// inner steps (FlashAttention-2's inner loop, with this library's panel kernels). Scores are held
// [query][key], so each row of a chunk holds the panel's 8 keys side by side: dV and dK then
// accumulate in the panel's own [dims][8] tiles over every query, as the forward accumulates O^T.
//
//   start(k0, cols, key_rows)   pack the keys (folded by the logit factor, in base 2), values
//                               and (into the caller's dQ operand) key rows; reset accumulators
//   compute_scores(a, b)        logits of queries [a, b), multiples of 4
//   check_finite(a, lo, hi)     NonFiniteError for an overflowed logit of a real query
//   accumulate(a, b, lo, hi)    mask (rows outside [lo, hi) too), P again, dP = dO V^T,
//                               dS = P (dP - delta), then dV^T += dO^T P, dK^T += Q^T dS; dS
//                               transposed goes to the caller, whose one product dQ += dS K
//                               covers 8 panels (kDqKeys)
//   finish(dk, dv)              the panel's dk, dv rows (times scale / temperature; through the
//                               normalisation for cosine)
// Under grouped-query attention the steps run for each query head reading the K/V head in turn
// (set_query_head), in head order, and dK, dV accumulate over all of them.
//
// Everything but the constructor and check_finite is noexcept, as in QueryPanel (query_panel.h).
#pragma once

#include <cstdint>
#include <vector>

#include "attention/prepare.h"
#include "backward_head.h"
#include "backward_internal.h"

namespace attnlens::detail {

// One task's per-chunk scratch, shared by its key panels (one runs at a time).
struct BackwardScratch {
  explicit BackwardScratch(std::int64_t chunk)
      : scores(static_cast<std::size_t>(chunk * kPanelQueries)), d_scores(scores.size()) {}
  std::int64_t bytes() const {
    return static_cast<std::int64_t>(2 * scores.size() * sizeof(float));
  }
  std::vector<float> scores;    // [chunk][8]: logits, then weights
  std::vector<float> d_scores;  // [chunk][8]: dP, then dS
};

class KeyPanel {
 public:
  // Keys of K/V head `kv_head`.
  KeyPanel(const BackwardProblem& problem, std::int64_t kv_head);

  // `key_rows`: this panel's 8 rows of the dQ product's B, in slices kDqKeys * 8 floats apart.
  void start(std::int64_t k0, std::int64_t cols, float* key_rows) noexcept;
  // The query head whose queries the next steps run (one of those reading the K/V head): dK and
  // dV add up over all of them.
  void set_query_head(const BackwardHead& head, std::int64_t h) noexcept {
    head_ = &head;
    h_ = h;
  }
  void compute_scores(std::int64_t a, std::int64_t b, BackwardScratch& scratch) const noexcept;
  // The step's scores start at query a.
  void check_finite(std::int64_t a, std::int64_t lo, std::int64_t hi,
                    const BackwardScratch& scratch) const;
  // `ds_t`: where this panel's dS for query a goes in the dQ product's A (groups of 4 queries
  // kDqStride floats apart).
  void accumulate(std::int64_t a, std::int64_t b, std::int64_t lo, std::int64_t hi,
                  BackwardScratch& scratch, float* ds_t) noexcept;
  // Rows k0 .. k0 + cols of the head's dk [Nk, D] and dv [Nk, Dv].
  void finish(float* dk, float* dv) const noexcept;

  std::int64_t bytes() const noexcept;

 private:
  void apply_mask(std::int64_t a, std::int64_t b, std::int64_t lo, std::int64_t hi,
                  float* s) const noexcept;

  const BackwardProblem& p_;
  std::int64_t kv_head_;
  const BackwardHead* head_ = nullptr;  // the current query head's operands
  std::int64_t h_ = 0;
  std::int64_t depth_, value_dim_;
  std::int64_t k0_ = 0, cols_ = 0;
  bool has_gradients_ = false;    // false until the first accumulate wrote dkt_ and dvt_
  std::vector<float> keys_;       // [D][8], times the base-2 logit factor: B of S
  std::vector<float> values_;     // [Dv][8]: B of dP
  std::vector<float> key_rows_;   // [D8 / 8][8 keys][8 dims]: B of dQ += dS K
  std::vector<float> dkt_, dvt_;  // [D4][8], [Dv4][8]: dK^T, dV^T
  double inverse_norms_[kPanelQueries] = {};  // cosine: 1 / |k| per key (0 for a zero row)
};

}  // namespace attnlens::detail
