// Streaming (Flash-style) attention: queries go in panels of 8 through the key runs the mask
// can reach, keeping a running max, running sum and unnormalised output per query (the online
// softmax, see QueryPanel). Memory is O((Nq + Nk) * D), never O(Nq * Nk).
//
// Skipping has two levels. Query blocks x key tiles (options.query_block / key_block) are the
// unit AttentionStats counts: a tile the mask removes from a whole block is never visited. Each
// panel then narrows every visited tile to the keys its own 8 queries can reach (causal: up to
// the panel's last query; a window: the panel's band), rounded out to multiples of 4, so causal
// costs about half of the full problem and a window about N * width of it, whatever the tiles.
//
// Threads (options.threads) take tasks of consecutive query blocks of one head (head_tasks.h),
// each with its own panels; a block's rows are computed the same way whoever runs it.
//
// A decode step has fewer queries than a panel holds: then the query heads that read one K/V
// head go through the same panels (grouped_heads), their rows side by side as grouped-query
// decoding kernels do, so 4 heads of one token fill half a panel instead of 4 panels an eighth
// each. A block then holds whole heads, and the tiles counted are still each head's own.
#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "attention_internal.h"
#include "head_tasks.h"
#include "parallel.h"
#include "prepare.h"
#include "query_panel.h"
#include "tile_visits.h"

