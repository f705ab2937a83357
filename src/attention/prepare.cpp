#include "prepare.h"

#include <algorithm>
#include <cmath>

namespace attnlens::detail {
namespace {

// The column scale that makes a panel GEMM add to what C holds.
constexpr float kOnes[kPanelQueries] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};

// out[rows, hidden] = x[rows, depth] * w[hidden, depth]^T, via the GEMM kernel on w^T.
void project(const KernelSet& kernels, const float* x, std::int64_t rows, std::int64_t depth,
             const float* w, std::int64_t hidden, float* out) {
  std::vector<float> wt(static_cast<std::size_t>(depth * hidden));
  for (std::int64_t a = 0; a < hidden; ++a) {
    for (std::int64_t d = 0; d < depth; ++d) wt[d * hidden + a] = w[a * depth + d];
  }
  kernels.gemm(rows, hidden, depth, x, depth, wt.data(), hidden, out, hidden, false);
}

}  // namespace

double inverse_norm(const float* row, std::int64_t cols) noexcept {
  double sq = 0.0;  // double: |x|^2 of large finite inputs must not overflow
  for (std::int64_t c = 0; c < cols; ++c) sq += static_cast<double>(row[c]) * row[c];
  return sq > 0.0 ? 1.0 / std::sqrt(sq) : 0.0;
}

void normalize_rows(const float* x, std::int64_t rows, std::int64_t cols, float factor,
                    float* out) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    const float inv = static_cast<float>(factor * inverse_norm(row, cols));
    for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = row[c] * inv;
  }
}

// Written panel by panel so every store is sequential (4 row streams are read at once).
std::vector<float> pack_row_panels(const float* x, std::int64_t rows, std::int64_t cols) {
  std::vector<float> out(static_cast<std::size_t>(round_up(rows, kPanelKeys) * cols), 0.0f);
  float* o = out.data();
  for (std::int64_t r0 = 0; r0 < rows; r0 += kPanelKeys, o += cols * kPanelKeys) {
    const std::int64_t count = std::min(kPanelKeys, rows - r0);
    for (std::int64_t r = 0; r < count; ++r) {
      const float* row = x + (r0 + r) * cols;
      for (std::int64_t c = 0; c < cols; ++c) o[c * kPanelKeys + r] = row[c];
    }
  }
  return out;
}

std::vector<float> pack_column_panels(const float* x, std::int64_t rows, std::int64_t cols,
                                      float scale) {
  const std::int64_t panels = div_up(cols, kPanelKeys), padded_rows = round_up(rows, kPanelKeys);
  std::vector<float> out(static_cast<std::size_t>(panels * padded_rows * kPanelKeys), 0.0f);
  for (std::int64_t pc = 0; pc < panels; ++pc) {
    // Each row contributes its 4 columns of this panel: a 16-byte copy when cols allows.
    const std::int64_t c0 = pc * kPanelKeys, count = std::min(kPanelKeys, cols - c0);
    float* panel = out.data() + pc * padded_rows * kPanelKeys;
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < count; ++c) {
        panel[r * kPanelKeys + c] = x[r * cols + c0 + c] * scale;
      }
    }
  }
  return out;
}

bool reads_rows_in_place(const AttentionShape& shape, ScoreFunction score, float value_scale) {
  if (score != ScoreFunction::kDot && score != ScoreFunction::kScaledDot) return false;
  if (value_scale != 1.0f || shape.value_dim % kPanelKeys != 0) return false;
  const std::int64_t heads_per_slot = shape.heads / kv_head_count(shape);
  return heads_per_slot * div_up(shape.query_len, kPanelQueries) <= kMaxInPlacePanels;
}

