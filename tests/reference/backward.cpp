// Attention and its gradients in double, loop by loop. With logits l_ij = c s_ij (c = scale /
// temperature, s the score), P = softmax over the visible keys and O = P V, the chain rule gives
//   dV_j = sum_i P_ij dO_i                   dP_ij = dO_i . v_j
//   dl_ij = P_ij (dP_ij - sum_j' P_ij' dP_ij')   (the softmax Jacobian)
//   dq_i = sum_j c dl_ij ds_ij/dq_i          dk_j = sum_i c dl_ij ds_ij/dk_j
// with ds/dq = k for the dot product and, for the cosine s = q.k / (|q| |k|),
//   ds/dq = k / (|q| |k|) - s q / |q|^2     (0 when q or k is zero, where the forward's s is 0).
#include "reference/backward.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/reference.h"

namespace attnlens::reference {
namespace {

constexpr double kMinusInf = -std::numeric_limits<double>::infinity();

struct Head {
  std::vector<double> score, weight;  // [Nq, Nk]
  std::vector<double> logsumexp;      // [Nq]
};

double dot(const double* a, const double* b, std::int64_t n) {
  double s = 0.0;
  for (std::int64_t x = 0; x < n; ++x) s += a[x] * b[x];
  return s;
}

double scale_of(const AttentionOptions& options, std::int64_t head_dim) {
  if (options.scale) return *options.scale;
  return options.score == ScoreFunction::kScaledDot ? 1.0 / std::sqrt(double(head_dim)) : 1.0;
}

// Scores, weights and log-sum-exp of head h.
Head forward_head(const AttentionShape& s, const AttentionOptions& options, std::int64_t h,
                  const double* q, const double* k) {
  const std::int64_t nq = s.query_len, nk = s.key_len, d = s.head_dim;
  const double c = scale_of(options, d) / options.temperature;
  Head head{std::vector<double>(nq * nk, 0.0), std::vector<double>(nq * nk, 0.0),
            std::vector<double>(nq, kMinusInf)};
  for (std::int64_t i = 0; i < nq; ++i) {
    const double* qi = q + i * d;
    std::vector<double> logits(nk, kMinusInf);
    double max = kMinusInf;
    for (std::int64_t j = 0; j < nk; ++j) {
      const double* kj = k + j * d;
      double score = dot(qi, kj, d);
      if (options.score == ScoreFunction::kCosine) {
        const double norms = std::sqrt(dot(qi, qi, d)) * std::sqrt(dot(kj, kj, d));
        score = norms == 0.0 ? 0.0 : score / norms;
      }
      head.score[i * nk + j] = score;
      if (visible(options.mask, s, h, i, j)) logits[j] = c * score;
      max = std::max(max, logits[j]);
    }
    if (max == kMinusInf) continue;  // sees no key: zero weights
    double sum = 0.0;
    for (std::int64_t j = 0; j < nk; ++j)
      sum += logits[j] == kMinusInf ? 0.0 : std::exp(logits[j] - max);
    head.logsumexp[i] = max + std::log(sum);
    for (std::int64_t j = 0; j < nk; ++j) {
      head.weight[i * nk + j] = logits[j] == kMinusInf ? 0.0 : std::exp(logits[j] - max) / sum;
    }
  }
  return head;
}

void add_output(const AttentionShape& s, const Head& head, const double* v, double* out) {
  for (std::int64_t i = 0; i < s.query_len; ++i) {
    for (std::int64_t j = 0; j < s.key_len; ++j) {
      for (std::int64_t c = 0; c < s.value_dim; ++c) {
        out[i * s.value_dim + c] += head.weight[i * s.key_len + j] * v[j * s.value_dim + c];
      }
    }
  }
}

// d score(x, y) / dx added into grad, times g: y for the dot product, the cosine's quotient rule.
void add_score_gradient(ScoreFunction score, const double* x, const double* y, std::int64_t d,
                        double s_xy, double g, double* grad) {
  if (score != ScoreFunction::kCosine) {
    for (std::int64_t t = 0; t < d; ++t) grad[t] += g * y[t];
    return;
  }
  const double nx = std::sqrt(dot(x, x, d)), ny = std::sqrt(dot(y, y, d));
  if (nx == 0.0 || ny == 0.0) return;
  for (std::int64_t t = 0; t < d; ++t) grad[t] += g * (y[t] / (nx * ny) - s_xy * x[t] / (nx * nx));
}

std::vector<double> widen(FloatView x) { return std::vector<double>(x.begin(), x.end()); }

// The K/V head query head h reads: heads / kv_heads consecutive query heads share one.
std::int64_t kv_head(const AttentionShape& s, std::int64_t h) {
  const std::int64_t kv_heads = s.kv_heads == 0 ? s.heads : s.kv_heads;
  return h / (s.heads / kv_heads);
}

}  // namespace

std::vector<double> attention_output(const AttentionShape& s, const AttentionOptions& options,
                                     const std::vector<double>& q, const std::vector<double>& k,
                                     const std::vector<double>& v) {
  std::vector<double> out(s.heads * s.query_len * s.value_dim, 0.0);
  for (std::int64_t h = 0; h < s.heads; ++h) {
    const std::int64_t kv = kv_head(s, h);
    const Head head = forward_head(s, options, h, q.data() + h * s.query_len * s.head_dim,
                                   k.data() + kv * s.key_len * s.head_dim);
    add_output(s, head, v.data() + kv * s.key_len * s.value_dim,
               out.data() + h * s.query_len * s.value_dim);
  }
  return out;
}

BackwardResult attention_backward(const AttentionInputs& inputs, FloatView d_output,
                                  const AttentionOptions& options) {
  const AttentionShape& s = inputs.shape;
  const std::int64_t nq = s.query_len, nk = s.key_len, d = s.head_dim, dv = s.value_dim;
  const double c = scale_of(options, d) / options.temperature;
  const std::vector<double> q = widen(inputs.q), k = widen(inputs.k), v = widen(inputs.v);
  const std::vector<double> d_out = widen(d_output);
  BackwardResult r;
  r.output.assign(s.heads * nq * dv, 0.0);
  r.dq.assign(q.size(), 0.0);
  r.dk.assign(k.size(), 0.0);
  r.dv.assign(v.size(), 0.0);
  for (std::int64_t h = 0; h < s.heads; ++h) {
    const std::int64_t kv = kv_head(s, h);  // its gradients add up over the query heads
    const double* qh = q.data() + h * nq * d;
    const double* kh = k.data() + kv * nk * d;
    const double* vh = v.data() + kv * nk * dv;
    const double* doh = d_out.data() + h * nq * dv;
    const Head head = forward_head(s, options, h, qh, kh);
    add_output(s, head, vh, r.output.data() + h * nq * dv);
    r.row_logsumexp.insert(r.row_logsumexp.end(), head.logsumexp.begin(), head.logsumexp.end());
    for (std::int64_t i = 0; i < nq; ++i) {
      const double* p = head.weight.data() + i * nk;
      std::vector<double> dp(nk);
      double expected_dp = 0.0;  // sum_j P_ij dP_ij
      for (std::int64_t j = 0; j < nk; ++j) {
        dp[j] = dot(doh + i * dv, vh + j * dv, dv);
        expected_dp += p[j] * dp[j];
        for (std::int64_t t = 0; t < dv; ++t)
          r.dv[(kv * nk + j) * dv + t] += p[j] * doh[i * dv + t];
      }
      for (std::int64_t j = 0; j < nk; ++j) {
        const double g = c * p[j] * (dp[j] - expected_dp);
        if (g == 0.0) continue;
        const double score = head.score[i * nk + j];
        add_score_gradient(options.score, qh + i * d, kh + j * d, d, score, g,
                           r.dq.data() + (h * nq + i) * d);
        add_score_gradient(options.score, kh + j * d, qh + i * d, d, score, g,
                           r.dk.data() + (kv * nk + j) * d);
      }
    }
  }
  return r;
}

}  // namespace attnlens::reference
