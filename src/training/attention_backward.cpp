// attention_backward(): validation, then the streaming backward (FlashAttention-2's loop order)
// on the forward's tile grid.
//
// Work is split into tasks of (K/V head, group of key tiles); groups are kKeysPerGroup keys, fixed
// by the shape. Under grouped-query attention a task runs every query head reading its K/V head,
// one after the other, so dK and dV of its keys add up over them in head order. A task runs the
// panels of each of its tiles (8 keys each) against the query blocks the forward's tiles_to_visit()
// sends to that tile, chunk by chunk, each panel narrowed to the queries that can see it
// (query_reach, rounded out to multiples of 4): dK and dV of the tile's keys are complete when the
// tile is done, and written straight out. dQ gets a share from every group of the head: each task
// sums its own share, and the head's OrderedSum adds the shares in group order, so every sum runs
// in one order whatever the threads.
#include "attnlens/training/attention_backward.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "attention/attention_internal.h"
#include "attention/head_tasks.h"
#include "attention/prepare.h"
#include "attention/tile_visits.h"
#include "key_panel.h"
#include "parallel.h"
#include "validate.h"

namespace attnlens {
namespace detail {
namespace {

// One task's key panels (a tile's worth), its scratch, and its share of the head's dQ with the
// operands of its dQ products (kDqKeys keys each: dS transposed, and key rows).
struct GroupWork {
  // For the query heads [first_head, first_head + heads) reading K/V head kv_head, each with a
  // dQ share of dq_length floats.
  GroupWork(const BackwardProblem& p, std::int64_t kv_head, std::int64_t heads,
            std::size_t dq_length, std::int64_t panels_per_tile)
      : scratch(kBackwardChunk),
        dq(static_cast<std::size_t>(heads), std::vector<float>(dq_length, 0.0f)),
        d_scores_t(static_cast<std::size_t>(kBackwardChunk / kPanelKeys * kDqStride)),
        key_rows(
            static_cast<std::size_t>(div_up(panels_per_tile, kDqPanels) * kDqKeys *
                                     round_up(p.inputs.forward.shape.head_dim, kPanelQueries))),
        reach(static_cast<std::size_t>(panels_per_tile)) {
    panels.reserve(static_cast<std::size_t>(panels_per_tile));
    for (std::int64_t i = 0; i < panels_per_tile; ++i) panels.emplace_back(p, kv_head);
  }
  std::int64_t bytes() const {
    return static_cast<std::int64_t>(panels.size()) * panels[0].bytes() + scratch.bytes() +
           static_cast<std::int64_t>(
               (dq.size() * dq[0].size() + d_scores_t.size() + key_rows.size()) * sizeof(float));
  }
  // Panel i's rows of the key_rows of its dQ product.
  float* panel_key_rows(std::size_t i) {
    const std::size_t product = key_rows.size() / div_up(panels.size(), kDqPanels);
    return key_rows.data() + (i / kDqPanels) * product + (i % kDqPanels) * kPanelCols * kPanelCols;
  }
  std::vector<KeyPanel> panels;
  BackwardScratch scratch;
  std::vector<std::vector<float>> dq;  // per query head: [D8 / 8][Nq4][8]
  std::vector<float> d_scores_t;       // [chunk / 4][kDqKeys][4]: A of one dQ product
  std::vector<float> key_rows;         // per product of kDqPanels panels: [D8 / 8][kDqKeys][8]
  std::vector<KeyRange> reach;         // per panel: the queries that can see its keys
};

// Panels [first, last) (at most kDqPanels) over the chunk of queries [lo, end): each takes the
// part its keys can be seen from, widened to multiples of 4, and leaves its dS transposed in the
// shared A. The rows every panel computed get one dQ product over all their keys; the rows only
// some computed (the diagonal under causal, a window's edges) get one product per panel, so no
// product multiplies a row a panel did not compute.
void run_chunk(GroupWork& work, std::size_t first, std::size_t last, const BackwardProblem& p,
               const BackwardHead& head, float* dq, std::int64_t lo, std::int64_t end) {
  struct Rows {
    std::int64_t a, b, qa, qb;  // seen [a, b), computed [qa, qb); empty when qa == qb
  } rows[kDqPanels];
  std::int64_t ua = head.padded_queries(), ub = 0;                // the union of the computed rows
  std::int64_t shared_lo = 0, shared_hi = head.padded_queries();  // and their intersection
  for (std::size_t i = first; i < last; ++i) {
    Rows& r = rows[i - first];
    r.a = std::max(lo, work.reach[i].begin);
    r.b = std::min(end, work.reach[i].end);
    r.qa = r.qb = 0;
    if (r.a < r.b) {
      r.qa = round_down(r.a, kPanelKeys);
      r.qb = std::min(round_up(r.b, kPanelKeys), head.padded_queries());
    }
    ua = std::min(ua, r.qa == r.qb ? ua : r.qa);
    ub = std::max(ub, r.qb);
    shared_lo = std::max(shared_lo, r.qa);
    shared_hi = std::min(shared_hi, r.qb);
  }
  if (ua >= ub) return;
  float* const ds_t = work.d_scores_t.data();
  for (std::size_t i = first; i < last; ++i) {
    const Rows& r = rows[i - first];
    if (r.qa == r.qb) continue;
    KeyPanel& panel = work.panels[i];
    panel.compute_scores(r.qa, r.qb, work.scratch);
    if (p.check_scores) panel.check_finite(r.qa, r.a, r.b, work.scratch);
    panel.accumulate(
        r.qa, r.qb, r.a, r.b, work.scratch,
        ds_t + (r.qa - ua) / kPanelKeys * kDqStride + (i - first) * kPanelRows * kPanelCols);
  }
  // dQ[from, to) += the dS of panels [i0, i1) times their key rows.
  const std::int64_t dims8 = round_up(p.inputs.forward.shape.head_dim, kPanelQueries);
  const std::int64_t slice = head.padded_queries() * kPanelQueries;  // one 8-dim slice of dQ
  const float* key_rows = work.panel_key_rows(first);
  const auto add_dq = [&](std::size_t i0, std::size_t i1, std::int64_t from, std::int64_t to) {
    if (from >= to) return;
    const float* a =
        ds_t + (from - ua) / kPanelKeys * kDqStride + (i0 - first) * kPanelRows * kPanelCols;
    const float* b = key_rows + (i0 - first) * kPanelCols * kPanelCols;
    for (std::int64_t x = 0; x < dims8 / kPanelQueries; ++x) {
      p.kernels.panel_gemm(static_cast<std::size_t>((to - from) / kPanelKeys),
                           (i1 - i0) * kPanelCols, a, kDqStride, b + x * kDqKeys * kPanelQueries,
                           dq + x * slice + from * kPanelQueries, kKeep);
    }
  };
  const bool shared = shared_lo < shared_hi;  // every panel computed these rows
  if (shared) add_dq(first, last, shared_lo, shared_hi);
  for (std::size_t i = first; i < last; ++i) {
    const Rows& r = rows[i - first];
    if (!shared) {
      add_dq(i, i + 1, r.qa, r.qb);
      continue;
    }
    add_dq(i, i + 1, r.qa, shared_lo);
    add_dq(i, i + 1, shared_hi, r.qb);
  }
}

// Runs the first `count` panels over the queries [lo, hi) in chunks of at most kBackwardChunk.
void run_queries(GroupWork& work, std::size_t count, const BackwardProblem& p,
                 const BackwardHead& head, float* dq, std::int64_t lo, std::int64_t hi) {
  while (lo < hi) {
    const std::int64_t end = std::min(hi, round_down(lo, kPanelKeys) + kBackwardChunk);
    for (std::size_t first = 0; first < count; first += kDqPanels) {
      run_chunk(work, first, std::min<std::size_t>(count, first + kDqPanels), p, head, dq, lo, end);
    }
    lo = end;
  }
}

// The first `count` panels of tile t (`keys`) against the queries of query head h
// that visit it.
void run_tile_for_head(const BackwardProblem& p, GroupWork& work, std::size_t count, std::int64_t t,
                       KeyRange keys, std::int64_t h, const BackwardHead& head, float* dq) {
  const AttentionShape& s = p.inputs.forward.shape;
  const std::int64_t bq = p.query_block;
  KeyRange tile_reach{s.query_len, 0};
  for (std::size_t i = 0; i < count; ++i) {
    work.panels[i].set_query_head(head, h);
    const std::int64_t k0 = keys.begin + static_cast<std::int64_t>(i) * kPanelQueries;
    const std::int64_t k1 = std::min(k0 + kPanelQueries, keys.end);
    work.reach[i] = query_reach(p.mask, h, k0, k1, s.query_len);
    tile_reach.begin = std::min(tile_reach.begin, work.reach[i].begin);
    tile_reach.end = std::max(tile_reach.end, work.reach[i].end);
  }
  // Consecutive visiting blocks merge into one run, so chunks do not stop at block edges.
  std::int64_t run_lo = 0, run_hi = 0;
  for (const std::int64_t b : head.blocks_of_tile(t)) {
    const std::int64_t lo = std::max(b * bq, tile_reach.begin);
    const std::int64_t hi = std::min(std::min((b + 1) * bq, s.query_len), tile_reach.end);
    if (lo >= hi) continue;
    if (lo != run_hi) {
      run_queries(work, count, p, head, dq, run_lo, run_hi);
      run_lo = lo;
    }
    run_hi = hi;
  }
  run_queries(work, count, p, head, dq, run_lo, run_hi);
}

// Key tiles [task.begin, task.end) of K/V head task.head, against each query head reading it
// (`heads`, in head order, the first being first_head).
void run_group(const BackwardProblem& p, const HeadTask& task, std::int64_t first_head,
               const std::vector<BackwardHead*>& heads, GroupWork& work,
               std::int64_t tiles_per_group) {
  const AttentionShape& s = p.inputs.forward.shape;
  const std::int64_t kv = task.head, bk = p.key_block;
  float* dk = p.gradients.dk.data + kv * s.key_len * s.head_dim;
  float* dv = p.gradients.dv.data + kv * s.key_len * s.value_dim;
  for (std::int64_t t = task.begin; t < task.end; ++t) {
    const std::int64_t k_lo = t * bk, k_hi = std::min(k_lo + bk, s.key_len);
    const auto count = static_cast<std::size_t>(div_up(k_hi - k_lo, kPanelQueries));
    for (std::size_t i = 0; i < count; ++i) {
      const std::int64_t k0 = k_lo + static_cast<std::int64_t>(i) * kPanelQueries;
      work.panels[i].start(k0, std::min(k0 + kPanelQueries, k_hi) - k0, work.panel_key_rows(i));
    }
    for (std::size_t g = 0; g < heads.size(); ++g) {
      const std::int64_t h = first_head + static_cast<std::int64_t>(g);
      run_tile_for_head(p, work, count, t, {k_lo, k_hi}, h, *heads[g], work.dq[g].data());
    }
    for (std::size_t i = 0; i < count; ++i) work.panels[i].finish(dk, dv);
  }
  for (std::size_t g = 0; g < heads.size(); ++g) {
    const std::int64_t h = first_head + static_cast<std::int64_t>(g);
    heads[g]->add_dq(static_cast<std::size_t>(task.begin / tiles_per_group), std::move(work.dq[g]),
                     p.gradients.dq.data + h * s.query_len * s.head_dim);
  }
}

// The head's operands, and their share of the scratch meter.
struct MeteredHead {
  MeteredHead(const BackwardProblem& p, std::int64_t h, std::size_t groups, ScratchMeter& meter)
      : head(p, h, groups), lease(meter, head.bytes()) {}
  BackwardHead head;
  ScratchLease lease;
};

AttentionStats run_backward(const BackwardProblem& p) {
  const AttentionShape& s = p.inputs.forward.shape;
  const std::int64_t k_tiles = div_up(s.key_len, p.key_block);
  const std::int64_t tiles_per_group = std::max<std::int64_t>(1, kKeysPerGroup / p.key_block);
  const std::int64_t groups = div_up(k_tiles, tiles_per_group);
  const std::int64_t panels_per_tile = div_up(p.key_block, kPanelQueries);

  // Tasks are (K/V head, group of key tiles); each runs the query heads reading its K/V head.
  const std::int64_t kv_heads = kv_head_count(s);
  const std::int64_t group_heads = s.heads / kv_heads;
  std::vector<HeadTask> tasks;
  for (std::int64_t kv = 0; kv < kv_heads; ++kv) {
    for (std::int64_t g = 0; g < groups; ++g) {
      tasks.push_back(
          HeadTask{kv, g * tiles_per_group, std::min((g + 1) * tiles_per_group, k_tiles)});
    }
  }
  SharedHeads<MeteredHead> heads(s.heads);  // query heads, each used by its K/V head's tasks
  for (const HeadTask& task : tasks) {
    for (std::int64_t g = 0; g < group_heads; ++g) heads.use(task.head * group_heads + g);
  }
  ScratchMeter meter;
  std::atomic<std::int64_t> tiles_visited{0};

  const auto run_task = [&](std::int64_t index) {
    const HeadTask& task = tasks[static_cast<std::size_t>(index)];
    const std::int64_t first_head = task.head * group_heads;
    std::vector<std::unique_ptr<HeadLease<MeteredHead>>> leases;
    std::vector<BackwardHead*> group;
    for (std::int64_t h = first_head; h < first_head + group_heads; ++h) {
      leases.push_back(std::make_unique<HeadLease<MeteredHead>>(heads, h));
      group.push_back(&heads
                           .acquire(h,
                                    [&] {
                                      auto made = std::make_unique<MeteredHead>(
                                          p, h, static_cast<std::size_t>(groups), meter);
                                      tiles_visited.fetch_add(made->head.tiles_visited(),
                                                              std::memory_order_relaxed);
                                      return made;
                                    })
                           .head);
    }
    GroupWork work(p, task.head, group_heads, group[0]->dq_length(), panels_per_tile);
    const ScratchLease work_lease(meter, work.bytes());
    run_group(p, task, first_head, group, work, tiles_per_group);
  };

  AttentionStats stats;
  stats.strategy = Strategy::kStreaming;
  stats.tiles_total = s.heads * div_up(s.query_len, p.query_block) * k_tiles;
  stats.threads = parallel_for(static_cast<std::int64_t>(tasks.size()), p.threads, run_task);
  stats.tiles_visited = tiles_visited.load();
  stats.scratch_bytes = meter.peak();
  return stats;
}

}  // namespace
}  // namespace detail

AttentionStats attention_backward(const AttentionBackwardInputs& inputs,
                                  const AttentionOptions& options,
                                  const AttentionGradients& gradients) {
  const detail::InputMagnitudes magnitudes = detail::validate_backward(inputs, options, gradients);
  const AttentionShape& s = inputs.forward.shape;
  const float scale = options.scale ? *options.scale : default_scale(options.score, s.head_dim);
  const float factor = scale / options.temperature;
  const detail::MaskEvaluator mask(options.mask, s);
  const detail::BackwardProblem problem{
      inputs,
      options,
      gradients,
      options.kernels ? *options.kernels : default_kernel_set(),
      mask,
      factor,
      detail::logits_may_overflow(inputs.forward, options, factor, magnitudes),
      detail::resolve_threads(options.threads),
      std::min(options.query_block > 0 ? options.query_block : detail::kDefaultQueryBlock,
               s.query_len),
      std::min(options.key_block > 0 ? options.key_block : detail::kDefaultKeyBlock, s.key_len)};
  const AttentionStats stats = detail::run_backward(problem);
  const struct {
    MutableFloatView values;
    std::int64_t rows, row_len;
    const char *name, *row_name;
  } results[] = {{gradients.dq, s.query_len, s.head_dim, "dq", "query"},
                 {gradients.dk, s.key_len, s.head_dim, "dk", "key"},
                 {gradients.dv, s.key_len, s.value_dim, "dv", "key"}};
  for (const auto& r : results) {
    detail::require_finite_result(FloatView(r.values.data, r.values.size), r.rows, r.row_len,
                                  r.name, r.row_name, "attention backward");
  }
  return stats;
}

AttentionGradientsResult attention_backward(const AttentionInputs& inputs, FloatView d_output,
                                            const AttentionOptions& options) {
  const AttentionShape& s = inputs.shape;
  detail::validate_shape(s);
  // What the forward cannot find wrong is checked before it runs.
  detail::require_product_length(d_output.size, "d_output", "H*Nq*Dv",
                                 {s.heads, s.query_len, s.value_dim});
  detail::require_differentiable_score(options);
  std::vector<float> output(
      detail::to_size(s.heads * s.query_len * s.value_dim, sizeof(float), "output"));
  std::vector<float> logsumexp(
      detail::to_size(s.heads * s.query_len, sizeof(float), "row_logsumexp"));
  attention(inputs, options,
            AttentionOutputs{MutableFloatView(output), {}, {}, MutableFloatView(logsumexp)});
  AttentionGradientsResult result;
  result.dq.resize(inputs.q.size);
  result.dk.resize(inputs.k.size);
  result.dv.resize(inputs.v.size);
  result.stats = attention_backward(
      AttentionBackwardInputs{inputs, FloatView(output), FloatView(logsumexp), d_output}, options,
      AttentionGradients{MutableFloatView(result.dq), MutableFloatView(result.dk),
                         MutableFloatView(result.dv)});
  return result;
}

}  // namespace attnlens
