#include "reference/terms.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace attnlens::reference {

double logit(const AttentionOptions& options, const AttentionShape& shape, double scale,
             std::int64_t h, std::int64_t i, std::int64_t j, double score, double* d_score) {
  double s = scale * score;
  double ds = scale;
  if (options.softcap > 0.0f) {
    const double cap = options.softcap;
    const double t = std::tanh(s / cap);
    s = cap * t;
    ds = scale * (1.0 - t * t);
  }
  if (!options.bias.empty()) {
    const std::int64_t matrix = shape.query_len * shape.key_len;
    const std::int64_t head = static_cast<std::int64_t>(options.bias.size) == matrix ? 0 : h;
    s += options.bias[static_cast<std::size_t>(head * matrix + i * shape.key_len + j)];
  }
  if (!options.alibi_slopes.empty()) {
    const double position = static_cast<double>(i + options.mask.query_offset);
    s -= options.alibi_slopes[static_cast<std::size_t>(h)] *
         std::abs(position - static_cast<double>(j));
  }
  if (d_score != nullptr) *d_score = ds / options.temperature;
  return s / options.temperature;
}

void keep_top_k(std::vector<double>& logits, std::int64_t k) {
  const double minus_inf = -std::numeric_limits<double>::infinity();
  std::vector<std::size_t> order;
  for (std::size_t j = 0; j < logits.size(); ++j) {
    if (logits[j] != minus_inf) order.push_back(j);
  }
  if (k == 0 || static_cast<std::int64_t>(order.size()) <= k) return;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return logits[a] > logits[b]; });
  for (std::size_t n = static_cast<std::size_t>(k); n < order.size(); ++n) {
    logits[order[n]] = minus_inf;
  }
}

namespace {

// The sign of R_r[d][c] as LshSpec defines it (attention.h, src/attention/lsh.h).
int sign_of(std::uint32_t seed, std::uint32_t n) {
  std::uint32_t h = seed * 0x9E3779B9u + n * 0x85EBCA6Bu + 0x68E31DA4u;
  h = (h ^ (h >> 16)) * 0x7FEB352Du;
  h = (h ^ (h >> 15)) * 0x846CA68Bu;
  h ^= h >> 16;
  return (h >> 31) != 0 ? -1 : 1;
}

std::int64_t bucket_of(const float* x, std::int64_t depth, std::int64_t round, std::int64_t half,
                       std::uint32_t seed) {
  std::vector<double> values(static_cast<std::size_t>(2 * half));
  for (std::int64_t c = 0; c < half; ++c) {
    double p = 0.0;
    for (std::int64_t d = 0; d < depth; ++d) {
      const auto n = static_cast<std::uint32_t>((round * depth + d) * half + c);
      p += sign_of(seed, n) * static_cast<double>(x[d]);
    }
    values[static_cast<std::size_t>(c)] = p;
    values[static_cast<std::size_t>(half + c)] = -p;
  }
  return std::max_element(values.begin(), values.end()) - values.begin();  // the first maximum
}

}  // namespace

Buckets lsh_buckets(const AttentionInputs& in, const LshSpec& spec) {
  Buckets b;
  if (spec.buckets == 0) return b;
  const AttentionShape& s = in.shape;
  const std::int64_t kv_heads = s.kv_heads == 0 ? s.heads : s.kv_heads;
  const std::int64_t capacity = in.kv_capacity > 0 ? in.kv_capacity : s.key_len;
  const std::int64_t d = s.head_dim, half = spec.buckets / 2;
  for (std::int64_t r = 0; r < spec.rounds; ++r) {
    std::vector<std::int64_t> queries, keys;
    for (std::int64_t row = 0; row < s.heads * s.query_len; ++row) {
      queries.push_back(bucket_of(in.q.data + row * d, d, r, half, spec.seed));
    }
    for (std::int64_t h = 0; h < kv_heads; ++h) {
      for (std::int64_t j = 0; j < s.key_len; ++j) {
        keys.push_back(bucket_of(in.k.data + (h * capacity + j) * d, d, r, half, spec.seed));
      }
    }
    b.queries.push_back(std::move(queries));
    b.keys.push_back(std::move(keys));
  }
  return b;
}

bool shares_bucket(const Buckets& buckets, const AttentionShape& shape, std::int64_t h,
                   std::int64_t i, std::int64_t j) {
  if (buckets.queries.empty()) return true;
  const std::int64_t kv_heads = shape.kv_heads == 0 ? shape.heads : shape.kv_heads;
  const std::int64_t kv = h / (shape.heads / kv_heads);
  for (std::size_t r = 0; r < buckets.queries.size(); ++r) {
    if (buckets.queries[r][static_cast<std::size_t>(h * shape.query_len + i)] ==
        buckets.keys[r][static_cast<std::size_t>(kv * shape.key_len + j)]) {
      return true;
    }
  }
  return false;
}

}  // namespace attnlens::reference
