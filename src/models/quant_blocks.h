// What the Q8_0 and 4-bit weights (q8_0.cpp, q4.cpp) share: both are written as `out` rows of
// blocks of 32 depths, name a non-finite scale (or min) the same way, and are packed the same
// way into column panels of blocks, one column of a panel block at a time.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "attnlens/errors.h"
#include "models/packing.h"

namespace attnlens::models {

// NonFiniteError naming `name`, the `field` ("scale", "min") of written block `block` and its
// row (of `row_blocks` blocks) of a `format` ("Q8_0", "4-bit") matrix, unless `value` is finite.
inline void require_finite_block_value(float value, const char* field, const char* format,
                                       std::int64_t block, std::int64_t row_blocks,
                                       const std::string& name) {
  if (std::isfinite(value)) return;
  const char* what = std::isnan(value) ? "NaN" : (value < 0 ? "-Infinity" : "+Infinity");
  throw NonFiniteError(name, name + ": the " + field + " of " + format + " block " +
                                 std::to_string(block) + " (row " +
                                 std::to_string(block / row_blocks) + ") is " + what +
                                 "; weights must be finite");
}

// Packs a matrix written as `out` rows of `row_blocks` blocks (`written_block_bytes` each) into
// `dst`: `groups` column groups of panels of 8 columns, each panel `row_blocks` panel blocks of
// `panel_block_bytes`. Every panel block is zeroed (the padding columns of a last, partial panel
// stay zero), then pack_column(block, c, written) writes column c from that column's written
// block.
template <typename PackColumn>
void pack_block_panels(const std::uint8_t* src, std::int64_t row_blocks, std::int64_t out,
                       std::int64_t groups, std::int64_t written_block_bytes,
                       std::int64_t panel_block_bytes, std::uint8_t* dst, PackColumn pack_column) {
  const std::int64_t group_columns = out / groups;
  const std::int64_t panels = panels_of(group_columns);
  for (std::int64_t g = 0; g < groups; ++g) {
    for (std::int64_t panel = 0; panel < panels; ++panel) {
      std::uint8_t* packed = dst + (g * panels + panel) * row_blocks * panel_block_bytes;
      const std::int64_t c0 = g * group_columns + panel * kPanelWidth;
      const std::int64_t width = std::min(kPanelWidth, group_columns - panel * kPanelWidth);
      for (std::int64_t b = 0; b < row_blocks; ++b) {
        std::uint8_t* block = packed + b * panel_block_bytes;
        std::memset(block, 0, static_cast<std::size_t>(panel_block_bytes));
        for (std::int64_t c = 0; c < width; ++c) {
          pack_column(block, c, src + ((c0 + c) * row_blocks + b) * written_block_bytes);
        }
      }
    }
  }
}

}  // namespace attnlens::models
