// attention_backward(): validation, then the streaming backward (FlashAttention-2's loop order)
// on the forward's tile grid.
//
// Work is split into tasks of (head, group of key tiles); groups are kKeysPerGroup keys, fixed by
// the shape. A task runs the panels of each of its tiles (8 keys each) against the query blocks
// the forward's tiles_to_visit() sends to that tile, chunk by chunk, each panel narrowed to the
// queries that can see it (query_reach, rounded out to multiples of 4): dK and dV of the tile's
// keys are complete when the tile is done, and written straight out. dQ gets a share from every
// group of the head: each task sums its own share, and the head's OrderedSum adds the shares in
// group order, so every sum runs in one order whatever the threads.
#include "attnlens/training/attention_backward.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "attention_internal.h"
#include "head_tasks.h"
#include "key_panel.h"
#include "parallel.h"
#include "prepare.h"
#include "tile_visits.h"
#include "validate.h"

namespace attnlens {
namespace detail {
namespace {

// InvalidArgumentError when a gradient buffer shares memory with an input (or another gradient).
void require_no_overlap(const AttentionBackwardInputs& in, const AttentionGradients& g) {
  struct Buffer {
    const float* data;
    std::size_t size;
    const char* name;
  };
  const Buffer inputs[] = {{in.forward.q.data, in.forward.q.size, "q"},
                           {in.forward.k.data, in.forward.k.size, "k"},
                           {in.forward.v.data, in.forward.v.size, "v"},
                           {in.output.data, in.output.size, "output"},
                           {in.row_logsumexp.data, in.row_logsumexp.size, "row_logsumexp"},
                           {in.d_output.data, in.d_output.size, "d_output"},
                           {g.dq.data, g.dq.size, "dq"},
                           {g.dk.data, g.dk.size, "dk"},
                           {g.dv.data, g.dv.size, "dv"}};
  const auto address = [](const float* p) { return reinterpret_cast<std::uintptr_t>(p); };
  for (std::size_t out = 6; out < 9; ++out) {
    for (std::size_t other = 0; other < 9; ++other) {
      const Buffer& a = inputs[out];
      const Buffer& b = inputs[other];
      if (other == out || a.size == 0 || b.size == 0) continue;
      if (address(a.data) < address(b.data + b.size) &&
          address(b.data) < address(a.data + a.size)) {
        throw InvalidArgumentError(a.name, std::string("overlaps ") + b.name +
                                               "; the gradients need buffers of their own");
      }
    }
  }
}

void require_differentiable_score(const AttentionOptions& options) {
  if (options.score == ScoreFunction::kAdditive) {
    throw InvalidArgumentError(
        "score",
        "attention_backward supports the scaled-dot, dot and cosine scores; the additive score's "
        "gradient also belongs to its weights (w_query, w_key, v), which it does not compute");
  }
}

InputMagnitudes validate_backward(const AttentionBackwardInputs& in,
                                  const AttentionOptions& options, const AttentionGradients& g) {
  const AttentionShape& s = in.forward.shape;
  validate_shape(s);
  require_product_length(in.forward.q.size, "q", "H*Nq*D", {s.heads, s.query_len, s.head_dim});
  require_product_length(in.forward.k.size, "k", "H*Nk*D", {s.heads, s.key_len, s.head_dim});
  require_product_length(in.forward.v.size, "v", "H*Nk*Dv", {s.heads, s.key_len, s.value_dim});
  require_product_length(in.output.size, "output", "H*Nq*Dv", {s.heads, s.query_len, s.value_dim});
  require_product_length(in.row_logsumexp.size, "row_logsumexp", "H*Nq", {s.heads, s.query_len});
  require_product_length(in.d_output.size, "d_output", "H*Nq*Dv",
                         {s.heads, s.query_len, s.value_dim});
  require_product_length(g.dq.size, "dq", "H*Nq*D", {s.heads, s.query_len, s.head_dim});
  require_product_length(g.dk.size, "dk", "H*Nk*D", {s.heads, s.key_len, s.head_dim});
  require_product_length(g.dv.size, "dv", "H*Nk*Dv", {s.heads, s.key_len, s.value_dim});
  validate_options(s, options);
  require_differentiable_score(options);
  validate_mask(options.mask, s);
  require_no_overlap(in, g);
  InputMagnitudes magnitudes;
  magnitudes.q = require_finite(in.forward.q, "q");
  magnitudes.k = require_finite(in.forward.k, "k");
  require_finite(in.forward.v, "v");
  require_finite(in.output, "output");
  require_finite(in.d_output, "d_output");
  // -inf is what attention() saves for a row that sees no key; NaN and +inf are never saved.
  for (std::size_t i = 0; i < in.row_logsumexp.size; ++i) {
    const float x = in.row_logsumexp[i];
    if (std::isnan(x) || x == std::numeric_limits<float>::infinity()) {
      throw NonFiniteError("row_logsumexp", "row_logsumexp[" + std::to_string(i) + "] is " +
                                                (std::isnan(x) ? "NaN" : "+Infinity") +
                                                "; it must be what attention() saved (finite, "
                                                "or -Infinity for a row that sees no key)");
    }
  }
  return magnitudes;
}

// One task's key panels (a tile's worth), its scratch, and its share of the head's dQ.
struct GroupWork {
  GroupWork(const BackwardProblem& p, const BackwardHead& head, std::int64_t h,
            std::int64_t panels_per_tile)
      : scratch(kBackwardChunk), dq(head.dq_length(), 0.0f), reach(panels_per_tile) {
    panels.reserve(static_cast<std::size_t>(panels_per_tile));
    for (std::int64_t i = 0; i < panels_per_tile; ++i) panels.emplace_back(p, head, h);
  }
  std::int64_t bytes() const {
    return static_cast<std::int64_t>(panels.size()) * panels[0].bytes() + scratch.bytes() +
           static_cast<std::int64_t>(dq.size() * sizeof(float));
  }
  std::vector<KeyPanel> panels;
  BackwardScratch scratch;
  std::vector<float> dq;
  std::vector<KeyRange> reach;  // per panel: the queries that can see its keys
};

// Runs the first `count` panels over the queries [lo, hi) in chunks of at most kBackwardChunk,
// each panel taking the part of the chunk its keys can be seen from, widened to multiples of 4.
void run_queries(GroupWork& work, std::size_t count, const BackwardProblem& p,
                 const BackwardHead& head, std::int64_t lo, std::int64_t hi) {
  while (lo < hi) {
    const std::int64_t end = std::min(hi, round_down(lo, kPanelKeys) + kBackwardChunk);
    for (std::size_t i = 0; i < count; ++i) {
      const std::int64_t a = std::max(lo, work.reach[i].begin);
      const std::int64_t b = std::min(end, work.reach[i].end);
      if (a >= b) continue;
      const std::int64_t qa = round_down(a, kPanelKeys);
      const std::int64_t qb = std::min(round_up(b, kPanelKeys), head.padded_queries());
      KeyPanel& panel = work.panels[i];
      panel.compute_scores(qa, qb, work.scratch);
      if (p.check_scores) panel.check_finite(qa, a, b, work.scratch);
      panel.accumulate(qa, qb, a, b, work.scratch, work.dq.data());
    }
    lo = end;
  }
}

// Key tiles [task.begin, task.end) of one head.
void run_group(const BackwardProblem& p, const HeadTask& task, BackwardHead& head, GroupWork& work,
               std::int64_t tiles_per_group) {
  const AttentionShape& s = p.inputs.forward.shape;
  const std::int64_t h = task.head, bq = p.query_block, bk = p.key_block;
  float* dk = p.gradients.dk.data + h * s.key_len * s.head_dim;
  float* dv = p.gradients.dv.data + h * s.key_len * s.value_dim;
  for (std::int64_t t = task.begin; t < task.end; ++t) {
    const std::int64_t k_lo = t * bk, k_hi = std::min(k_lo + bk, s.key_len);
    const auto count = static_cast<std::size_t>(div_up(k_hi - k_lo, kPanelQueries));
    KeyRange tile_reach{s.query_len, 0};
    for (std::size_t i = 0; i < count; ++i) {
      const std::int64_t k0 = k_lo + static_cast<std::int64_t>(i) * kPanelQueries;
      const std::int64_t k1 = std::min(k0 + kPanelQueries, k_hi);
      work.panels[i].start(k0, k1 - k0);
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
        run_queries(work, count, p, head, run_lo, run_hi);
        run_lo = lo;
      }
      run_hi = hi;
    }
    run_queries(work, count, p, head, run_lo, run_hi);
    for (std::size_t i = 0; i < count; ++i) work.panels[i].finish(dk, dv);
  }
  head.add_dq(static_cast<std::size_t>(task.begin / tiles_per_group), std::move(work.dq),
              p.gradients.dq.data + h * s.query_len * s.head_dim);
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

  std::vector<HeadTask> tasks;
  for (std::int64_t h = 0; h < s.heads; ++h) {
    for (std::int64_t g = 0; g < groups; ++g) {
      tasks.push_back(
          HeadTask{h, g * tiles_per_group, std::min((g + 1) * tiles_per_group, k_tiles)});
    }
  }
  SharedHeads<MeteredHead> heads(s.heads, tasks);
  ScratchMeter meter;
  std::atomic<std::int64_t> tiles_visited{0};

  const auto run_task = [&](std::int64_t index) {
    const HeadTask& task = tasks[static_cast<std::size_t>(index)];
    const HeadLease<MeteredHead> lease(heads, task.head);
    BackwardHead& head = heads
                             .acquire(task.head,
                                      [&] {
                                        auto made = std::make_unique<MeteredHead>(
                                            p, task.head, static_cast<std::size_t>(groups), meter);
                                        tiles_visited.fetch_add(made->head.tiles_visited(),
                                                                std::memory_order_relaxed);
                                        return made;
                                      })
                             .head;
    GroupWork work(p, head, task.head, panels_per_tile);
    const ScratchLease work_lease(meter, work.bytes());
    run_group(p, task, head, work, tiles_per_group);
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
