// One panel of up to 8 queries of one head, run against keys a chunk at a time: the steps both
// strategies share. Scores are held transposed, [key][query], so each row of a chunk holds the
// 8 queries side by side and the online softmax and both products run on whole vectors.
//
//   start(q0, rows)            pack the queries, reset the running max and sum
//   compute_scores(a, b)       logits of keys [a, b), a and b multiples of 4
//   check_finite / apply_mask  on the keys [lo, hi) of the chunk that count; the rest are -inf
//   softmax_and_values()       one online-softmax step, then O^T += V^T P^T (rescaled)
//   finish(out)                out[j][:] = O^T[:][j] / sum[j]
#pragma once

#include <cstdint>
#include <vector>

#include "attention_internal.h"
#include "prepare.h"

namespace attnlens::detail {

class QueryPanel {
 public:
  // `max_chunk`: the most keys one compute_scores() call may cover (a multiple of 4).
  QueryPanel(const Problem& problem, const HeadOperands& operands, std::int64_t head,
             std::int64_t max_chunk);

  void start(std::int64_t q0, std::int64_t rows);
  void compute_scores(std::int64_t a, std::int64_t b);
  void scale_scores(float factor);  // for raw scores computed with fold 1
  // NonFiniteError naming the first non-finite logit among keys [lo, hi) of real queries.
  void check_finite(std::int64_t lo, std::int64_t hi) const;
  // -inf for keys of the chunk outside [lo, hi) and for keys the mask hides.
  void apply_mask(std::int64_t lo, std::int64_t hi);
  void softmax_and_values();
  // Normalised outputs of the real queries into out[j * value_dim ...].
  void finish(float* out) const;

  // The current chunk, [b - a][8]: logits after compute_scores, probabilities (not yet divided
  // by sum) after softmax_and_values.
  const float* chunk_scores() const { return scores_.data(); }
  std::int64_t chunk_begin() const { return a_; }
  std::int64_t rows() const { return rows_; }
  // 1 / sum per query (0 when nothing is visible), valid after the last softmax_and_values.
  float inverse_sum(std::int64_t j) const { return sum_[j] > 0.0f ? 1.0f / sum_[j] : 0.0f; }

  std::int64_t bytes() const;

 private:
  const Problem& p_;
  const HeadOperands& ops_;
  std::int64_t head_;
  std::int64_t q0_ = 0, rows_ = 0;
  std::int64_t a_ = 0, b_ = 0;
  bool has_output_ = false;  // false until the first chunk wrote output_t_
  std::vector<float> queries_;   // [depth][8]
  std::vector<float> scores_;    // [max_chunk][8]
  std::vector<float> output_t_;  // [Dv rounded up to 4][8]
  float max_[kPanelQueries], sum_[kPanelQueries], rescale_[kPanelQueries];
};

}  // namespace attnlens::detail
