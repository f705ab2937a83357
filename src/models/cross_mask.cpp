// Cross-attention surgery (cross_mask.h). 'mean' is a uniform softmax, not a mask: no set of
// visible keys gives weights 1/N whatever the scores, but a zero scale does, exactly.
#include "models/cross_mask.h"

#include <algorithm>
#include <cstdlib>

namespace attnlens::models {

CrossAttentionMask cross_attention_mask(const CrossMask& cross, std::int64_t past, std::int64_t n,
                                        std::int64_t m, float scale,
                                        std::vector<unsigned char>& flags) {
  CrossAttentionMask out{{}, scale};
  if (cross.kind == CrossMaskKind::kFull) return out;
  if (cross.kind == CrossMaskKind::kMean) {
    out.scale = 0.0f;
    return out;
  }
  flags.assign(static_cast<std::size_t>(n * m), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    unsigned char* row = flags.data() + i * m;
    if (cross.kind == CrossMaskKind::kLast) {
      row[m - 1] = 1;
      continue;
    }
    // Luong's local-m: centred on the monotonic position, clamped to the source's last token so
    // that a target longer than the source still sees its end (never an empty row).
    const std::int64_t centre = std::min(past + i, m - 1);
    const std::int64_t from = std::max<std::int64_t>(0, centre - cross.radius);
    const std::int64_t to = std::min(m - 1, centre + cross.radius);
    std::fill(row + from, row + to + 1, 1);
  }
  out.mask.custom = ByteView(flags.data(), flags.size());
  return out;
}

}  // namespace attnlens::models
