#include "prepare.h"

#include <cmath>

namespace attnlens::detail {
namespace {

// Row-wise unit vectors; zero rows stay zero, so their cosine score is 0.
void normalize_rows(const float* x, std::int64_t rows, std::int64_t cols, float factor,
                    float* out) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    double sq = 0.0;  // double: |x|^2 of large finite inputs must not overflow
    for (std::int64_t c = 0; c < cols; ++c) sq += static_cast<double>(row[c]) * row[c];
    const float inv = sq > 0.0 ? static_cast<float>(factor / std::sqrt(sq)) : 0.0f;
    for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = row[c] * inv;
  }
}

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

HeadOperands::HeadOperands(const AttentionInputs& in, const AttentionOptions& options,
                           std::int64_t head, std::int64_t key_block, float fold,
                           const KernelSet& kernels)
    : kernels_(kernels), score_(options.score), key_block_(key_block) {
  const AttentionShape& s = in.shape;
  const std::int64_t d = s.head_dim;
  const float* q = in.q.data + head * s.query_len * d;
  const float* k = in.k.data + head * s.key_len * d;

  // Keys in the row-major layout [Nk, depth] before packing.
  const float* key_rows = k;
  std::vector<float> key_storage;
  switch (score_) {
    case ScoreFunction::kScaledDot:
    case ScoreFunction::kDot:
      depth_ = d;
      if (fold == 1.0f) {
        queries_ = q;
      } else {
        query_storage_.resize(static_cast<std::size_t>(s.query_len * d));
        for (std::size_t i = 0; i < query_storage_.size(); ++i) query_storage_[i] = q[i] * fold;
        queries_ = query_storage_.data();
      }
      break;
    case ScoreFunction::kCosine:
      depth_ = d;
      query_storage_.resize(static_cast<std::size_t>(s.query_len * d));
      normalize_rows(q, s.query_len, d, fold, query_storage_.data());
      queries_ = query_storage_.data();
      key_storage.resize(static_cast<std::size_t>(s.key_len * d));
      normalize_rows(k, s.key_len, d, 1.0f, key_storage.data());
      key_rows = key_storage.data();
      break;
    case ScoreFunction::kAdditive: {
      const AdditiveWeights& a = options.additive;
      depth_ = a.hidden;
      const float* wq = a.w_query.data + head * a.hidden * d;
      const float* wk = a.w_key.data + head * a.hidden * d;
      query_storage_.resize(static_cast<std::size_t>(s.query_len * a.hidden));
      project(kernels_, q, s.query_len, d, wq, a.hidden, query_storage_.data());
      queries_ = query_storage_.data();
      key_storage.resize(static_cast<std::size_t>(s.key_len * a.hidden));
      project(kernels_, k, s.key_len, d, wk, a.hidden, key_storage.data());
      key_rows = key_storage.data();
      additive_v_.assign(a.v.data + head * a.hidden, a.v.data + (head + 1) * a.hidden);
      for (float& x : additive_v_) x *= fold;
      break;
    }
  }

  const std::int64_t tiles = div_up(s.key_len, key_block_);
  packed_keys_.assign(static_cast<std::size_t>(tiles * depth_ * key_block_), 0.0f);
  for (std::int64_t j = 0; j < s.key_len; ++j) {
    const std::int64_t t = j / key_block_, c = j % key_block_;
    float* tile = packed_keys_.data() + t * depth_ * key_block_;
    const float* row = key_rows + j * depth_;
    for (std::int64_t p = 0; p < depth_; ++p) tile[p * key_block_ + c] = row[p];
  }
}

void HeadOperands::scores(std::int64_t q0, std::int64_t rows, std::int64_t tile,
                          std::int64_t width, float* s, std::size_t lds) const {
  const float* keys = packed_keys_.data() + tile * depth_ * key_block_;
  if (score_ != ScoreFunction::kAdditive) {
    kernels_.gemm(static_cast<std::size_t>(rows), static_cast<std::size_t>(width),
                  static_cast<std::size_t>(depth_), queries_ + q0 * depth_,
                  static_cast<std::size_t>(depth_), keys, static_cast<std::size_t>(key_block_), s,
                  lds, false);
    return;
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    kernels_.additive_row(static_cast<std::size_t>(depth_), queries_ + (q0 + r) * depth_, keys,
                          static_cast<std::size_t>(key_block_), additive_v_.data(),
                          static_cast<std::size_t>(width), s + r * lds);
  }
}

std::int64_t HeadOperands::bytes() const {
  return static_cast<std::int64_t>(
      (query_storage_.size() + packed_keys_.size() + additive_v_.size()) * sizeof(float));
}

}  // namespace attnlens::detail
