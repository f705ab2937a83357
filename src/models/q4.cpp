// 4-bit weights: the finiteness check and the packing of q4.h, and the dequantising panel kernels
// of ops.h (a plain scalar twin and a simd128 version; the relaxed-SIMD build compiles the same
// simd128 code, and its many-row path runs the relaxed f32 panel GEMM).
//
// As for Q8_0 (q8_0.cpp, where the reasoning is written out), the tile kernels dequantise in
// registers (the nibble widened to f32, times its column's scale, minus its min) and multiply-add
// against f32 activations: every product is then the product with the float weight ggml's
// dequantisation gives (q4.h), so the only cost of Q4 is the weight's own rounding. With few rows
// the kernel reads 0.75 bytes per weight instead of 4; with many rows linear() dequantises a panel
// once into f32 and runs the f32 panel GEMM. The one-row kernel multiplies integers, as Q8_0's:
// sum_p x_p (s q_p - m) = s * sum_p x_p q_p - m * sum_p x_p, the first an exact integer dot
// product with the row's 16-bit values, the second the row's block sum (int16_row.h).
#include "models/q4.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "attnlens/errors.h"
#include "models/int16_dot.h"
#include "models/ops.h"
#include "models/packing.h"
#include "models/quant_blocks.h"

namespace attnlens::models {

std::int64_t q4_packed_bytes(std::int64_t in, std::int64_t out, std::int64_t groups) {
  return groups * panels_of(out / groups) * q4_panel_bytes(in);
}

void require_q4_depth(std::int64_t in, const std::string& name) {
  if (in <= 0 || in % kQ4Block != 0) {
    throw InvalidArgumentError(name,
                               "4-bit weights need a depth (input features) that is a "
                               "multiple of " +
                                   std::to_string(kQ4Block) + ", got " + std::to_string(in));
  }
}

void require_finite_q4(const std::uint8_t* written, std::int64_t in, std::int64_t out,
                       const std::string& name) {
  const std::int64_t row_blocks = in / kQ4Block;
  for (std::int64_t b = 0; b < out * row_blocks; ++b) {
    float scale_min[2];
    std::memcpy(scale_min, written + b * kQ4BlockBytes, sizeof scale_min);
    require_finite_block_value(scale_min[0], "scale", "4-bit", b, row_blocks, name);
    require_finite_block_value(scale_min[1], "min", "4-bit", b, row_blocks, name);
  }
}

namespace {
constexpr std::size_t kRows = 4, kCols = 8, kBlock = 32, kHalf = kBlock / 2;
constexpr std::size_t kScaleBytes = kCols * sizeof(float);
constexpr std::size_t kValuesAt = 2 * kScaleBytes;  // after the scales and the mins
constexpr std::size_t kBlockBytes = kValuesAt + kHalf * kCols;
static_assert(kBlockBytes == static_cast<std::size_t>(kQ4PanelBlockBytes));
static_assert(kRows == kPanelRows && kCols == kPanelCols);
}  // namespace

void pack_q4_matrix(const std::uint8_t* src, std::int64_t in, std::int64_t out, std::int64_t groups,
                    std::uint8_t* dst) {
  pack_block_panels(src, in / kQ4Block, out, groups, kQ4BlockBytes, kQ4PanelBlockBytes, dst,
                    [](std::uint8_t* block, std::int64_t c, const std::uint8_t* written) {
                      std::memcpy(block + c * sizeof(float), written, sizeof(float));  // s
                      std::memcpy(block + kScaleBytes + c * sizeof(float), written + 4,
                                  sizeof(float));  // m
                      for (std::size_t p = 0; p < kHalf; ++p) {
                        block[kValuesAt + p * kCols + c] = written[8 + p];
                      }
                    });
}

namespace {
// Nibble q of depth p (0..31) and column j in a packed block's values.
inline float nibble(const std::uint8_t* values, std::size_t p, std::size_t j) {
  const std::uint8_t byte = values[(p % kHalf) * kCols + j];
  return static_cast<float>(p < kHalf ? byte & 0x0f : byte >> 4);
}
}  // namespace

void q4_panel_gemm__scalar_4x8(std::size_t tiles, std::size_t k, const float* a,
                               std::size_t a_stride, const std::uint8_t* b, float* c) noexcept {
  for (std::size_t t = 0; t < tiles; ++t, a += a_stride, c += kRows * kCols) {
    float acc[kRows][kCols] = {};
    const float* ap = a;
    for (std::size_t block = 0; block < k / kBlock; ++block) {
      const std::uint8_t* bb = b + block * kBlockBytes;
      float scale[kCols], min[kCols];
      std::memcpy(scale, bb, sizeof scale);
      std::memcpy(min, bb + kScaleBytes, sizeof min);
      for (std::size_t p = 0; p < kBlock; ++p, ap += kRows) {
        float w[kCols];
        for (std::size_t j = 0; j < kCols; ++j)
          w[j] = nibble(bb + kValuesAt, p, j) * scale[j] - min[j];
        for (std::size_t r = 0; r < kRows; ++r) {
          for (std::size_t j = 0; j < kCols; ++j) acc[r][j] += ap[r] * w[j];
        }
      }
    }
    std::memcpy(c, acc, sizeof acc);
  }
}

void q4_panel_to_f32__scalar(std::size_t k, const std::uint8_t* b, float* out) noexcept {
  for (std::size_t block = 0; block < k / kBlock; ++block) {
    const std::uint8_t* bb = b + block * kBlockBytes;
    float scale[kCols], min[kCols];
    std::memcpy(scale, bb, sizeof scale);
    std::memcpy(min, bb + kScaleBytes, sizeof min);
    float* o = out + block * kBlock * kCols;
    for (std::size_t p = 0; p < kBlock; ++p) {
      for (std::size_t j = 0; j < kCols; ++j)
        o[p * kCols + j] = nibble(bb + kValuesAt, p, j) * scale[j] - min[j];
    }
  }
}

void q4_panel_gemv__scalar_1x8(std::size_t panels, std::size_t k, const Int16Row& x,
                               const std::uint8_t* b, float* y) noexcept {
  const std::size_t panel_bytes = k / kBlock * kBlockBytes;
  for (std::size_t n = 0; n < panels; ++n, b += panel_bytes, y += kCols) {
    float acc[kCols] = {};
    for (std::size_t block = 0; block < k / kBlock; ++block) {
      const std::uint8_t* bb = b + block * kBlockBytes;
      float scale[kCols], min[kCols];
      std::memcpy(scale, bb, sizeof scale);
      std::memcpy(min, bb + kScaleBytes, sizeof min);
      const std::int16_t* v = x.values.data() + block * kBlock;
      std::int32_t dot[kCols] = {};  // at most 32 x 15 x 32767 < 2^24: exact
      for (std::size_t p = 0; p < kBlock; ++p) {
        for (std::size_t j = 0; j < kCols; ++j)
          dot[j] += static_cast<std::int32_t>(nibble(bb + kValuesAt, p, j)) * v[p];
      }
      const float x_scale = x.scales[block], x_sum = x.sums[block];
      for (std::size_t j = 0; j < kCols; ++j)
        acc[j] += static_cast<float>(dot[j]) * (scale[j] * x_scale) - min[j] * x_sum;
    }
    std::memcpy(y, acc, sizeof acc);
  }
}

#if ATTNLENS_HAVE_SIMD
namespace {

using simd::f32x4;

// One nibble (the low one for depths 0..15 of a block, the high one for 16..31) of 8 bytes (a
// depth pair's 8 columns) as two f32 vectors, columns [0, 4) and [4, 8). vec128.h has no integer
// widening, so each platform's own instructions.
template <bool kHigh>
ATTNLENS_VEC_INLINE void widen_nibbles(const std::uint8_t* q, f32x4& lo, f32x4& hi) {
#if defined(__wasm_simd128__)
  const v128_t bytes = wasm_u16x8_load8x8(q);
  const v128_t n = kHigh ? wasm_u16x8_shr(bytes, 4) : wasm_v128_and(bytes, wasm_i16x8_splat(0x0f));
  lo = wasm_f32x4_convert_i32x4(wasm_u32x4_extend_low_u16x8(n));
  hi = wasm_f32x4_convert_i32x4(wasm_u32x4_extend_high_u16x8(n));
#elif defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  const __m128i bytes =
      _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q)), zero);
  const __m128i n = kHigh ? _mm_srli_epi16(bytes, 4) : _mm_and_si128(bytes, _mm_set1_epi16(0x0f));
  lo = _mm_cvtepi32_ps(_mm_unpacklo_epi16(n, zero));
  hi = _mm_cvtepi32_ps(_mm_unpackhi_epi16(n, zero));
