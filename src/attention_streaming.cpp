// Streaming (Flash-style) attention: for each block of query rows, walk the key tiles the mask
// can reach, keeping a running max m, running sum l and an unnormalised output accumulator per
// row (the online softmax). Memory is O((Nq + Nk) * D), never O(Nq * Nk), and a tile the mask
// removes entirely costs nothing: causal visits about half the tiles, a window of width w about
// N * w / tile_area of them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attention_internal.h"
#include "prepare.h"
#include "validate.h"

namespace attnlens::detail {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Per-block working memory, reused across blocks.
struct BlockScratch {
  std::vector<float> s;    // [query_block, key_block] logits, then probabilities
  std::vector<float> acc;  // [query_block, Dv] unnormalised output
  std::vector<float> m;    // running max per row
  std::vector<float> l;    // running sum per row
};

// The key tiles a block of queries must visit, in increasing order.
void tiles_to_visit(const MaskEvaluator& mask, std::int64_t h, std::int64_t q0, std::int64_t q1,
                    std::int64_t key_block, std::int64_t tiles, std::vector<std::int64_t>& out) {
  out.clear();
  const KeyRange reach = mask.reachable(h, q0, q1);
  if (reach.end <= reach.begin) return;
  // A global query among the rows sees every reachable key.
  const KeyRange band = mask.any_global_query(q0, q1) ? reach : mask.band(h, q0, q1);
  const std::int64_t band_first = band.end > band.begin ? band.begin / key_block : tiles;
  const std::int64_t band_last = band.end > band.begin ? div_up(band.end, key_block) : tiles;
  const std::int64_t reach_first = reach.begin / key_block;
  const std::int64_t reach_last = div_up(reach.end, key_block);
  const bool global_keys = mask.has_global_tokens();
  for (std::int64_t t = reach_first; t < reach_last; ++t) {
    const bool in_band = t >= band_first && t < band_last;
    // Outside the band only global keys can be visible.
    if (in_band || (global_keys && mask.any_global_key(std::max(t * key_block, reach.begin),
                                                       std::min((t + 1) * key_block, reach.end)))) {
      out.push_back(t);
    }
  }
}

}  // namespace

AttentionStats run_streaming(const Problem& p) {
  const AttentionShape& s = p.inputs.shape;
  const std::int64_t bq = std::min(p.options.query_block > 0 ? p.options.query_block
                                                             : kDefaultQueryBlock, s.query_len);
  const std::int64_t bk = std::min(p.options.key_block > 0 ? p.options.key_block
                                                           : kDefaultKeyBlock, s.key_len);
  const std::int64_t dv = s.value_dim;
  const std::int64_t q_blocks = div_up(s.query_len, bq);
  const std::int64_t k_tiles = div_up(s.key_len, bk);

  BlockScratch scratch;
  scratch.s.resize(static_cast<std::size_t>(bq * bk));
  scratch.acc.resize(static_cast<std::size_t>(bq * dv));
  scratch.m.resize(static_cast<std::size_t>(bq));
  scratch.l.resize(static_cast<std::size_t>(bq));
  std::vector<std::int64_t> visit;

  AttentionStats stats;
  stats.strategy = Strategy::kStreaming;
  stats.tiles_total = s.heads * q_blocks * k_tiles;
  const std::int64_t block_bytes = static_cast<std::int64_t>(
      (scratch.s.size() + scratch.acc.size() + scratch.m.size() + scratch.l.size()) * sizeof(float));

  for (std::int64_t h = 0; h < s.heads; ++h) {
    const HeadOperands ops(p.inputs, p.options, h, bk, p.logit_factor, p.kernels);
    stats.scratch_bytes = std::max(stats.scratch_bytes, block_bytes + ops.bytes());
    const float* v = p.inputs.v.data + h * s.key_len * dv;
    float* out = p.outputs.output.data + h * s.query_len * dv;

    for (std::int64_t b = 0; b < q_blocks; ++b) {
      const std::int64_t q0 = b * bq;
      const std::int64_t rows = std::min(bq, s.query_len - q0);
      std::fill(scratch.acc.begin(), scratch.acc.end(), 0.0f);
      std::fill(scratch.m.begin(), scratch.m.end(), kNegInf);
      std::fill(scratch.l.begin(), scratch.l.end(), 0.0f);

      tiles_to_visit(p.mask, h, q0, q0 + rows, bk, k_tiles, visit);
      for (const std::int64_t t : visit) {
        const std::int64_t k0 = t * bk;
        const std::int64_t width = std::min(bk, s.key_len - k0);
        float* sc = scratch.s.data();
        ops.scores(q0, rows, t, width, sc, static_cast<std::size_t>(bk));
        if (p.check_scores) require_finite_scores(sc, rows, width, static_cast<std::size_t>(bk), h, q0, k0);
        ++stats.tiles_visited;

        if (!p.mask.block_fully_visible(h, q0, q0 + rows, k0, k0 + width)) {
          for (std::int64_t r = 0; r < rows; ++r) {
            for (std::int64_t c = 0; c < width; ++c) {
              if (!p.mask.visible(h, q0 + r, k0 + c)) sc[r * bk + c] = kNegInf;
            }
          }
        }

        bool any_row_live = false;
        for (std::int64_t r = 0; r < rows; ++r) {
          float* row = sc + r * bk;
          const float tile_max = p.kernels.row_max(row, static_cast<std::size_t>(width));
          const float m_old = scratch.m[r];
          const float m_new = std::max(m_old, tile_max);
          if (m_new == kNegInf) {  // nothing visible to this row yet
            std::fill(row, row + width, 0.0f);
            continue;
          }
          any_row_live = true;
          const float tile_sum = p.kernels.exp_sum(row, m_new, row, static_cast<std::size_t>(width));
          if (m_old != m_new) {
            // Rescale what was accumulated under the old max; exp(-inf) = 0 for the first tile.
            const float correction = m_old == kNegInf ? 0.0f : std::exp(m_old - m_new);
            scratch.l[r] *= correction;
            float* acc = scratch.acc.data() + r * dv;
            for (std::int64_t d = 0; d < dv; ++d) acc[d] *= correction;
            scratch.m[r] = m_new;
          }
          scratch.l[r] += tile_sum;
        }
        if (any_row_live) {
          p.kernels.gemm(static_cast<std::size_t>(rows), static_cast<std::size_t>(dv),
                         static_cast<std::size_t>(width), sc, static_cast<std::size_t>(bk),
                         v + k0 * dv, static_cast<std::size_t>(dv), scratch.acc.data(),
                         static_cast<std::size_t>(dv), true);
        }
      }

      for (std::int64_t r = 0; r < rows; ++r) {
        float* dst = out + (q0 + r) * dv;
        const float* acc = scratch.acc.data() + r * dv;
        const float l = scratch.l[r];
        const float inv = l > 0.0f ? 1.0f / l : 0.0f;  // no visible key: zero output row
        for (std::int64_t d = 0; d < dv; ++d) dst[d] = acc[d] * inv;
      }
    }
  }
  return stats;
}

}  // namespace attnlens::detail