HeadOperands::HeadOperands(const AttentionInputs& in, const AttentionOptions& options,
                           std::int64_t head, float fold, float value_scale,
                           const KernelSet& kernels)
    : kernels_(kernels),
      score_(options.score),
      padded_keys_(round_up(in.shape.key_len, kPanelKeys)),
      value_panels_(div_up(in.shape.value_dim, kPanelKeys)),
      query_len_(in.shape.query_len),
      query_fold_(fold),
      queries_(in.q.data) {
  const AttentionShape& s = in.shape;
  const std::int64_t d = s.head_dim;
  const std::int64_t kv = kv_head_of(s, head);
  const std::int64_t capacity = in.kv_capacity > 0 ? in.kv_capacity : s.key_len;
  const float* k = in.k.data + kv * capacity * d;
  const float* v = in.v.data + kv * capacity * s.value_dim;

  if (reads_rows_in_place(s, score_, value_scale)) {
    depth_ = d;
    key_rows_ = k;
    value_rows_ = v;
    value_dim_ = s.value_dim;
    whole_keys_ = round_down(s.key_len, kPanelKeys);
    const std::int64_t rest = s.key_len - whole_keys_;
    packed_keys_ = pack_row_panels(k + whole_keys_ * d, rest, d);
    packed_values_ = pack_column_panels(v + whole_keys_ * s.value_dim, rest, s.value_dim);
    return;
  }

  switch (score_) {
    case ScoreFunction::kScaledDot:
    case ScoreFunction::kDot:
      depth_ = d;
      packed_keys_ = pack_row_panels(k, s.key_len, d);
      break;
    case ScoreFunction::kCosine: {
      depth_ = d;
      std::vector<float> unit_keys(static_cast<std::size_t>(s.key_len * d));
      normalize_rows(k, s.key_len, d, 1.0f, unit_keys.data());
      packed_keys_ = pack_row_panels(unit_keys.data(), s.key_len, d);
      break;
    }
    case ScoreFunction::kAdditive: {
      const AdditiveWeights& a = options.additive;
      depth_ = a.hidden;
      query_fold_ = 1.0f;  // folded into v
      const float* wq = a.w_query.data + head * a.hidden * d;
      const float* wk = a.w_key.data + head * a.hidden * d;
      query_storage_.resize(static_cast<std::size_t>(s.query_len * a.hidden));
      project(kernels_, in.q.data + head * s.query_len * d, s.query_len, d, wq, a.hidden,
              query_storage_.data());
      queries_ = query_storage_.data();
      std::vector<float> key_rows(static_cast<std::size_t>(s.key_len * a.hidden));
      project(kernels_, k, s.key_len, d, wk, a.hidden, key_rows.data());
      // Hidden-major [A][Nk4], so additive_row runs along keys.
      packed_keys_.assign(static_cast<std::size_t>(a.hidden * padded_keys_), 0.0f);
      for (std::int64_t j = 0; j < s.key_len; ++j) {
        for (std::int64_t h = 0; h < a.hidden; ++h) {
          packed_keys_[h * padded_keys_ + j] = key_rows[j * a.hidden + h];
        }
      }
      additive_v_.assign(a.v.data + head * a.hidden, a.v.data + (head + 1) * a.hidden);
      for (float& x : additive_v_) x *= fold;
      break;
    }
  }

  // Values: the transpose of V [Nk][Dv] in row panels, i.e. V^T [Dv][Nk] packed 4 rows of V^T
  // (4 value dimensions) per panel, keys padded to Nk4; times value_scale, which is exact.
  packed_values_ = pack_column_panels(v, s.key_len, s.value_dim, value_scale);
}

void HeadOperands::pack_queries(std::int64_t head, std::int64_t q0, std::int64_t rows,
                                float* out) const noexcept {
  std::fill(out, out + query_panel_size(), 0.0f);
  // The additive slot holds its one head's projected queries; q holds every head's.
  const float* queries =
      score_ == ScoreFunction::kAdditive ? queries_ : queries_ + head * query_len_ * depth_;
  for (std::int64_t j = 0; j < rows; ++j) {
    const float* row = queries + (q0 + j) * depth_;
    // Cosine: the unit row times the fold, as normalize_rows forms it.
    const float factor = score_ == ScoreFunction::kCosine
                             ? static_cast<float>(query_fold_ * inverse_norm(row, depth_))
                             : query_fold_;
    for (std::int64_t p = 0; p < depth_; ++p) out[p * kPanelQueries + j] = row[p] * factor;
  }
}

