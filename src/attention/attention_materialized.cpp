// Materialized attention: the whole [Nq, Nk] weight matrix of one head at a time. It is what
// the visualisation needs (weights and raw scores), and the fastest path for short texts.
//
// It runs the streaming strategy's panel steps with one chunk spanning every key, so the online
// softmax degenerates to the plain one, and writes each panel's scores and weights out as rows.
// Threads (options.threads) take tasks of consecutive query panels of one head (head_tasks.h).
#include <algorithm>
#include <memory>
#include <vector>

#include "attention_internal.h"
#include "head_tasks.h"
#include "parallel.h"
#include "prepare.h"
#include "query_panel.h"
#include "validate.h"

namespace attnlens::detail {

namespace {

// One slot's operands (operand_slot: a K/V head and the query heads reading it), and their share
// of the scratch meter.
struct MaterializedHead {
  MaterializedHead(const Problem& p, std::int64_t h, float fold, ScratchMeter& meter)
      : ops(p.inputs, p.options, h, fold, p.value_scale, p.kernels), lease(meter, ops.bytes()) {}
  HeadOperands ops;
  ScratchLease lease;
};

}  // namespace

AttentionStats run_materialized(const Problem& p) {
  const AttentionShape& s = p.inputs.shape;
  const std::int64_t nk = s.key_len;
  const std::int64_t padded_keys = round_up(nk, kPanelKeys);
  const std::size_t head_scores = to_size(s.query_len * nk, sizeof(float), "query_len*key_len");
  const bool raw_scores = !p.outputs.scores.empty();
  const auto keys = static_cast<std::size_t>(nk);
  // Raw scores are wanted before scale and temperature, so then the factor comes afterwards.
  const float factor = p.terms.query_fold;

  const std::vector<HeadTask> tasks =
      head_tasks(s.heads, div_up(s.query_len, kPanelQueries), p.threads);
  const auto slot_of = [&](std::int64_t h) { return operand_slot(s, p.options.score, h); };
  SharedHeads<MaterializedHead> heads(operand_slot_count(s, p.options.score), tasks,
                                      [&](const HeadTask& t) { return slot_of(t.head); });
  ScratchMeter meter;

  // Query panels [task.begin, task.end) of one head.
  const auto run_task = [&](std::int64_t index) {
    const HeadTask& task = tasks[static_cast<std::size_t>(index)];
    const std::int64_t h = task.head;
    const HeadLease<MaterializedHead> lease(heads, slot_of(h));
    MaterializedHead& head = heads.acquire(slot_of(h), [&] {
      return std::make_unique<MaterializedHead>(p, h, raw_scores ? 1.0f : factor, meter);
    });
    // Weights go straight into the caller's buffer; without one, into the task's own rows (the
    // materialized strategy forms the matrix either way: what workingSetBytes counts for it).
    const std::int64_t q_begin = task.begin * kPanelQueries;
    const std::int64_t q_end = std::min(task.end * kPanelQueries, s.query_len);
    std::vector<float> own_rows(
        p.outputs.weights.empty() ? static_cast<std::size_t>((q_end - q_begin) * nk) : 0);
    const ScratchLease rows_lease(meter,
                                  static_cast<std::int64_t>(own_rows.size() * sizeof(float)));
    const auto weights_of = [&](std::int64_t q0) {
      return own_rows.empty() ? p.outputs.weights.data + h * head_scores + q0 * nk
                              : own_rows.data() + (q0 - q_begin) * nk;
    };
    float* scores = raw_scores ? p.outputs.scores.data + h * head_scores : nullptr;
    float* out = p.outputs.output.data + h * s.query_len * s.value_dim;
    float* logsumexp =
        p.outputs.row_logsumexp.empty() ? nullptr : p.outputs.row_logsumexp.data + h * s.query_len;
    QueryPanel qp(p, head.ops, h, padded_keys);
    const ScratchLease panel_lease(meter, qp.bytes());
    const float ones[kPanelQueries] = {1, 1, 1, 1, 1, 1, 1, 1};

    for (std::int64_t q0 = q_begin; q0 < q_end; q0 += kPanelQueries) {
      const std::int64_t rows = std::min(kPanelQueries, s.query_len - q0);
      const auto panel_rows = static_cast<std::size_t>(rows);
      qp.start(q0, rows);
      qp.compute_scores(0, padded_keys);
      if (raw_scores) {
        p.kernels.panel_to_rows(keys, qp.chunk_scores(), panel_rows, ones, scores + q0 * nk, keys);
        qp.scale_scores(factor);
      }
      if (p.check_scores) qp.check_finite(0, nk);
      qp.finish_logits(0, nk);
      if (p.check_terms) qp.check_finished(0, nk);
      qp.apply_mask(0, nk);
      if (p.top_k > 0) {
        qp.collect_top_k(0, nk);
        qp.settle_top_k();
        qp.keep_top_k(0, nk);
      }
      qp.softmax_and_values();
      qp.finish(out + q0 * s.value_dim);
      if (logsumexp != nullptr) qp.write_logsumexp(logsumexp + q0);
      float inverse_sums[kPanelQueries];
      for (std::int64_t j = 0; j < kPanelQueries; ++j) inverse_sums[j] = qp.inverse_sum(j);
      p.kernels.panel_to_rows(keys, qp.chunk_scores(), panel_rows, inverse_sums, weights_of(q0),
                              keys);
    }
  };

  AttentionStats stats;
  stats.strategy = Strategy::kMaterialized;
  stats.tiles_total = stats.tiles_visited = s.heads * div_up(nk, kMaterializedKeyBlock);
  stats.pairs_scored = s.heads * s.query_len * nk;
  stats.threads = parallel_for(static_cast<std::int64_t>(tasks.size()), p.threads, run_task);
  stats.scratch_bytes = meter.peak();
  return stats;
}

}  // namespace attnlens::detail
