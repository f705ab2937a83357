// Which tiles and keys the mask lets a block of queries reach: the skipping that the streaming
// forward (attention_streaming.cpp) and the backward (training/attention_backward.cpp) share, so
// both visit exactly the same tiles.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mask_eval.h"
#include "prepare.h"

namespace attnlens::detail {

// The key tiles a block of queries must visit, in increasing order.
inline void tiles_to_visit(const MaskEvaluator& mask, std::int64_t h, std::int64_t q0,
                           std::int64_t q1, std::int64_t key_block, std::int64_t tiles,
                           std::vector<std::int64_t>& out) {
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

// The keys a panel of queries [q0, q1) can see at all: its band, or everything reachable when
// global tokens exist (a global key may sit outside the band, a global query sees every key).
inline KeyRange panel_keys(const MaskEvaluator& mask, std::int64_t h, std::int64_t q0,
                           std::int64_t q1) noexcept {
  return mask.has_global_tokens() ? mask.reachable(h, q0, q1) : mask.band(h, q0, q1);
}

// The queries whose panel_keys() meet the keys [k0, k1): what a panel of keys must be run
// against in the backward. Both ends of panel_keys(i, i + 1) are non-decreasing in i (causal,
// window and key length bounds move with the query, or not at all), so these queries are one
// range, found by two binary searches.
inline KeyRange query_reach(const MaskEvaluator& mask, std::int64_t h, std::int64_t k0,
                            std::int64_t k1, std::int64_t query_len) noexcept {
  const auto first_where = [&](std::int64_t lo, auto&& pred) {
    std::int64_t hi = query_len;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (pred(panel_keys(mask, h, mid, mid + 1))) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  };
  const std::int64_t first = first_where(0, [&](const KeyRange& r) { return r.end > k0; });
  return {first, first_where(first, [&](const KeyRange& r) { return r.begin >= k1; })};
}

}  // namespace attnlens::detail
