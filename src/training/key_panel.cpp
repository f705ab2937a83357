#include "key_panel.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention/attention_internal.h"
#include "validate.h"

namespace attnlens::detail {
namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
}  // namespace

KeyPanel::KeyPanel(const BackwardProblem& problem, std::int64_t kv_head)
    : p_(problem),
      kv_head_(kv_head),
      depth_(problem.inputs.forward.shape.head_dim),
      value_dim_(problem.inputs.forward.shape.value_dim),
      keys_(static_cast<std::size_t>(depth_ * kPanelQueries)),
      values_(static_cast<std::size_t>(value_dim_ * kPanelQueries)),
      dkt_(static_cast<std::size_t>(round_up(depth_, kPanelKeys) * kPanelQueries)),
      dvt_(static_cast<std::size_t>(round_up(value_dim_, kPanelKeys) * kPanelQueries)) {}

void KeyPanel::start(std::int64_t k0, std::int64_t cols, float* key_rows) noexcept {
  k0_ = k0;
  cols_ = cols;
  has_gradients_ = false;
  const AttentionShape& s = p_.inputs.forward.shape;
  const float* k = p_.inputs.forward.k.data + (kv_head_ * s.key_len + k0) * depth_;
  const float* v = p_.inputs.forward.v.data + (kv_head_ * s.key_len + k0) * value_dim_;
  const float fold = base2_logit_factor(p_.logit_factor);
  const bool cosine = p_.options.score == ScoreFunction::kCosine;
  std::fill(keys_.begin(), keys_.end(), 0.0f);
  std::fill(values_.begin(), values_.end(), 0.0f);
  constexpr std::int64_t kSlice = kDqKeys * kPanelQueries;  // one 8-dim slice of the dQ B
  const std::int64_t slices = div_up(depth_, kPanelQueries);
  for (std::int64_t x = 0; x < slices; ++x) {
    std::fill(key_rows + x * kSlice, key_rows + x * kSlice + kPanelQueries * kPanelQueries, 0.0f);
  }
  for (std::int64_t j = 0; j < kPanelQueries; ++j) {
    inverse_norms_[j] = j < cols && cosine ? inverse_norm(k + j * depth_, depth_) : 0.0;
  }
  for (std::int64_t j = 0; j < cols; ++j) {
    const float unit = static_cast<float>(inverse_norms_[j]);  // cosine: the key's unit row
    for (std::int64_t x = 0; x < depth_; ++x) {
      const float key = cosine ? k[j * depth_ + x] * unit : k[j * depth_ + x];
      keys_[x * kPanelQueries + j] = key * fold;
      key_rows[(x / kPanelQueries) * kSlice + j * kPanelQueries + x % kPanelQueries] = key;
    }
    for (std::int64_t c = 0; c < value_dim_; ++c) {
      values_[c * kPanelQueries + j] = v[j * value_dim_ + c];
    }
  }
}

void KeyPanel::compute_scores(std::int64_t a, std::int64_t b,
                              BackwardScratch& scratch) const noexcept {
  p_.kernels.panel_gemm(static_cast<std::size_t>((b - a) / kPanelKeys),
                        static_cast<std::size_t>(depth_), head_->query_rows() + a * depth_,
                        static_cast<std::size_t>(depth_ * kPanelKeys), keys_.data(),
                        scratch.scores.data(), nullptr);
}

void KeyPanel::check_finite(std::int64_t a, std::int64_t lo, std::int64_t hi,
                            const BackwardScratch& scratch) const {
  for (std::int64_t i = lo; i < hi; ++i) {
    for (std::int64_t j = 0; j < cols_; ++j) {
      if (!std::isfinite(scratch.scores[static_cast<std::size_t>((i - a) * kPanelQueries + j)])) {
        throw_logit_overflow(h_, i, k0_ + j);
      }
    }
  }
}