namespace attnlens::detail {
namespace {

// What a pass over the keys does with each chunk's logits: top_k's first pass only selects,
// the other (the only one without top_k) attends.
enum class Pass { kSelect, kAttend };

// Runs the panels of one query block over the keys [lo, hi) in chunks of at most max_chunk keys.
// Chunk by chunk, every panel takes its share (the chunk narrowed to what the panel can see,
// widened to multiples of 4) while the chunk's keys and values are still in cache. Returns the
// (query, key) scores computed.
std::int64_t run_keys(std::vector<QueryPanel>& panels, const std::vector<KeyRange>& reach,
                      std::size_t count, const Problem& p, std::int64_t lo, std::int64_t hi,
                      std::int64_t max_chunk, Pass pass) {
  const std::int64_t padded_keys = round_up(p.inputs.shape.key_len, kPanelKeys);
  std::int64_t scored = 0;
  while (lo < hi) {
    const std::int64_t end = std::min(hi, round_down(lo, kPanelKeys) + max_chunk);
    for (std::size_t i = 0; i < count; ++i) {
      const std::int64_t k0 = std::max(lo, reach[i].begin), k1 = std::min(end, reach[i].end);
      if (k0 >= k1) continue;
      QueryPanel& qp = panels[i];
      qp.compute_scores(round_down(k0, kPanelKeys),
                        std::min(round_up(k1, kPanelKeys), padded_keys));
      scored += qp.rows() * (k1 - k0);
      if (p.check_scores) qp.check_finite(k0, k1);
      qp.finish_logits(k0, k1);
      if (p.check_terms) qp.check_finished(k0, k1);
      qp.apply_mask(k0, k1);
      if (pass == Pass::kSelect) {
        qp.collect_top_k(k0, k1);
        continue;
      }
      if (p.top_k > 0) qp.keep_top_k(k0, k1);
      qp.softmax_and_values();
    }
    lo = end;
  }
  return scored;
}

// The operands of one slot (operand_slot), and their share of the scratch meter.
struct StreamingHead {
  StreamingHead(const Problem& p, std::int64_t h, ScratchMeter& meter)
      : ops(p.inputs, p.options, h, p.terms.query_fold, p.value_scale, p.kernels),
        lease(meter, ops.bytes()) {}
  HeadOperands ops;
  ScratchLease lease;
};

// How many query heads share each panel: those of one K/V head (operand_slot) when a head's
// queries fill less than a panel and the panel steps need no per-head row state (QueryPanel),
// else 1.
std::int64_t grouped_heads(const Problem& p, std::int64_t query_block) {
  const AttentionShape& s = p.inputs.shape;
  const std::int64_t group = s.heads / kv_head_count(s);
  const bool fits = s.query_len < kPanelQueries && s.query_len <= query_block;
  const bool per_head_rows = p.terms.any() || p.lsh != nullptr || p.top_k > 0 ||
                             p.options.score == ScoreFunction::kAdditive;
  return group > 1 && fits && !per_head_rows ? group : 1;
}

}  // namespace

AttentionStats run_streaming(const Problem& p) {
  const AttentionShape& s = p.inputs.shape;
  const std::int64_t block_option =
      p.options.query_block > 0 ? p.options.query_block : kDefaultQueryBlock;
  // A unit is a head, or the `group` heads of one K/V head, its rows those heads' rows in turn.
  const std::int64_t group = grouped_heads(p, block_option);
  const std::int64_t units = s.heads / group, unit_rows = group * s.query_len;
  const std::int64_t bq = group > 1 ? std::min(block_option / s.query_len, group) * s.query_len
                                    : std::min(block_option, s.query_len);
  const std::int64_t bk =
      std::min(p.options.key_block > 0 ? p.options.key_block : kDefaultKeyBlock, s.key_len);
  const std::int64_t q_blocks = div_up(unit_rows, bq);
  const std::int64_t k_tiles = div_up(s.key_len, bk);
  const std::int64_t chunk = std::min(kStreamingChunk, round_up(s.key_len, kPanelKeys));
  const auto panels_per_block = static_cast<std::size_t>(div_up(bq, kPanelQueries));

  const std::vector<HeadTask> tasks = head_tasks(units, q_blocks, p.threads);
  // The operands of unit u: a grouped unit's heads read K/V head u.
  const auto slot_of = [&](std::int64_t u) {
    return group > 1 ? u : operand_slot(s, p.options.score, u);
  };
  SharedHeads<StreamingHead> heads(operand_slot_count(s, p.options.score), tasks,
                                   [&](const HeadTask& t) { return slot_of(t.head); });
  ScratchMeter meter;
  std::atomic<std::int64_t> tiles_visited{0};
  std::atomic<std::int64_t> pairs_scored{0};

  // Query blocks [task.begin, task.end) of one head, with this task's own panels.
  const auto run_task = [&](std::int64_t index) {
    const HeadTask& task = tasks[static_cast<std::size_t>(index)];
    const std::int64_t h = task.head * group;  // the unit's first head
    const HeadLease<StreamingHead> lease(heads, slot_of(task.head));
    const HeadOperands& ops =
        heads
            .acquire(slot_of(task.head),
                     [&] { return std::make_unique<StreamingHead>(p, h, meter); })
            .ops;
    std::vector<QueryPanel> panels;
    panels.reserve(panels_per_block);
    for (std::size_t i = 0; i < panels_per_block; ++i) panels.emplace_back(p, ops, h, chunk);
    const ScratchLease panels_lease(
        meter, static_cast<std::int64_t>(panels_per_block) * panels[0].bytes());
    std::vector<std::int64_t> visit, head_visit;
    std::vector<KeyRange> reach(panels_per_block);
    std::vector<KeyRange> runs;
    float* out = p.outputs.output.data + h * s.query_len * s.value_dim;
    float* logsumexp =
        p.outputs.row_logsumexp.empty() ? nullptr : p.outputs.row_logsumexp.data + h * s.query_len;
    std::int64_t visited = 0, scored = 0;
    // The keys rows [r0, r1) of the unit can see: the union of each head's panel_keys.
    const auto unit_keys = [&](std::int64_t r0, std::int64_t r1) {
      KeyRange keys{0, 0};
      for (std::int64_t r = r0; r < r1;) {
        const std::int64_t q = r % s.query_len, n = std::min(r1 - r, s.query_len - q);
        const KeyRange k = panel_keys(p.mask, h + r / s.query_len, q, q + n);
        if (k.end > k.begin) {
          keys = keys.end > keys.begin
                     ? KeyRange{std::min(keys.begin, k.begin), std::max(keys.end, k.end)}
                     : k;
        }
        r += n;
      }
      return keys;
    };

    for (std::int64_t b = task.begin; b < task.end; ++b) {
      const std::int64_t q0 = b * bq, q1 = std::min(q0 + bq, unit_rows);
      if (group == 1) {
        tiles_to_visit(p.mask, h, q0, q1, bk, k_tiles, visit);
        visited += static_cast<std::int64_t>(visit.size());
      } else {  // whole heads: the tiles any of them visits, each head's counted
        visit.clear();
        for (std::int64_t r = q0; r < q1; r += s.query_len) {
          tiles_to_visit(p.mask, h + r / s.query_len, 0, s.query_len, bk, k_tiles, head_visit);
          visited += static_cast<std::int64_t>(head_visit.size());
          visit.insert(visit.end(), head_visit.begin(), head_visit.end());
        }
        std::sort(visit.begin(), visit.end());
        visit.erase(std::unique(visit.begin(), visit.end()), visit.end());
      }
      const auto count = static_cast<std::size_t>(div_up(q1 - q0, kPanelQueries));
      for (std::size_t i = 0; i < count; ++i) {
        const std::int64_t p0 = q0 + static_cast<std::int64_t>(i) * kPanelQueries;
        const std::int64_t p1 = std::min(p0 + kPanelQueries, q1);
        panels[i].start(p0, p1 - p0);
        reach[i] = unit_keys(p0, p1);
      }
      // Consecutive visited tiles merge into one run, so chunks do not stop at tile edges.
      const KeyRange block_reach = unit_keys(q0, q1);
      runs.clear();
      for (const std::int64_t t : visit) {
        const std::int64_t lo = std::max(t * bk, block_reach.begin);
        const std::int64_t hi = std::min(std::min((t + 1) * bk, s.key_len), block_reach.end);
        if (lo >= hi) continue;
        if (!runs.empty() && runs.back().end == lo) {
          runs.back().end = hi;
        } else {
          runs.push_back({lo, hi});
        }
      }
      // top_k needs each query's k-th logit before its softmax: a first pass selects.
      if (p.top_k > 0) {
        for (const KeyRange& run : runs) {
          scored += run_keys(panels, reach, count, p, run.begin, run.end, chunk, Pass::kSelect);
        }
        for (std::size_t i = 0; i < count; ++i) panels[i].settle_top_k();
      }
      for (const KeyRange& run : runs) {
        scored += run_keys(panels, reach, count, p, run.begin, run.end, chunk, Pass::kAttend);
      }
      for (std::size_t i = 0; i < count; ++i) {
        const std::int64_t p0 = q0 + static_cast<std::int64_t>(i) * kPanelQueries;
        panels[i].finish(out + p0 * s.value_dim);
        if (logsumexp != nullptr) panels[i].write_logsumexp(logsumexp + p0);
      }
    }
    tiles_visited.fetch_add(visited, std::memory_order_relaxed);
    pairs_scored.fetch_add(scored, std::memory_order_relaxed);
  };

  AttentionStats stats;
  stats.strategy = Strategy::kStreaming;
  stats.tiles_total = s.heads * div_up(s.query_len, std::min(block_option, s.query_len)) * k_tiles;
  stats.threads = parallel_for(static_cast<std::int64_t>(tasks.size()), p.threads, run_task);
  stats.tiles_visited = tiles_visited.load();
  stats.pairs_scored = pairs_scored.load();
  stats.scratch_bytes = meter.peak();
  return stats;
}

}  // namespace attnlens::detail
