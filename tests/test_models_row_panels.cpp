// Row panels (src/models/packing.h): every variant of rows -> [ceil(rows / 4)][depth][4] against
// the layout's definition, element by element and bit for bit (a copy rounds nothing), over
// awkward row counts (1, 3, the tile of 4 and either side, ViT's 197) and depths (kOpSizes), the
// padding rows zero even where the buffer held something else.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "models/packing.h"
#include "models_test_util.h"

using namespace attnlens;
using namespace attnlens::models;
using namespace attnlens_test;

namespace {

using RowsToPanelsFn = void (*)(std::size_t, std::size_t, const float*, float*) noexcept;

struct Variant {
  const char* name;
  RowsToPanelsFn fn;
};

std::vector<Variant> variants() {
  std::vector<Variant> all = {{"scalar", &f32_rows_to_panels__scalar},
                              {"rows_to_panels", &rows_to_panels}};
#if ATTNLENS_HAVE_SIMD
  all.push_back({"simd128_4x4", &f32_rows_to_panels__simd128_4x4});
#endif
  return all;
}

std::uint32_t bits_of(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

}  // namespace

TEST_CASE("rows_to_panels: every variant writes the panel layout exactly", "[models][ops]") {
  const std::vector<std::size_t> row_counts = {1, 2, 3, 4, 5, 7, 8, 9, 197};
  for (const Variant& v : variants()) {
    for (std::size_t rows : row_counts) {
      for (std::size_t depth : kOpSizes) {
        Rng rng(static_cast<std::uint32_t>(rows * 1009 + depth));
        const std::vector<float> x = random_floats(rows * depth, rng, -3.0f, 3.0f);
        const std::size_t panels = (rows + 3) / 4;
        // A stale buffer (NaN everywhere): padding must be written as zero, not left.
        std::vector<float> out(panels * depth * 4, std::numeric_limits<float>::quiet_NaN());
        v.fn(rows, depth, x.data(), out.data());
        std::size_t wrong = 0, first = 0;
        for (std::size_t i = 0; i < out.size(); ++i) {
          const std::size_t t = i / (depth * 4), p = i / 4 % depth, r = t * 4 + i % 4;
          const float expected = r < rows ? x[r * depth + p] : 0.0f;
          if (bits_of(out[i]) != bits_of(expected) && wrong++ == 0) first = i;
        }
        INFO(v.name << " rows " << rows << " depth " << depth << ": first wrong index " << first);
        CHECK(wrong == 0);
      }
    }
  }
}