void KeyPanel::apply_mask(std::int64_t a, std::int64_t b, std::int64_t lo, std::int64_t hi,
                          float* s) const noexcept {
  // Rows outside [lo, hi) belong to another step (or are padding), keys past cols_ are padding.
  for (std::int64_t i = a; i < b; ++i) {
    float* row = s + (i - a) * kPanelQueries;
    std::fill(row + (i < lo || i >= hi ? 0 : cols_), row + kPanelQueries, kNegInf);
  }
  const MaskEvaluator& mask = p_.mask;
  if (mask.block_fully_visible(h_, lo, hi, k0_, k0_ + cols_)) return;
  // Rows in runs of 8, each run skipped when the mask hides nothing from it: under causal and
  // window masks only the runs near the diagonal or the band's edges are masked row by row.
  for (std::int64_t r0 = lo; r0 < hi; r0 += kPanelQueries) {
    const std::int64_t r1 = std::min(hi, r0 + kPanelQueries);
    if (mask.block_fully_visible(h_, r0, r1, k0_, k0_ + cols_)) continue;
    for (std::int64_t i = r0; i < r1; ++i) {
      float* row = s + (i - a) * kPanelQueries;
      if (mask.rows_are_ranges()) {
        const KeyRange r = mask.row_range(h_, i);
        const std::int64_t from = std::clamp<std::int64_t>(r.begin - k0_, 0, cols_);
        const std::int64_t to = std::clamp<std::int64_t>(r.end - k0_, from, cols_);
        std::fill(row, row + from, kNegInf);
        std::fill(row + to, row + cols_, kNegInf);
      } else {
        for (std::int64_t j = 0; j < cols_; ++j) {
          if (!mask.visible(h_, i, k0_ + j)) row[j] = kNegInf;
        }
      }
    }
  }
}

void KeyPanel::accumulate(std::int64_t a, std::int64_t b, std::int64_t lo, std::int64_t hi,
                          BackwardScratch& scratch, float* ds_t) noexcept {
  const KernelSet& kernels = p_.kernels;
  const auto width = static_cast<std::size_t>(b - a), tiles = width / kPanelRows;
  const auto panel_stride = static_cast<std::size_t>(head_->padded_queries() * kPanelKeys);
  float* s = scratch.scores.data();
  float* ds = scratch.d_scores.data();
  apply_mask(a, b, lo, hi, s);
  kernels.panel_gemm(
      tiles, static_cast<std::size_t>(value_dim_), head_->d_output_rows() + a * value_dim_,
      static_cast<std::size_t>(value_dim_ * kPanelKeys), values_.data(), ds, nullptr);
  kernels.softmax_backward(width, s, ds, head_->base() + a, head_->delta() + a, ds_t, kDqStride);
  // The first step overwrites the accumulators, so they are never zeroed.
  const float* keep = has_gradients_ ? kKeep : nullptr;
  kernels.panel_gemm(dvt_.size() / (kPanelKeys * kPanelQueries), width,
                     head_->d_output_columns() + a * kPanelKeys, panel_stride, s, dvt_.data(),
                     keep);
  kernels.panel_gemm(dkt_.size() / (kPanelKeys * kPanelQueries), width,
                     head_->query_columns() + a * kPanelKeys, panel_stride, ds, dkt_.data(), keep);
  has_gradients_ = true;
}

void KeyPanel::finish(float* dk, float* dv) const noexcept {
  float* dk_rows = dk + k0_ * depth_;
  float* dv_rows = dv + k0_ * value_dim_;
  if (!has_gradients_) {  // no query sees any key of the panel
    std::fill(dk_rows, dk_rows + cols_ * depth_, 0.0f);
    std::fill(dv_rows, dv_rows + cols_ * value_dim_, 0.0f);
    return;
  }
  float factor[kPanelQueries];
  std::fill(factor, factor + kPanelQueries, p_.logit_factor);
  const auto rows = static_cast<std::size_t>(cols_);
  p_.kernels.panel_to_rows(static_cast<std::size_t>(depth_), dkt_.data(), rows, factor, dk_rows,
                           static_cast<std::size_t>(depth_));
  p_.kernels.panel_to_rows(static_cast<std::size_t>(value_dim_), dvt_.data(), rows, kKeep, dv_rows,
                           static_cast<std::size_t>(value_dim_));
  if (p_.options.score != ScoreFunction::kCosine) return;
  const float* k =
      p_.inputs.forward.k.data + (kv_head_ * p_.inputs.forward.shape.key_len + k0_) * depth_;
  for (std::int64_t j = 0; j < cols_; ++j) {
    normalisation_backward(k + j * depth_, inverse_norms_[j], depth_, dk_rows + j * depth_);
  }
}

std::int64_t KeyPanel::bytes() const noexcept {
  return static_cast<std::int64_t>((keys_.size() + values_.size() + dkt_.size() + dvt_.size()) *
                                       sizeof(float) +
                                   sizeof(inverse_norms_));
}

}  // namespace attnlens::detail