#else
  const uint16x8_t bytes = vmovl_u8(vld1_u8(q));
  const uint16x8_t n = kHigh ? vshrq_n_u16(bytes, 4) : vandq_u16(bytes, vdupq_n_u16(0x0f));
  lo = vcvtq_f32_u32(vmovl_u16(vget_low_u16(n)));
  hi = vcvtq_f32_u32(vmovl_high_u16(n));
#endif
}

// The 4x8 tile's multiply-adds for the depths [p0, p0 + 16) of one block, whose nibbles are the
// low (kHigh false) or high ones of the block's 16 byte rows.
template <bool kHigh>
ATTNLENS_VEC_INLINE void tile_half_block(const std::uint8_t* bb, const float*& ap, f32x4* acc) {
  const f32x4 s0 = simd::load(reinterpret_cast<const float*>(bb));
  const f32x4 s1 = simd::load(reinterpret_cast<const float*>(bb) + 4);
  const f32x4 m0 = simd::load(reinterpret_cast<const float*>(bb + kScaleBytes));
  const f32x4 m1 = simd::load(reinterpret_cast<const float*>(bb + kScaleBytes) + 4);
  const std::uint8_t* q = bb + kValuesAt;
  for (std::size_t p = 0; p < kHalf; ++p, ap += kRows) {
    f32x4 b0, b1;
    widen_nibbles<kHigh>(q + p * kCols, b0, b1);
    b0 = simd::sub(simd::mul(b0, s0), m0);
    b1 = simd::sub(simd::mul(b1, s1), m1);
    for (std::size_t r = 0; r < kRows; ++r) {
      const f32x4 x = simd::load_splat(ap + r);
      acc[2 * r] = simd::mul_add(x, b0, acc[2 * r]);
      acc[2 * r + 1] = simd::mul_add(x, b1, acc[2 * r + 1]);
    }
  }
}

}  // namespace

