// Materialized attention: the whole [Nq, Nk] score matrix of one head at a time. It is what
// the visualisation needs (weights and raw scores), and the fastest path for short texts.
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "attention_internal.h"
#include "prepare.h"
#include "validate.h"

namespace attnlens::detail {

AttentionStats run_materialized(const Problem& p) {
  const AttentionShape& s = p.inputs.shape;
  const std::size_t nq = static_cast<std::size_t>(s.query_len);
  const std::size_t nk = static_cast<std::size_t>(s.key_len);
  const std::size_t head_scores = to_size(s.query_len * s.key_len, sizeof(float), "query_len*key_len");
  const float ninf = -std::numeric_limits<float>::infinity();

  // Weights go straight into the caller's buffer when there is one.
  std::vector<float> scratch;
  if (p.outputs.weights.empty()) scratch.resize(head_scores);

  AttentionStats stats;
  stats.strategy = Strategy::kMaterialized;
  const std::int64_t tiles = div_up(s.key_len, kMaterializedKeyBlock);
  stats.tiles_total = stats.tiles_visited = s.heads * tiles;
  stats.scratch_bytes = static_cast<std::int64_t>(scratch.size() * sizeof(float));

  for (std::int64_t h = 0; h < s.heads; ++h) {
    float* w = p.outputs.weights.empty() ? scratch.data() : p.outputs.weights.data + h * head_scores;
    const HeadOperands ops(p.inputs, p.options, h, kMaterializedKeyBlock, 1.0f, p.kernels);
    stats.scratch_bytes = std::max(stats.scratch_bytes,
                                   static_cast<std::int64_t>(scratch.size() * sizeof(float)) + ops.bytes());
    for (std::int64_t t = 0; t < tiles; ++t) {
      const std::int64_t j0 = t * kMaterializedKeyBlock;
      const std::int64_t width = std::min(kMaterializedKeyBlock, s.key_len - j0);
      ops.scores(0, s.query_len, t, width, w + j0, nk);
    }
    if (!p.outputs.scores.empty()) {
      std::memcpy(p.outputs.scores.data + h * head_scores, w, head_scores * sizeof(float));
    }
    for (std::size_t i = 0; i < nq; ++i) {
      float* row = w + i * nk;
      for (std::size_t j = 0; j < nk; ++j) row[j] *= p.logit_factor;
      if (p.check_scores) require_finite_scores(row, 1, s.key_len, nk, h, static_cast<std::int64_t>(i), 0);
      if (!p.mask.restricts_nothing()) {
        for (std::size_t j = 0; j < nk; ++j) {
          if (!p.mask.visible(h, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j))) row[j] = ninf;
        }
      }
      const float max = p.kernels.row_max(row, nk);
      if (max == ninf) {  // no visible key: zero weights, zero output
        std::fill(row, row + nk, 0.0f);
        continue;
      }
      const float inv = 1.0f / p.kernels.exp_sum(row, max, row, nk);
      for (std::size_t j = 0; j < nk; ++j) row[j] *= inv;
    }
    p.kernels.gemm(nq, static_cast<std::size_t>(s.value_dim), nk, w, nk,
                   p.inputs.v.data + h * s.key_len * s.value_dim,
                   static_cast<std::size_t>(s.value_dim),
                   p.outputs.output.data + h * s.query_len * s.value_dim,
                   static_cast<std::size_t>(s.value_dim), false);
  }
  return stats;
}

}  // namespace attnlens::detail