void HeadOperands::scores(const float* query_panel, std::int64_t q0, std::int64_t rows,
                          std::int64_t k0, std::int64_t width, float* s,
                          float* row) const noexcept {
  if (key_rows_ != nullptr) {
    // Whole panels of rows in place, then the padded last panel (at most one: k0 + width <= Nk4).
    const std::int64_t end = k0 + width, split = std::clamp(whole_keys_, k0, end);
    if (split > k0) {
      kernels_.panel_gemm_strided(static_cast<std::size_t>((split - k0) / kPanelKeys),
                                  static_cast<std::size_t>(depth_), key_rows_ + k0 * depth_,
                                  static_cast<std::size_t>(depth_ * kPanelKeys), 1,
                                  static_cast<std::size_t>(depth_), query_panel, s, nullptr);
    }
    if (end > split) {
      kernels_.panel_gemm(1, static_cast<std::size_t>(depth_), packed_keys_.data(),
                          static_cast<std::size_t>(depth_ * kPanelKeys), query_panel,
                          s + (split - k0) * kPanelQueries, nullptr);
    }
    return;
  }
  if (score_ != ScoreFunction::kAdditive) {
    kernels_.panel_gemm(static_cast<std::size_t>(width / kPanelKeys),
                        static_cast<std::size_t>(depth_), packed_keys_.data() + k0 * depth_,
                        static_cast<std::size_t>(depth_ * kPanelKeys), query_panel, s, nullptr);
    return;
  }
  for (std::int64_t j = 0; j < kPanelQueries; ++j) {
    if (j < rows) {
      kernels_.additive_row(static_cast<std::size_t>(depth_), queries_ + (q0 + j) * depth_,
                            packed_keys_.data() + k0, static_cast<std::size_t>(padded_keys_),
                            additive_v_.data(), static_cast<std::size_t>(width), row);
    } else {
      std::fill(row, row + width, 0.0f);
    }
    for (std::int64_t i = 0; i < width; ++i) s[i * kPanelQueries + j] = row[i];
  }
}

void HeadOperands::accumulate_values(const float* p, std::int64_t k0, std::int64_t width,
                                     const float* rescale, float* ot) const noexcept {
  if (value_rows_ != nullptr) {
    // As scores(): whole panels in place, then the padded last panel added on (scale 1, so the
    // sums are those of one pass over packed values).
    const std::int64_t end = k0 + width, split = std::clamp(whole_keys_, k0, end);
    const float* scale = rescale;
    if (split > k0) {
      kernels_.panel_gemm_strided(
          static_cast<std::size_t>(value_panels_), static_cast<std::size_t>(split - k0),
          value_rows_ + k0 * value_dim_, static_cast<std::size_t>(kPanelKeys),
          static_cast<std::size_t>(value_dim_), 1, p, ot, scale);
      scale = kOnes;
    }
    if (end > split) {
      kernels_.panel_gemm(static_cast<std::size_t>(value_panels_),
                          static_cast<std::size_t>(kPanelKeys), packed_values_.data(),
                          static_cast<std::size_t>(kPanelKeys * kPanelKeys),
                          p + (split - k0) * kPanelQueries, ot, scale);
    }
    return;
  }
  kernels_.panel_gemm(static_cast<std::size_t>(value_panels_), static_cast<std::size_t>(width),
                      packed_values_.data() + k0 * kPanelKeys,
                      static_cast<std::size_t>(padded_keys_ * kPanelKeys), p, ot, rescale);
}

std::int64_t HeadOperands::bytes() const {
  return static_cast<std::int64_t>(
      (query_storage_.size() + packed_keys_.size() + packed_values_.size() + additive_v_.size()) *
      sizeof(float));
}

}  // namespace attnlens::detail
