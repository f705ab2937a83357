// One head's query side of the backward, packed once and shared read-only by every group of keys
// of the head (see attention_backward.cpp): queries and dL/dO in the two panel layouts the
// products need, each row's log-sum-exp in base 2 and rowsum(dO * O), the query blocks that
// visit each key tile, and the ordered sum of the groups' partial dQ.
//
// Layouts (Nq4 = Nq rounded up to 4, D4 / Dv4 likewise, padding zero):
//   query_rows      [Nq4 / 4][D][4]     A panels of S = Q K^T (unit rows for cosine)
//   query_columns   [D4 / 4][Nq4][4]    A panels of dK^T = Q^T dS
//   d_output_rows   [Nq4 / 4][Dv][4]    A panels of dP = dO V^T
//   d_output_columns[Dv4 / 4][Nq4][4]   A panels of dV^T = dO^T P
//   dQ              [D8 / 8][Nq4][8]    the panel GEMM's C tiles of dQ = dS K, 8 dims at a time
#pragma once

#include <cstdint>
#include <vector>

#include "attnlens/span.h"
#include "backward_internal.h"
#include "ordered_sum.h"

namespace attnlens::detail {

// The cosine score's gradient through its normalisation: `grad` holds dL/dx^ for the unit row
// x^ = x * inverse_norm and becomes dL/dx = (dL/dx^ - x^ (x^ . dL/dx^)) * inverse_norm (zero for
// a zero row, whose inverse_norm is 0).
void normalisation_backward(const float* x, double inverse_norm, std::int64_t cols,
                            float* grad) noexcept;

class BackwardHead {
 public:
  // Head `head` of the problem; dQ is summed over `groups` partials.
  BackwardHead(const BackwardProblem& p, std::int64_t head, std::size_t groups);
  BackwardHead(const BackwardHead&) = delete;
  BackwardHead& operator=(const BackwardHead&) = delete;

  std::int64_t padded_queries() const { return padded_queries_; }  // Nq4
  const float* query_rows() const { return query_rows_.data(); }
  const float* query_columns() const { return query_columns_.data(); }
  const float* d_output_rows() const { return d_output_rows_.data(); }
  const float* d_output_columns() const { return d_output_columns_.data(); }
  // Per row (Nq4): the log-sum-exp in base 2, +inf where nothing is visible or for padding, so
  // that 2^(s - base) is 0 there; and rowsum(dO * O), 0 for padding.
  const float* base() const { return base_.data(); }
  const float* delta() const { return delta_.data(); }

  // The query blocks that visit key tile t (the forward's tiles_to_visit, inverted), in order.
  Span<const std::int64_t> blocks_of_tile(std::int64_t t) const {
    const auto b = static_cast<std::size_t>(tile_start_[t]);
    return {visits_.data() + b, static_cast<std::size_t>(tile_start_[t + 1] - tile_start_[t])};
  }
  std::int64_t tiles_visited() const { return static_cast<std::int64_t>(visits_.size()); }

  // Floats of one group's partial dQ (zero-initialised by the group).
  std::size_t dq_length() const { return static_cast<std::size_t>(padded_queries_ * dims8_); }
  // Hands in group g's partial; the group that completes the sum writes this head's dq rows.
  void add_dq(std::size_t group, std::vector<float> partial, float* dq);

  std::int64_t bytes() const;

 private:
  void write_dq(float* dq) const;

  const BackwardProblem& p_;
  std::int64_t head_;
  std::int64_t padded_queries_;
  std::int64_t dims8_;  // D rounded up to 8
  std::vector<float> query_rows_, query_columns_, d_output_rows_, d_output_columns_;
  std::vector<float> base_, delta_;
  std::vector<double> inverse_norms_;  // cosine: 1 / |q| per row (0 for a zero row)
  std::vector<std::int64_t> visits_;   // query blocks, tile after tile
  std::vector<std::int64_t> tile_start_;
  OrderedSum dq_sum_;
};

}  // namespace attnlens::detail
