// Naive double-precision attention, written from the formulas in the public headers.
//
// Everything here is deliberately the obvious loop or Eigen expression: this file is the yardstick
// for the float32 kernels, so clarity beats speed, and it shares no code with src/ (not even the
// mask evaluator or the default scale).
#include "reference/reference.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/terms.h"

namespace attnlens::reference {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// A row-major float block [rows, cols] as a double matrix.
MatrixXd to_matrix(const float* data, std::int64_t rows, std::int64_t cols) {
  MatrixXd m(rows, cols);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) m(r, c) = data[r * cols + c];
  }
  return m;
}

// One [N, width] matrix per head from a head-major float tensor [H, N, width] (or, with a
// capacity, [H, capacity, width] of which the first N rows of each head count).
std::vector<MatrixXd> split_head_major(const float* data, std::int64_t heads, std::int64_t rows,
                                       std::int64_t cols, std::int64_t capacity = 0) {
  const std::int64_t stride = (capacity > 0 ? capacity : rows) * cols;
  std::vector<MatrixXd> per_head;
  for (std::int64_t h = 0; h < heads; ++h) {
    per_head.push_back(to_matrix(data + h * stride, rows, cols));
  }
  return per_head;
}

void append_head_major(const std::vector<MatrixXd>& per_head, std::vector<double>& out) {
  for (const MatrixXd& m : per_head) {
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
      for (Eigen::Index c = 0; c < m.cols(); ++c) out.push_back(m(r, c));
    }
  }
}

bool listed_as_global(const MaskSpec& mask, std::int64_t position) {
  return std::find(mask.global_tokens.begin(), mask.global_tokens.end(), position) !=
         mask.global_tokens.end();
}

double default_scale_of(ScoreFunction score, std::int64_t head_dim) {
  return score == ScoreFunction::kScaledDot ? 1.0 / std::sqrt(static_cast<double>(head_dim)) : 1.0;
}

// The additive score's per-head matrices Wq [A, D], Wk [A, D] and vector v [A].
struct AdditiveHead {
  MatrixXd w_query;
  MatrixXd w_key;
  VectorXd v;
};

AdditiveHead additive_head(const AdditiveWeights& weights, std::int64_t head,
                           std::int64_t head_dim) {
  const std::int64_t hidden = weights.hidden;
  AdditiveHead result;
  result.w_query = to_matrix(weights.w_query.data + head * hidden * head_dim, hidden, head_dim);
  result.w_key = to_matrix(weights.w_key.data + head * hidden * head_dim, hidden, head_dim);
  result.v = to_matrix(weights.v.data + head * hidden, hidden, 1);
  return result;
}

// score(q, k) for every query and key of one head: [Nq, Nk].
MatrixXd head_scores(ScoreFunction score, const MatrixXd& q, const MatrixXd& k,
                     const AdditiveHead* additive) {
  MatrixXd scores(q.rows(), k.rows());
  for (Eigen::Index i = 0; i < q.rows(); ++i) {
    for (Eigen::Index j = 0; j < k.rows(); ++j) {
      const VectorXd qi = q.row(i).transpose();
      const VectorXd kj = k.row(j).transpose();
      switch (score) {
        case ScoreFunction::kScaledDot:
        case ScoreFunction::kDot:
          scores(i, j) = qi.dot(kj);
          break;
        case ScoreFunction::kCosine: {
          const double norms = qi.norm() * kj.norm();
          scores(i, j) = norms == 0.0 ? 0.0 : qi.dot(kj) / norms;
          break;
        }
        case ScoreFunction::kAdditive: {
          const VectorXd hidden =
              (additive->w_query * qi + additive->w_key * kj).array().tanh().matrix();
          scores(i, j) = additive->v.dot(hidden);
          break;
        }
      }
    }
  }
  return scores;
}

