#include "lsh.h"

#include <string>

#include "attnlens/errors.h"
#include "checks.h"
#include "parallel.h"

namespace attnlens::detail {
namespace {

std::uint32_t mix(std::uint32_t h) {
  h ^= h >> 16;
  h *= 0x7FEB352Du;
  h ^= h >> 15;
  h *= 0x846CA68Bu;
  h ^= h >> 16;
  return h;
}

}  // namespace

void validate_lsh(const LshSpec& spec) {
  if (spec.buckets == 0) return;
  if (spec.buckets < 2 || spec.buckets > 1024 || spec.buckets % 2 != 0) {
    throw RangeError("lsh.buckets",
                     "must be 0 (no hashing) or an even number from 2 to 1024 (each round hashes "
                     "to the sign of buckets / 2 projections), got " +
                         std::to_string(spec.buckets));
  }
  require_in_range(spec.rounds, 1, 16, "lsh.rounds");
}

std::vector<signed char> lsh_signs(const LshSpec& spec, std::int64_t depth) {
  const std::int64_t half = spec.buckets / 2;
  std::vector<signed char> signs(static_cast<std::size_t>(spec.rounds * depth * half));
  std::uint32_t n = 0;  // (r * D + d) * half + c, counted in the same order
  for (signed char& s : signs) {
    const std::uint32_t h = mix(spec.seed * 0x9E3779B9u + n * 0x85EBCA6Bu + 0x68E31DA4u);
    s = (h & 0x80000000u) != 0 ? -1 : 1;
    ++n;
  }
  return signs;
}

std::int64_t lsh_bucket(const float* row, std::int64_t depth, const signed char* signs,
                        std::int64_t half) noexcept {
  double projections[512];  // half <= 512 (validate_lsh)
  for (std::int64_t c = 0; c < half; ++c) projections[c] = 0.0;
  for (std::int64_t d = 0; d < depth; ++d) {
    const double x = row[d];
    const signed char* sign = signs + d * half;
    for (std::int64_t c = 0; c < half; ++c) projections[c] += sign[c] > 0 ? x : -x;
  }
  // The first of the largest among p_0 .. p_{half-1}, then -p_0 .. -p_{half-1}.
  std::int64_t best_index = 0;
  double best = projections[0];
  for (std::int64_t c = 1; c < half; ++c) {
    if (projections[c] > best) best = projections[best_index = c];
  }
  for (std::int64_t c = 0; c < half; ++c) {
    if (-projections[c] > best) {
      best = -projections[c];
      best_index = half + c;
    }
  }
  return best_index;
}

LshBuckets::LshBuckets(const AttentionInputs& in, const LshSpec& spec, int threads)
    : rounds_(spec.rounds),
      heads_(in.shape.heads),
      kv_heads_(kv_head_count(in.shape)),
      group_(in.shape.heads / kv_head_count(in.shape)),
      query_len_(in.shape.query_len),
      key_len_(in.shape.key_len),
      queries_(static_cast<std::size_t>(rounds_ * heads_ * query_len_)),
      keys_(static_cast<std::size_t>(rounds_ * kv_heads_ * key_len_)) {
  const AttentionShape& s = in.shape;
  const std::int64_t d = s.head_dim, half = spec.buckets / 2;
  const std::int64_t capacity = in.kv_capacity > 0 ? in.kv_capacity : s.key_len;
  const std::vector<signed char> signs = lsh_signs(spec, d);
  // One task per (round, head) of queries, then per (round, K/V head) of keys: each bucket is
  // computed the same way whoever computes it.
  const std::int64_t query_tasks = rounds_ * heads_;
  parallel_for(query_tasks + rounds_ * kv_heads_, threads, [&](std::int64_t task) {
    const bool queries = task < query_tasks;
    const std::int64_t t = queries ? task : task - query_tasks;
    const std::int64_t per_round = queries ? heads_ : kv_heads_;
    const std::int64_t r = t / per_round, h = t % per_round;
    const signed char* round_signs = signs.data() + r * d * half;
    if (queries) {
      const float* q = in.q.data + h * query_len_ * d;
      std::uint16_t* out = queries_.data() + t * query_len_;
      for (std::int64_t i = 0; i < query_len_; ++i) {
        out[i] = static_cast<std::uint16_t>(lsh_bucket(q + i * d, d, round_signs, half));
      }
    } else {
      const float* k = in.k.data + h * capacity * d;
      std::uint16_t* out = keys_.data() + t * key_len_;
      for (std::int64_t j = 0; j < key_len_; ++j) {
        out[j] = static_cast<std::uint16_t>(lsh_bucket(k + j * d, d, round_signs, half));
      }
    }
  });
}

std::int64_t LshBuckets::bytes() const {
  return static_cast<std::int64_t>((queries_.size() + keys_.size()) * sizeof(std::uint16_t));
}

}  // namespace attnlens::detail
