// Materialized attention: the whole [Nq, Nk] weight matrix of one head at a time. It is what
// the visualisation needs (weights and raw scores), and the fastest path for short texts.
//
// It runs the streaming strategy's panel steps with one chunk spanning every key, so the online
// softmax degenerates to the plain one, and writes each panel's scores and weights out as rows.
#include <algorithm>
#include <vector>

#include "attention_internal.h"
#include "prepare.h"
#include "query_panel.h"
#include "validate.h"

namespace attnlens::detail {

AttentionStats run_materialized(const Problem& p) {
  const AttentionShape& s = p.inputs.shape;
  const std::int64_t nk = s.key_len;
  const std::int64_t padded_keys = round_up(nk, kPanelKeys);
  const std::size_t head_scores = to_size(s.query_len * nk, sizeof(float), "query_len*key_len");
  const bool raw_scores = !p.outputs.scores.empty();
  const auto keys = static_cast<std::size_t>(nk);

  // Weights go straight into the caller's buffer when there is one.
  std::vector<float> scratch;
  if (p.outputs.weights.empty()) scratch.resize(head_scores);

  AttentionStats stats;
  stats.strategy = Strategy::kMaterialized;
  stats.tiles_total = stats.tiles_visited = s.heads * div_up(nk, kMaterializedKeyBlock);

  const float ones[kPanelQueries] = {1, 1, 1, 1, 1, 1, 1, 1};
  for (std::int64_t h = 0; h < s.heads; ++h) {
    float* weights =
        p.outputs.weights.empty() ? scratch.data() : p.outputs.weights.data + h * head_scores;
    float* scores = raw_scores ? p.outputs.scores.data + h * head_scores : nullptr;
    float* out = p.outputs.output.data + h * s.query_len * s.value_dim;
    // Raw scores are wanted before scale and temperature, so then the factor comes afterwards.
    const float factor = base2_logit_factor(p.logit_factor);
    const HeadOperands ops(p.inputs, p.options, h, raw_scores ? 1.0f : factor, p.kernels);
    QueryPanel qp(p, ops, h, padded_keys);
    stats.scratch_bytes = std::max(
        stats.scratch_bytes,
        static_cast<std::int64_t>(scratch.size() * sizeof(float)) + qp.bytes() + ops.bytes());

    for (std::int64_t q0 = 0; q0 < s.query_len; q0 += kPanelQueries) {
      const std::int64_t rows = std::min(kPanelQueries, s.query_len - q0);
      const auto panel_rows = static_cast<std::size_t>(rows);
      qp.start(q0, rows);
      qp.compute_scores(0, padded_keys);
      if (raw_scores) {
        p.kernels.panel_to_rows(keys, qp.chunk_scores(), panel_rows, ones, scores + q0 * nk, keys);
        qp.scale_scores(factor);
      }
      if (p.check_scores) qp.check_finite(0, nk);
      qp.apply_mask(0, nk);
      qp.softmax_and_values();
      qp.finish(out + q0 * s.value_dim);
      float inverse_sums[kPanelQueries];
      for (std::int64_t j = 0; j < kPanelQueries; ++j) inverse_sums[j] = qp.inverse_sum(j);
      p.kernels.panel_to_rows(keys, qp.chunk_scores(), panel_rows, inverse_sums, weights + q0 * nk, keys);
    }
  }
  return stats;
}

}  // namespace attnlens::detail
