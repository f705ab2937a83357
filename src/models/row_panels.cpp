// Activations [rows][depth] packed as row panels [ceil(rows / 4)][depth][4] (packing.h), the A
// operand of every linear layer: a pure copy, so every variant writes the same bits. The scalar
// twin stores one float at a time, strided by the panel width; the simd128 version reads four
// rows at once, transposes 4 x 4 blocks in registers and stores whole vectors (a ViT-base pass
// packs 13 M floats this way).
#include <algorithm>
#include <cstddef>

#include "kernels/vec128.h"
#include "models/packing.h"

namespace attnlens::models {
namespace {

constexpr std::size_t kTile = static_cast<std::size_t>(kPanelDepth);

// The last panel's `count` (< 4) rows, the rest of the panel zero.
void pack_partial_panel(std::size_t count, std::size_t depth, const float* x, float* panel) {
  std::fill(panel, panel + depth * kTile, 0.0f);
  for (std::size_t r = 0; r < count; ++r) {
    const float* row = x + r * depth;
    for (std::size_t p = 0; p < depth; ++p) panel[p * kTile + r] = row[p];
  }
}

}  // namespace

void f32_rows_to_panels__scalar(std::size_t rows, std::size_t depth, const float* x,
                                float* panels) noexcept {
  const std::size_t full = rows / kTile;
  for (std::size_t t = 0; t < full; ++t) {
    float* panel = panels + t * depth * kTile;
    const float* block = x + t * kTile * depth;
    for (std::size_t r = 0; r < kTile; ++r) {
      for (std::size_t p = 0; p < depth; ++p) panel[p * kTile + r] = block[r * depth + p];
    }
  }
  if (rows % kTile) {
    pack_partial_panel(rows % kTile, depth, x + full * kTile * depth,
                       panels + full * depth * kTile);
  }
}

#if ATTNLENS_HAVE_SIMD
void f32_rows_to_panels__simd128_4x4(std::size_t rows, std::size_t depth, const float* x,
                                     float* panels) noexcept {
  using simd::f32x4;
  const std::size_t full = rows / kTile, depth4 = depth / 4 * 4;
  for (std::size_t t = 0; t < full; ++t) {
    float* panel = panels + t * depth * kTile;
    const float* r0 = x + t * kTile * depth;
    const float* r1 = r0 + depth;
    const float* r2 = r1 + depth;
    const float* r3 = r2 + depth;
    for (std::size_t p = 0; p < depth4; p += 4) {
      f32x4 a = simd::load(r0 + p), b = simd::load(r1 + p), c = simd::load(r2 + p),
            d = simd::load(r3 + p);
      simd::transpose4(a, b, c, d);  // a: depth p of the four rows, b: p + 1, ...
      float* out = panel + p * kTile;
      simd::store(out, a);
      simd::store(out + 4, b);
      simd::store(out + 8, c);
      simd::store(out + 12, d);
    }
    for (std::size_t p = depth4; p < depth; ++p) {
      float* out = panel + p * kTile;
      out[0] = r0[p];
      out[1] = r1[p];
      out[2] = r2[p];
      out[3] = r3[p];
    }
  }
  if (rows % kTile) {
    pack_partial_panel(rows % kTile, depth, x + full * kTile * depth,
                       panels + full * depth * kTile);
  }
}
#endif

void rows_to_panels(std::size_t rows, std::size_t depth, const float* x, float* panels) noexcept {
#if ATTNLENS_HAVE_SIMD
  f32_rows_to_panels__simd128_4x4(rows, depth, x, panels);
#else
  f32_rows_to_panels__scalar(rows, depth, x, panels);
#endif
}

}  // namespace attnlens::models
