// Per-head score operands, shared by both strategies.
//
// Every score function becomes "a query row against a packed tile of keys":
//   dot / scaled dot   queries Q,            keys K^T
//   cosine             queries Q / |Q|,      keys (K / |K|)^T
//   additive           queries Q Wq^T [Nq,A], keys (K Wk^T)^T, then v . tanh(q + k)
// Keys are packed tile by tile as [depth, key_block] blocks so the score GEMM streams through
// contiguous memory whatever Nk is. An optional factor (scale / temperature) is folded into the
// queries (or into v for additive), so scores come out as logits with no extra pass.
#pragma once

#include <cstdint>
#include <vector>

#include "attnlens/attention.h"
#include "attnlens/kernels.h"

namespace attnlens::detail {

class HeadOperands {
 public:
  // Prepares head `head`; `fold` multiplies every score (1 for raw scores).
  HeadOperands(const AttentionInputs& inputs, const AttentionOptions& options, std::int64_t head,
               std::int64_t key_block, float fold, const KernelSet& kernels);
  HeadOperands(const HeadOperands&) = delete;  // queries_ may point into query_storage_
  HeadOperands& operator=(const HeadOperands&) = delete;

  // s[r * lds + c] = score(query q0 + r, key tile*key_block + c) for r < rows, c < width.
  void scores(std::int64_t q0, std::int64_t rows, std::int64_t tile, std::int64_t width,
              float* s, std::size_t lds) const;

  std::int64_t key_block() const { return key_block_; }
  std::int64_t bytes() const;

 private:
  const KernelSet& kernels_;
  ScoreFunction score_;
  std::int64_t depth_;      // inner size of the score: D, or A for additive
  std::int64_t key_block_;
  const float* queries_;    // [Nq, depth], into the input or query_storage_
  std::vector<float> query_storage_;
  std::vector<float> packed_keys_;  // [tiles, depth, key_block]
  std::vector<float> additive_v_;   // [A], with the fold applied
};

// Ceiling division for positive sizes.
inline std::int64_t div_up(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace attnlens::detail