// Registers: 8 accumulators, 2 scales, 2 mins, 2 weights and a broadcast of A (15: V8's x86
// budget; past it a scale reloads from L1). Each depth: widen (5-6 instructions), scale and
// subtract (4), then the f32 kernel's 4 broadcasts and 8 multiply-adds, in the depth order of the
// scalar twin and of f32_panel_gemm__simd128_4x8 over the dequantised panel (same bits).
void q4_panel_gemm__simd128_4x8(std::size_t tiles, std::size_t k, const float* a,
                                std::size_t a_stride, const std::uint8_t* b, float* c) noexcept {
  for (std::size_t t = 0; t < tiles; ++t, a += a_stride, c += kRows * kCols) {
    f32x4 acc[2 * kRows];
    for (f32x4& v : acc) v = simd::splat(0.0f);
    const float* ap = a;
    for (std::size_t block = 0; block < k / kBlock; ++block) {
      const std::uint8_t* bb = b + block * kBlockBytes;
      tile_half_block<false>(bb, ap, acc);
      tile_half_block<true>(bb, ap, acc);
    }
    for (std::size_t i = 0; i < 2 * kRows; ++i) simd::store(c + 4 * i, acc[i]);
  }
}

namespace {

// The integer sums of one 4-bit panel block against 32 values of an Int16Row: columns [0, 4) in
// `lo`, [4, 8) in `hi`. Byte rows p and p + 1 (16 bytes) hold depths p and p + 1 in their low
// nibbles and p + 16 and p + 17 in their high ones: two depth pairs (int16_dot.h) a load.
ATTNLENS_VEC_INLINE void q4_block_dot(const std::uint8_t* q, const std::int16_t* v,
                                      int16_dot::i32x4& lo, int16_dot::i32x4& hi) {
  lo = int16_dot::zero();
  hi = lo;
  for (std::size_t p = 0; p < kHalf; p += 2) {
    const int16_dot::bytes16 w = int16_dot::load16(q + p * kCols);
    int16_dot::add_depth_pair<false>(int16_dot::low_nibbles(w), v + p, lo, hi);
    int16_dot::add_depth_pair<false>(int16_dot::high_nibbles(w), v + p + kHalf, lo, hi);
  }
}

}  // namespace

