#include "query_panel.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "validate.h"

namespace attnlens::detail {
namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
}  // namespace

QueryPanel::QueryPanel(const Problem& problem, const HeadOperands& operands, std::int64_t head,
                       std::int64_t max_chunk)
    : p_(problem),
      ops_(operands),
      head_(head),
      query_len_(problem.inputs.shape.query_len),
      queries_(operands.query_panel_size()),
      scores_(static_cast<std::size_t>(max_chunk * kPanelQueries)),
      output_t_(static_cast<std::size_t>(operands.value_rows() * kPanelQueries)),
      row_(static_cast<std::size_t>(max_chunk)) {
  if (problem.top_k > 0) top_k_.emplace(problem.top_k);
}

void QueryPanel::start(std::int64_t q0, std::int64_t rows) noexcept {
  q0_ = q0;
  rows_ = rows;
  has_output_ = false;
  ops_.pack_queries(head_, q0, rows, queries_.data());
  std::fill(max_, max_ + kPanelQueries, kNegInf);
  std::fill(sum_, sum_ + kPanelQueries, 0.0f);
  if (top_k_) top_k_->reset();
}

void QueryPanel::compute_scores(std::int64_t a, std::int64_t b) noexcept {
  a_ = a;
  b_ = b;
  ops_.scores(queries_.data(), q0_, rows_, a, b - a, scores_.data(), row_.data());
}

void QueryPanel::scale_scores(float factor) noexcept {
  for (std::int64_t i = 0; i < (b_ - a_) * kPanelQueries; ++i) scores_[i] *= factor;
}

void QueryPanel::check_finite(std::int64_t lo, std::int64_t hi) const {
  for (std::int64_t j = 0; j < rows_; ++j) {
    for (std::int64_t k = lo; k < hi; ++k) {
      if (!std::isfinite(scores_[(k - a_) * kPanelQueries + j])) {
        throw_logit_overflow(head_of(j), query_of(j), k);
      }
    }
  }
}

void QueryPanel::finish_logits(std::int64_t lo, std::int64_t hi) noexcept {
  if (!p_.terms.any()) return;
  p_.terms.apply(p_.kernels, head_, q0_, rows_, lo, hi, kPanelQueries, 1,
                 scores_.data() + (lo - a_) * kPanelQueries);
}

void QueryPanel::check_finished(std::int64_t lo, std::int64_t hi) const {
  for (std::int64_t j = 0; j < rows_; ++j) {
    for (std::int64_t k = lo; k < hi; ++k) {
      const float x = scores_[(k - a_) * kPanelQueries + j];
      if (std::isnan(x) || x == -kNegInf) throw_logit_overflow(head_of(j), query_of(j), k);
    }
  }
}

void QueryPanel::collect_top_k(std::int64_t lo, std::int64_t hi) noexcept {
  top_k_->collect(scores_.data(), a_, lo, hi, rows_);
}

void QueryPanel::settle_top_k() noexcept { top_k_->settle(); }

void QueryPanel::keep_top_k(std::int64_t lo, std::int64_t hi) noexcept {
  top_k_->keep(scores_.data(), a_, lo, hi, rows_);
}

void QueryPanel::apply_mask(std::int64_t lo, std::int64_t hi) noexcept {
  const auto hide = [&](std::int64_t j, std::int64_t k0, std::int64_t k1) {
    for (std::int64_t k = k0; k < k1; ++k) scores_[(k - a_) * kPanelQueries + j] = kNegInf;
  };
  for (std::int64_t j = 0; j < kPanelQueries; ++j) {
    hide(j, a_, lo);
    hide(j, hi, b_);
  }
  if (p_.lsh != nullptr) {
    for (std::int64_t j = 0; j < rows_; ++j) {
      for (std::int64_t k = lo; k < hi; ++k) {
        if (!p_.lsh->shares_bucket(head_of(j), query_of(j), k))
          scores_[(k - a_) * kPanelQueries + j] = kNegInf;
      }
    }
  }
  // Column by column within each run of columns of one head.
  const MaskEvaluator& mask = p_.mask;
  for (std::int64_t j0 = 0; j0 < rows_;) {
    const std::int64_t h = head_of(j0), q0 = query_of(j0);
    const std::int64_t j1 = j0 + std::min(rows_ - j0, query_len_ - q0);
    if (!mask.block_fully_visible(h, q0, q0 + (j1 - j0), lo, hi)) {
      for (std::int64_t j = j0; j < j1; ++j) {
        const std::int64_t q = q0 + (j - j0);
        if (mask.rows_are_ranges()) {
          const KeyRange r = mask.row_range(h, q);
          hide(j, lo, std::clamp(r.begin, lo, hi));
          hide(j, std::clamp(r.end, lo, hi), hi);
        } else {
          for (std::int64_t k = lo; k < hi; ++k) {
            if (!mask.visible(h, q, k)) scores_[(k - a_) * kPanelQueries + j] = kNegInf;
          }
        }
      }
    }
    j0 = j1;
  }
}

void QueryPanel::softmax_and_values() noexcept {
  p_.kernels.online_softmax(static_cast<std::size_t>(b_ - a_), scores_.data(), max_, sum_,
                            rescale_);
  // The first chunk overwrites the output accumulator, so it is never zeroed.
  ops_.accumulate_values(scores_.data(), a_, b_ - a_, has_output_ ? rescale_ : nullptr,
                         output_t_.data());
  has_output_ = true;
}

void QueryPanel::finish(float* out) const noexcept {
  const std::int64_t dv = p_.inputs.shape.value_dim;
  if (!has_output_) {  // no key visible to the whole panel
    std::fill(out, out + rows_ * dv, 0.0f);
    return;
  }
  float inverse_sums[kPanelQueries];  // 0 for a query with no visible key: zero output row
  for (std::int64_t j = 0; j < kPanelQueries; ++j) inverse_sums[j] = inverse_sum(j);
  if (p_.value_scale != 1.0f) {
    // Undo the values' power-of-two scale: 1 / sum <= 1 (the largest weight is exp(0)), so the
    // product stays finite and exact.
    for (float& x : inverse_sums) x /= p_.value_scale;
  }
  p_.kernels.panel_to_rows(static_cast<std::size_t>(dv), output_t_.data(),
                           static_cast<std::size_t>(rows_), inverse_sums, out,
                           static_cast<std::size_t>(dv));
  if (p_.value_scale != 1.0f) {
    // A weighted mean lies within max |v|; rounding may carry one near FLT_MAX past it (and
    // past FLT_MAX), so it is held there, which is also nearer the exact mean.
    const float bound = p_.max_abs_value;
    for (float* x = out; x != out + rows_ * dv; ++x) *x = std::clamp(*x, -bound, bound);
  }
}

void QueryPanel::write_logsumexp(float* out) const noexcept {
  // max_ and sum_ are in base 2: the logits were scaled by log2(e) (base2_logit_factor).
  constexpr double kLn2 = 0.6931471805599453;
  for (std::int64_t j = 0; j < rows_; ++j) {
    out[j] =
        sum_[j] > 0.0f
            ? static_cast<float>(
                  (static_cast<double>(max_[j]) + std::log2(static_cast<double>(sum_[j]))) * kLn2)
            : kNegInf;
  }
}

std::int64_t QueryPanel::bytes() const noexcept {
  return static_cast<std::int64_t>(
      (queries_.size() + scores_.size() + output_t_.size() + row_.size() + 3 * kPanelQueries) *
          sizeof(float) +
      (top_k_ ? top_k_->bytes() : 0));
}

}  // namespace attnlens::detail
