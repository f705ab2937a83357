// The reference's modern attention terms, from attention.h's formula in double and sharing no code
// with src/: the logit of one (query, key) with soft cap, bias, ALiBi and temperature, the top-k
// selection of a row, and hashed attention's buckets from LshSpec's bit-exact definition.
#pragma once

#include <cstdint>
#include <vector>

#include "attnlens/attention.h"

namespace attnlens::reference {

// (softcap(scale * score) + bias + alibi) / temperature for query i, key j of head h; the
// derivative of it with respect to the score into `d_score` when given.
double logit(const AttentionOptions& options, const AttentionShape& shape, double scale,
             std::int64_t h, std::int64_t i, std::int64_t j, double score,
             double* d_score = nullptr);

// Hides (-inf) all but the k largest of `logits` (ties to the lower index); k 0 keeps all.
void keep_top_k(std::vector<double>& logits, std::int64_t k);

// Every query's and key's bucket in every round, or empty without hashing.
struct Buckets {
  std::vector<std::vector<std::int64_t>> queries;  // [round][h * Nq + i]
  std::vector<std::vector<std::int64_t>> keys;     // [round][kv * Nk + j]
};
Buckets lsh_buckets(const AttentionInputs& inputs, const LshSpec& spec);
// Query i of head h and key j share a bucket in some round (true without hashing).
bool shares_bucket(const Buckets& buckets, const AttentionShape& shape, std::int64_t h,
                   std::int64_t i, std::int64_t j);

}  // namespace attnlens::reference
