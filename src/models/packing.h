// The panel layouts the linear layers run on (KernelSet::panel_gemm, attnlens/kernels.h):
//
//   weights  W [in, out] as column panels [ceil(out / 8)][in][8], zero padded, packed once by
//            Transformer::finalize(): each panel is the contiguous B operand of one call, so a
//            forward pass streams every weight exactly once per block of tokens and never
//            re-packs it. A matrix of several column groups (GPT-2's c_attn: q | k | v) packs
//            each group on its own, so each is a matrix of whole panels.
//   rows     x [rows, in] as row panels [ceil(rows / 4)][in][4], zero padded, packed per call
//            (the A operand: 4 tokens side by side in every k step).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "attnlens/kernels.h"
#include "kernels/vec128.h"

namespace attnlens::models {

constexpr std::int64_t kPanelWidth = static_cast<std::int64_t>(kPanelCols);  // 8 outputs
constexpr std::int64_t kPanelDepth = static_cast<std::int64_t>(kPanelRows);  // 4 tokens

inline std::int64_t panels_of(std::int64_t columns) {
  return (columns + kPanelWidth - 1) / kPanelWidth;
}

// x [rows][depth] (rows contiguous) into ceil(rows / 4) row panels [depth][4] at `panels`, the
// last one's missing rows zero (row_panels.cpp). rows_to_panels is the fastest variant built;
// every variant writes the same bits.
void f32_rows_to_panels__scalar(std::size_t rows, std::size_t depth, const float* x,
                                float* panels) noexcept;
#if ATTNLENS_HAVE_SIMD
void f32_rows_to_panels__simd128_4x4(std::size_t rows, std::size_t depth, const float* x,
                                     float* panels) noexcept;
#endif
void rows_to_panels(std::size_t rows, std::size_t depth, const float* x, float* panels) noexcept;

// Elements a matrix of `groups` equal column groups takes once packed.
inline std::int64_t packed_elements(std::int64_t in, std::int64_t out, std::int64_t groups) {
  return groups * panels_of(out / groups) * kPanelWidth * in;
}

// Packs `src` (as written: [in, out], or [out, in] when `transposed`) into `dst` (packed layout,
// packed_elements() long). T is float or uint16_t (half bits); padding is zero either way.
template <typename T>
void pack_matrix(const T* src, bool transposed, std::int64_t in, std::int64_t out,
                 std::int64_t groups, T* dst) {
  const std::int64_t group_columns = out / groups;
  const std::int64_t panels = panels_of(group_columns);
  for (std::int64_t g = 0; g < groups; ++g) {
    for (std::int64_t panel = 0; panel < panels; ++panel) {
      T* block = dst + (g * panels + panel) * in * kPanelWidth;
      const std::int64_t c0 = g * group_columns + panel * kPanelWidth;
      const std::int64_t width = std::min(kPanelWidth, group_columns - panel * kPanelWidth);
      for (std::int64_t p = 0; p < in; ++p) {
        for (std::int64_t c = 0; c < kPanelWidth; ++c) {
          T value = T(0);
          if (c < width) value = transposed ? src[(c0 + c) * in + p] : src[p * out + c0 + c];
          block[p * kPanelWidth + c] = value;
        }
      }
    }
  }
}

}  // namespace attnlens::models
