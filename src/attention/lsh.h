// Hashed attention's buckets (LshSpec, attention.h): every query's and key's bucket in every
// round, computed once per call (O(rounds * (H Nq + Hkv Nk) * D * buckets / 2), in double), and
// the per-element question the masking asks.
//
// The hash is specified to the bit, so that every platform, any other backend and the double
// reference find the same buckets: with half = buckets / 2, the sign of R_r[d][c] is the top bit
// of mix(seed * 0x9E3779B9 + n * 0x85EBCA6B + 0x68E31DA4) for n = (r * D + d) * half + c, all in
// 32-bit unsigned arithmetic, where mix(h) is h ^= h >> 16, h *= 0x7FEB352D, h ^= h >> 15,
// h *= 0x846CA68B, h ^= h >> 16 (set: -1, clear: +1). A row x projects to p_c = sum_d
// sign(R_r[d][c]) x_d, summed in double for d = 0, 1, ...; its bucket is the first index of the
// largest of p_0, ..., p_{half-1}, -p_0, ..., -p_{half-1}.
#pragma once

#include <cstdint>
#include <vector>

#include "attnlens/attention.h"

namespace attnlens::detail {

// RangeError naming lsh.buckets or lsh.rounds.
void validate_lsh(const LshSpec& spec);

// The sign matrices of every round, [rounds][D][half], as +1 / -1.
std::vector<signed char> lsh_signs(const LshSpec& spec, std::int64_t depth);

// The bucket of one row of `depth` values under one round's signs ([D][half]).
std::int64_t lsh_bucket(const float* row, std::int64_t depth, const signed char* signs,
                        std::int64_t half) noexcept;

class LshBuckets {
 public:
  // The validated inputs (k and v rows kv_capacity apart per head); spec.buckets > 0.
  LshBuckets(const AttentionInputs& inputs, const LshSpec& spec, int threads);

  // Whether query `query` of `head` and key `key` (of the K/V head it reads) share a bucket in
  // some round.
  bool shares_bucket(std::int64_t head, std::int64_t query, std::int64_t key) const noexcept {
    const std::int64_t kv = head / group_;
    for (std::int64_t r = 0; r < rounds_; ++r) {
      if (queries_[static_cast<std::size_t>((r * heads_ + head) * query_len_ + query)] ==
          keys_[static_cast<std::size_t>((r * kv_heads_ + kv) * key_len_ + key)]) {
        return true;
      }
    }
    return false;
  }

  std::int64_t bytes() const;

 private:
  std::int64_t rounds_, heads_, kv_heads_, group_, query_len_, key_len_;
  std::vector<std::uint16_t> queries_;  // [rounds][H][Nq]
  std::vector<std::uint16_t> keys_;     // [rounds][Hkv][Nk]
};

}  // namespace attnlens::detail