// One panel at a time: per block the integer sums, then the f32 accumulators += sums * (scales *
// the block's scale) - mins * the block's sum, as the scalar twin does. Per 32 weights (two byte
// rows): a load, 3 nibble operations, 2 shuffles, 4 widenings, 2 broadcasts, 4 dot products and 4
// adds, against f32's 28 instructions.
void q4_panel_gemv__simd128_1x8(std::size_t panels, std::size_t k, const Int16Row& x,
                                const std::uint8_t* b, float* y) noexcept {
  const std::size_t panel_bytes = k / kBlock * kBlockBytes;
  for (std::size_t n = 0; n < panels; ++n, b += panel_bytes, y += kCols) {
    f32x4 c0 = simd::splat(0.0f), c1 = c0;
    for (std::size_t block = 0; block < k / kBlock; ++block) {
      const std::uint8_t* bb = b + block * kBlockBytes;
      int16_dot::i32x4 lo, hi;
      q4_block_dot(bb + kValuesAt, x.values.data() + block * kBlock, lo, hi);
      const f32x4 x_scale = simd::splat(x.scales[block]), x_sum = simd::splat(x.sums[block]);
      const auto* scale = reinterpret_cast<const float*>(bb);
      const auto* min = reinterpret_cast<const float*>(bb + kScaleBytes);
      const f32x4 t0 =
          simd::sub(simd::mul(int16_dot::to_f32(lo), simd::mul(simd::load(scale), x_scale)),
                    simd::mul(simd::load(min), x_sum));
      const f32x4 t1 =
          simd::sub(simd::mul(int16_dot::to_f32(hi), simd::mul(simd::load(scale + 4), x_scale)),
                    simd::mul(simd::load(min + 4), x_sum));
      c0 = simd::add(c0, t0);
      c1 = simd::add(c1, t1);
    }
    simd::store(y, c0);
    simd::store(y + 4, c1);
  }
}

void q4_panel_to_f32__simd128_x8(std::size_t k, const std::uint8_t* b, float* out) noexcept {
  for (std::size_t block = 0; block < k / kBlock; ++block) {
    const std::uint8_t* bb = b + block * kBlockBytes;
    const f32x4 s0 = simd::load(reinterpret_cast<const float*>(bb));
    const f32x4 s1 = simd::load(reinterpret_cast<const float*>(bb) + 4);
    const f32x4 m0 = simd::load(reinterpret_cast<const float*>(bb + kScaleBytes));
    const f32x4 m1 = simd::load(reinterpret_cast<const float*>(bb + kScaleBytes) + 4);
    const std::uint8_t* q = bb + kValuesAt;
    float* o = out + block * kBlock * kCols;
    for (std::size_t p = 0; p < kHalf; ++p) {
      f32x4 b0, b1;
      widen_nibbles<false>(q + p * kCols, b0, b1);
      simd::store(o + p * kCols, simd::sub(simd::mul(b0, s0), m0));
      simd::store(o + p * kCols + 4, simd::sub(simd::mul(b1, s1), m1));
      widen_nibbles<true>(q + p * kCols, b0, b1);
      simd::store(o + (p + kHalf) * kCols, simd::sub(simd::mul(b0, s0), m0));
      simd::store(o + (p + kHalf) * kCols + 4, simd::sub(simd::mul(b1, s1), m1));
    }
  }
}
#endif  // ATTNLENS_HAVE_SIMD

}  // namespace attnlens::models
