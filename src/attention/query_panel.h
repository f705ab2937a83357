// One panel of up to 8 queries of one head, run against keys a chunk at a time: the steps both
// strategies share. Scores are held transposed, [key][query], so each row of a chunk holds the
// 8 queries side by side and the online softmax and both products run on whole vectors.
//
//   start(q0, rows)            pack the queries, reset the running max and sum
//   compute_scores(a, b)       scores of keys [a, b), a and b multiples of 4, times the fold
//                              (base-2 logits, see base2_logit_factor, unless terms follow)
//   check_finite               on the keys [lo, hi) of the chunk that count
//   finish_logits(lo, hi)      soft cap, bias and ALiBi (logit_terms.h), when the call has them
//   apply_mask(lo, hi)         the mask and hashed attention's buckets; the rest are -inf
//   collect / settle / keep_top_k   top_k: the panel's share of TopKSelector (top_k.h)
//   softmax_and_values()       one online-softmax step, then O^T += V^T P^T (rescaled)
//   finish(out)                out[j][:] = O^T[:][j] / sum[j]
//   write_logsumexp(out)       out[j] = ln(sum[j] * 2^max[j]), when the caller wants it
//
// Everything but the constructor and check_finite is noexcept, kernels included: under
// Emscripten's JS-based exceptions, a call that might throw from a scope with destructors (the
// strategies' loops hold vectors) goes through a JS trampoline, thousands of times per call.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "attention_internal.h"
#include "prepare.h"
#include "top_k.h"

namespace attnlens::detail {

class QueryPanel {
 public:
  // `max_chunk`: the most keys one compute_scores() call may cover (a multiple of 4). The panel's
  // rows q0 + j count from the first row of `head` on, through the rows of the heads after it
  // (q, the output and row_logsumexp hold each head's Nq rows in turn): query (q0 + j) % Nq of
  // head `head` + (q0 + j) / Nq, so a decode step can put several query heads of one K/V head
  // into one panel (attention_streaming.cpp). Soft cap, bias, ALiBi, hashed attention, top_k and
  // the additive score assume rows of one head.
  QueryPanel(const Problem& problem, const HeadOperands& operands, std::int64_t head,
             std::int64_t max_chunk);

  void start(std::int64_t q0, std::int64_t rows) noexcept;
  void compute_scores(std::int64_t a, std::int64_t b) noexcept;
  void scale_scores(float factor) noexcept;  // for raw scores computed with fold 1
  // NonFiniteError naming the first non-finite logit among keys [lo, hi) of real queries. The
  // logits are in base 2 here (x 1.44), so a finite logit within 1.44x of FLT_MAX also raises.
  void check_finite(std::int64_t lo, std::int64_t hi) const;
  void finish_logits(std::int64_t lo, std::int64_t hi) noexcept;
  // NonFiniteError naming the first finished logit that is NaN or +inf among keys [lo, hi) (a
  // bias or ALiBi term past float32; -inf is a hidden key).
  void check_finished(std::int64_t lo, std::int64_t hi) const;
  // -inf for keys of the chunk outside [lo, hi), for keys the mask hides and for keys outside
  // the query's hash buckets.
  void apply_mask(std::int64_t lo, std::int64_t hi) noexcept;
  void collect_top_k(std::int64_t lo, std::int64_t hi) noexcept;
  void settle_top_k() noexcept;
  void keep_top_k(std::int64_t lo, std::int64_t hi) noexcept;
  void softmax_and_values() noexcept;
  // Normalised outputs of the real queries into out[j * value_dim ...].
  void finish(float* out) const noexcept;
  // The real queries' log-sum-exp of their logits (natural log, -inf where nothing is visible)
  // into out[j], valid after the last softmax_and_values (AttentionOutputs::row_logsumexp).
  void write_logsumexp(float* out) const noexcept;

  // The current chunk, [b - a][8]: logits after compute_scores, probabilities (not yet divided
  // by sum) after softmax_and_values.
  const float* chunk_scores() const noexcept { return scores_.data(); }
  std::int64_t chunk_begin() const noexcept { return a_; }
  std::int64_t rows() const noexcept { return rows_; }
  // 1 / sum per query (0 when nothing is visible), valid after the last softmax_and_values.
  float inverse_sum(std::int64_t j) const noexcept {
    return sum_[j] > 0.0f ? 1.0f / sum_[j] : 0.0f;
  }

  std::int64_t bytes() const noexcept;

 private:
  std::int64_t head_of(std::int64_t j) const noexcept { return head_ + (q0_ + j) / query_len_; }
  std::int64_t query_of(std::int64_t j) const noexcept { return (q0_ + j) % query_len_; }

  const Problem& p_;
  const HeadOperands& ops_;
  std::int64_t head_;
  std::int64_t query_len_;  // Nq
  std::int64_t q0_ = 0, rows_ = 0;
  std::int64_t a_ = 0, b_ = 0;
  bool has_output_ = false;      // false until the first chunk wrote output_t_
  std::vector<float> queries_;   // [depth][8]
  std::vector<float> scores_;    // [max_chunk][8]
  std::vector<float> output_t_;  // [Dv rounded up to 4][8]
  std::vector<float> row_;       // [max_chunk], one query's additive scores
  float max_[kPanelQueries], sum_[kPanelQueries], rescale_[kPanelQueries];
  std::optional<TopKSelector> top_k_;  // with top_k only
};

}  // namespace attnlens::detail