// Attention over per-head double matrices; the shared core of attention() and
// multi_head_attention().
Result attend(const AttentionShape& shape, const AttentionOptions& options,
              const std::vector<MatrixXd>& q, const std::vector<MatrixXd>& k,
              const std::vector<MatrixXd>& v, const Buckets& buckets) {
  const double scale = options.scale ? static_cast<double>(*options.scale)
                                     : default_scale_of(options.score, shape.head_dim);
  const double minus_inf = -std::numeric_limits<double>::infinity();

  // Grouped-query attention: k and v hold one matrix per K/V head, each read by `group`
  // consecutive query heads (ONNX repeats each K/V head that many times).
  const auto group = static_cast<std::int64_t>(q.size() / k.size());

  Result result;
  std::vector<MatrixXd> outputs;
  for (std::int64_t h = 0; h < shape.heads; ++h) {
    const std::size_t kv = static_cast<std::size_t>(h / group);
    AdditiveHead additive;
    if (options.score == ScoreFunction::kAdditive) {
      additive = additive_head(options.additive, h, shape.head_dim);
    }
    const MatrixXd scores = head_scores(options.score, q[h], k[kv], &additive);

    MatrixXd weights = MatrixXd::Zero(shape.query_len, shape.key_len);
    for (std::int64_t i = 0; i < shape.query_len; ++i) {
      std::vector<double> logits(static_cast<std::size_t>(shape.key_len), minus_inf);
      for (std::int64_t j = 0; j < shape.key_len; ++j) {
        if (visible(options.mask, shape, h, i, j) && shares_bucket(buckets, shape, h, i, j)) {
          logits[j] = logit(options, shape, scale, h, i, j, scores(i, j));
        }
      }
      keep_top_k(logits, options.top_k);
      const double max_logit = *std::max_element(logits.begin(), logits.end());
      if (max_logit == minus_inf) continue;  // no visible key: the row stays all zero
      double sum = 0.0;
      for (std::int64_t j = 0; j < shape.key_len; ++j) {
        weights(i, j) = logits[j] == minus_inf ? 0.0 : std::exp(logits[j] - max_logit);
        sum += weights(i, j);
      }
      weights.row(i) /= sum;
    }
    outputs.push_back(weights * v[kv]);

    for (std::int64_t i = 0; i < shape.query_len; ++i) {
      for (std::int64_t j = 0; j < shape.key_len; ++j) {
        result.weights.push_back(weights(i, j));
        result.scores.push_back(scores(i, j));
      }
    }
  }
  append_head_major(outputs, result.output);
  return result;
}

// The [rows, cols] matrix x W + b (b broadcast over rows; empty b means no bias).
MatrixXd project(const MatrixXd& x, const float* w, std::int64_t cols, FloatView bias) {
  MatrixXd y = x * to_matrix(w, x.cols(), cols);
  if (!bias.empty()) y.rowwise() += to_matrix(bias.data, 1, cols).row(0);
  return y;
}

// Columns h*width .. h*width+width-1 of a token-major [N, H*width] matrix, one block per head.
std::vector<MatrixXd> split_columns(const MatrixXd& token_major, std::int64_t heads,
                                    std::int64_t width) {
  std::vector<MatrixXd> per_head;
  for (std::int64_t h = 0; h < heads; ++h) {
    per_head.push_back(token_major.middleCols(h * width, width));
  }
  return per_head;
}

}  // namespace

bool visible(const MaskSpec& mask, const AttentionShape& shape, std::int64_t head,
             std::int64_t query, std::int64_t key) {
  const std::int64_t i = query + mask.query_offset;  // the query's position among the keys
  const std::int64_t j = key;

  const bool key_ok = (mask.key_lengths.empty() || j < mask.key_lengths[head]) &&
                      (mask.key_valid.empty() || mask.key_valid[j] != 0);
  const bool custom_ok = mask.custom.empty() || mask.custom[query * shape.key_len + j] != 0;
  const bool causal_ok = !mask.causal || j <= i;

  bool window_ok = true;
  if (mask.window) {
    const std::int64_t delta = j - i;
    const std::int64_t dilation = mask.window->dilation;
    window_ok = delta % dilation == 0 && -mask.window->before <= delta / dilation &&
                delta / dilation <= mask.window->after;
  }

  bool sparse_ok = true;
  const std::int64_t stride = mask.sparse.stride;
  switch (mask.sparse.pattern) {
    case SparsePattern::kNone:
      break;
    case SparsePattern::kStrided:
      sparse_ok = std::abs(i - j) < stride || (i - j) % stride == 0;
      break;
    case SparsePattern::kFixed:
      sparse_ok = i / stride == j / stride || j % stride >= stride - mask.sparse.summary;
      break;
  }

  const bool global = listed_as_global(mask, i) || listed_as_global(mask, j);
  return key_ok && custom_ok && causal_ok && (global || (window_ok && sparse_ok));
}

