#include "backward_head.h"

#include <cmath>
#include <limits>

#include "attention/prepare.h"
#include "attention/tile_visits.h"

namespace attnlens::detail {

void normalisation_backward(const float* x, double inverse_norm, std::int64_t cols,
                            float* grad) noexcept {
  // The unit row exactly as the packed operands hold it (x times the float inverse norm).
  const auto unit = static_cast<float>(inverse_norm);
  double along = 0.0;
  for (std::int64_t c = 0; c < cols; ++c) along += static_cast<double>(x[c] * unit) * grad[c];
  for (std::int64_t c = 0; c < cols; ++c) {
    grad[c] =
        static_cast<float>((grad[c] - static_cast<double>(x[c] * unit) * along) * inverse_norm);
  }
}

BackwardHead::BackwardHead(const BackwardProblem& p, std::int64_t head, std::size_t groups)
    : p_(p),
      head_(head),
      padded_queries_(round_up(p.inputs.forward.shape.query_len, kPanelKeys)),
      dims8_(round_up(p.inputs.forward.shape.head_dim, kPanelQueries)),
      dq_sum_(groups) {
  const AttentionBackwardInputs& in = p.inputs;
  const AttentionShape& s = in.forward.shape;
  const std::int64_t nq = s.query_len, d = s.head_dim, dv = s.value_dim;

  // Queries as the score sees them: unit rows for cosine (the forward's zero-row rule).
  const float* q = in.forward.q.data + head * nq * d;
  std::vector<float> unit;
  if (p.options.score == ScoreFunction::kCosine) {
    unit.resize(static_cast<std::size_t>(nq * d));
    inverse_norms_.resize(static_cast<std::size_t>(nq));
    for (std::int64_t r = 0; r < nq; ++r) {
      inverse_norms_[r] = inverse_norm(q + r * d, d);
      const auto inv = static_cast<float>(inverse_norms_[r]);
      for (std::int64_t c = 0; c < d; ++c) unit[r * d + c] = q[r * d + c] * inv;
    }
    q = unit.data();
  }
  query_rows_ = pack_row_panels(q, nq, d);
  query_columns_ = pack_column_panels(q, nq, d);
  const float* d_output = in.d_output.data + head * nq * dv;
  d_output_rows_ = pack_row_panels(d_output, nq, dv);
  d_output_columns_ = pack_column_panels(d_output, nq, dv);

  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr double kLog2e = 1.4426950408889634;
  base_.assign(static_cast<std::size_t>(padded_queries_), kInf);
  delta_.assign(static_cast<std::size_t>(padded_queries_), 0.0f);
  const float* lse = in.row_logsumexp.data + head * nq;
  const float* output = in.output.data + head * nq * dv;
  for (std::int64_t i = 0; i < nq; ++i) {
    if (lse[i] != -kInf) base_[i] = static_cast<float>(static_cast<double>(lse[i]) * kLog2e);
    double sum = 0.0;
    for (std::int64_t c = 0; c < dv; ++c) {
      sum += static_cast<double>(d_output[i * dv + c]) * output[i * dv + c];
    }
    delta_[i] = static_cast<float>(sum);
  }

  // The forward's tile lists, block by block, regrouped by tile.
  const std::int64_t bq = p.query_block, bk = p.key_block;
  const std::int64_t k_tiles = div_up(s.key_len, bk);
  std::vector<std::vector<std::int64_t>> per_tile(static_cast<std::size_t>(k_tiles));
  std::vector<std::int64_t> visit;
  for (std::int64_t b = 0; b * bq < nq; ++b) {
    tiles_to_visit(p.mask, head, b * bq, std::min((b + 1) * bq, nq), bk, k_tiles, visit);
    for (const std::int64_t t : visit) per_tile[static_cast<std::size_t>(t)].push_back(b);
  }
  tile_start_.assign(1, 0);
  for (const std::vector<std::int64_t>& blocks : per_tile) {
    visits_.insert(visits_.end(), blocks.begin(), blocks.end());
    tile_start_.push_back(static_cast<std::int64_t>(visits_.size()));
  }
}

void BackwardHead::add_dq(std::size_t group, std::vector<float> partial, float* dq) {
  if (dq_sum_.add(group, std::move(partial))) write_dq(dq);
}

void BackwardHead::write_dq(float* dq) const {
  const AttentionShape& s = p_.inputs.forward.shape;
  const std::int64_t d = s.head_dim;
  const std::vector<float>& sum = dq_sum_.total();
  const float c = p_.logit_factor;
  const bool cosine = p_.options.score == ScoreFunction::kCosine;
  const float* q = p_.inputs.forward.q.data + head_ * s.query_len * d;
  for (std::int64_t i = 0; i < s.query_len; ++i) {
    float* row = dq + i * d;
    for (std::int64_t x = 0; x < d; ++x) {
      row[x] =
          c * sum[static_cast<std::size_t>((x / kPanelQueries) * padded_queries_ * kPanelQueries +
                                           i * kPanelQueries + x % kPanelQueries)];
    }
    if (cosine) normalisation_backward(q + i * d, inverse_norms_[i], d, row);
  }
}

std::int64_t BackwardHead::bytes() const {
  const std::size_t floats = query_rows_.size() + query_columns_.size() + d_output_rows_.size() +
                             d_output_columns_.size() + base_.size() + delta_.size() + dq_length();
  return static_cast<std::int64_t>(floats * sizeof(float) + inverse_norms_.size() * sizeof(double) +
                                   (visits_.size() + tile_start_.size()) * sizeof(std::int64_t));
}

}  // namespace attnlens::detail