Result attention(const AttentionInputs& inputs, const AttentionOptions& options) {
  const AttentionShape& s = inputs.shape;
  const std::int64_t kv_heads = s.kv_heads == 0 ? s.heads : s.kv_heads;
  return attend(
      s, options, split_head_major(inputs.q.data, s.heads, s.query_len, s.head_dim),
      split_head_major(inputs.k.data, kv_heads, s.key_len, s.head_dim, inputs.kv_capacity),
      split_head_major(inputs.v.data, kv_heads, s.key_len, s.value_dim, inputs.kv_capacity),
      lsh_buckets(inputs, options.lsh));
}

MultiHeadResult multi_head_attention(const MultiHeadInputs& inputs,
                                     const AttentionOptions& options) {
  // The defaults of multihead.h, filled in here rather than by the library's resolve_shape().
  MultiHeadShape s = inputs.shape;
  if (s.value_dim == 0) s.value_dim = s.head_dim;
  if (s.key_len == 0) s.key_len = s.query_len;
  if (s.key_model_dim == 0) s.key_model_dim = s.model_dim;
  if (s.out_dim == 0) s.out_dim = s.model_dim;
  if (s.kv_heads == 0) s.kv_heads = s.heads;

  const MultiHeadWeights& w = inputs.weights;
  const MatrixXd x_query = to_matrix(inputs.x_query.data, s.query_len, s.model_dim);
  const MatrixXd x_key_value = inputs.x_key_value.empty()
                                   ? x_query
                                   : to_matrix(inputs.x_key_value.data, s.key_len, s.key_model_dim);

  const std::int64_t h = s.heads;
  const std::vector<MatrixXd> q =
      split_columns(project(x_query, w.w_query.data, h * s.head_dim, w.b_query), h, s.head_dim);
  const std::int64_t kv = s.kv_heads;
  const std::vector<MatrixXd> k =
      split_columns(project(x_key_value, w.w_key.data, kv * s.head_dim, w.b_key), kv, s.head_dim);
  const std::vector<MatrixXd> v = split_columns(
      project(x_key_value, w.w_value.data, kv * s.value_dim, w.b_value), kv, s.value_dim);

  const AttentionShape head_shape{s.heads, s.query_len, s.key_len, s.head_dim, s.value_dim, kv};
  // No hashing here: the buckets of projections computed in double would not be those of the
  // library's float projections (options.lsh is ignored).
  Result per_head = attend(head_shape, options, q, k, v, Buckets{});

  // Concatenate heads token-major: concat(i, h * Dv + c) = O[h, i, c].
  MatrixXd concat(s.query_len, h * s.value_dim);
  for (std::int64_t head = 0; head < h; ++head) {
    for (std::int64_t i = 0; i < s.query_len; ++i) {
      for (std::int64_t c = 0; c < s.value_dim; ++c) {
        concat(i, head * s.value_dim + c) =
            per_head.output[(head * s.query_len + i) * s.value_dim + c];
      }
    }
  }
  const MatrixXd out = project(concat, w.w_out.data, s.out_dim, w.b_out);

  MultiHeadResult result;
  for (std::int64_t i = 0; i < s.query_len; ++i) {
    for (std::int64_t c = 0; c < s.out_dim; ++c) result.output.push_back(out(i, c));
  }
  result.weights = std::move(per_head.weights);
  append_head_major(q, result.q);
  append_head_major(k, result.k);
  append_head_major(v, result.v);
  return result;
}

// c_out mirrors C's layout, [m, ldc] row-major: columns n..ldc-1 are what a correct kernel leaves
// untouched (copied from c_in, or 0 when c_in is null), so a test can compare the whole buffer.
void gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
          const float* b, std::size_t ldb, const float* c_in, std::size_t ldc, bool accumulate,
          std::vector<double>& c_out) {
  c_out.assign(m * ldc, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < ldc; ++j) {
      const double before = c_in != nullptr ? c_in[i * ldc + j] : 0.0;
      if (j >= n) {
        c_out[i * ldc + j] = before;
        continue;
      }
      double sum = accumulate ? before : 0.0;
      for (std::size_t p = 0; p < k; ++p) {
        sum += static_cast<double>(a[i * lda + p]) * static_cast<double>(b[p * ldb + j]);
      }
      c_out[i * ldc + j] = sum;
    }
  }
}

}  // namespace attnlens::reference
