// Q8_0 weights: the finiteness check and the packing of q8_0.h, and the dequantising panel
// kernels of ops.h (a plain scalar twin and a simd128 version).
//
// The tile kernels dequantise in registers (q widened to f32 and multiplied by its column's
// scale) and multiply-add against f32 activations: every product is the product with the float
// weight (exact, q8_0.h), so a tile's rows equal the f32 panel GEMM's over the dequantised panel,
// bit for bit. With few rows (a short text) the kernel reads 1.1 bytes per weight instead of 4;
// with many rows linear() dequantises a panel once into f32 and runs the f32 panel GEMM on it, so
// the conversion is amortised.
//
// The one-row kernel (a decoding step) is bound by the conversion, not by memory: widening and
// scaling each weight costs more instructions than f32's multiply-add, so dequantising ran at 0.6x
// f32's one-row kernel in V8. It multiplies integers instead: the row rounded to 16 bits per
// block (int16_row.h: 1/258 of the weights' own rounding) and 8 weights of two depths at a time
// in one i32x4.dot_i16x8_s, exact, with one multiply by the scales per block (bench/: linear N=1
// lines). Relaxed SIMD's i8x16 dot product would need 7-bit activations (and clang 15).
#include "models/q8_0.h"

#include <algorithm>
#include <cstring>

#include "attnlens/errors.h"
#include "models/int16_dot.h"
#include "models/ops.h"
#include "models/packing.h"
#include "models/quant_blocks.h"

namespace attnlens::models {

std::int64_t q8_packed_bytes(std::int64_t in, std::int64_t out, std::int64_t groups) {
  return groups * panels_of(out / groups) * q8_panel_bytes(in);
}

void require_q8_depth(std::int64_t in, const std::string& name) {
  if (in <= 0 || in % kQ8Block != 0) {
    throw InvalidArgumentError(name, "Q8_0 needs a depth (input features) that is a multiple of " +
                                         std::to_string(kQ8Block) + ", got " + std::to_string(in));
  }
}

void require_finite_q8(const std::uint8_t* written, std::int64_t in, std::int64_t out,
                       const std::string& name) {
  const std::int64_t row_blocks = in / kQ8Block;
  for (std::int64_t b = 0; b < out * row_blocks; ++b) {
    const std::uint8_t* block = written + b * kQ8BlockBytes;
    const std::uint16_t bits = static_cast<std::uint16_t>(block[0] | (block[1] << 8));
    if ((bits & 0x7c00u) != 0x7c00u) continue;  // a finite f16: its exponent is not all ones
    float scale;
    f16_to_f32__scalar(1, &bits, &scale);
    require_finite_block_value(scale, "scale", "Q8_0", b, row_blocks, name);
  }
}

void pack_q8_matrix(const std::uint8_t* src, std::int64_t in, std::int64_t out, std::int64_t groups,
                    std::uint8_t* dst) {
  pack_block_panels(src, in / kQ8Block, out, groups, kQ8BlockBytes, kQ8PanelBlockBytes, dst,
                    [](std::uint8_t* block, std::int64_t c, const std::uint8_t* written) {
                      // 8 f32 scales, then the values [32][8] (int8 bytes copied as they are).
                      const auto bits = static_cast<std::uint16_t>(written[0] | (written[1] << 8));
                      float scale;
                      f16_to_f32__scalar(1, &bits, &scale);
                      std::memcpy(block + c * sizeof(float), &scale, sizeof scale);
                      std::uint8_t* values = block + kPanelWidth * sizeof(float);
                      for (std::int64_t p = 0; p < kQ8Block; ++p) {
                        values[p * kPanelWidth + c] = written[2 + p];
                      }
                    });
}

namespace {
constexpr std::size_t kRows = 4, kCols = 8, kBlock = 32;
constexpr std::size_t kScaleBytes = kCols * sizeof(float);
constexpr std::size_t kBlockBytes = kScaleBytes + kBlock * kCols;
static_assert(kBlockBytes == static_cast<std::size_t>(kQ8PanelBlockBytes));
static_assert(kRows == kPanelRows && kCols == kPanelCols);
}  // namespace

void q8_panel_gemm__scalar_4x8(std::size_t tiles, std::size_t k, const float* a,
                               std::size_t a_stride, const std::uint8_t* b, float* c) noexcept {
  for (std::size_t t = 0; t < tiles; ++t, a += a_stride, c += kRows * kCols) {
    float acc[kRows][kCols] = {};
    const float* ap = a;
    for (std::size_t block = 0; block < k / kBlock; ++block) {
      const std::uint8_t* bb = b + block * kBlockBytes;
      float scale[kCols];
      std::memcpy(scale, bb, sizeof scale);
      const auto* q = reinterpret_cast<const std::int8_t*>(bb + kScaleBytes);
      for (std::size_t p = 0; p < kBlock; ++p, ap += kRows) {
        float w[kCols];
        for (std::size_t j = 0; j < kCols; ++j)
          w[j] = static_cast<float>(q[p * kCols + j]) * scale[j];
        for (std::size_t r = 0; r < kRows; ++r) {
          for (std::size_t j = 0; j < kCols; ++j) acc[r][j] += ap[r] * w[j];
        }
      }
    }
    std::memcpy(c, acc, sizeof acc);
  }
}

void q8_panel_to_f32__scalar(std::size_t k, const std::uint8_t* b, float* out) noexcept {
  for (std::size_t block = 0; block < k / kBlock; ++block) {
    const std::uint8_t* bb = b + block * kBlockBytes;
    float scale[kCols];
    std::memcpy(scale, bb, sizeof scale);
    const auto* q = reinterpret_cast<const std::int8_t*>(bb + kScaleBytes);
    for (std::size_t i = 0; i < kBlock * kCols; ++i) {
      out[block * kBlock * kCols + i] = static_cast<float>(q[i]) * scale[i % kCols];
    }
  }
}

void q8_panel_gemv__scalar_1x8(std::size_t panels, std::size_t k, const Int16Row& x,
                               const std::uint8_t* b, float* y) noexcept {
  const std::size_t panel_bytes = k / kBlock * kBlockBytes;
  for (std::size_t n = 0; n < panels; ++n, b += panel_bytes, y += kCols) {
    float acc[kCols] = {};
    for (std::size_t block = 0; block < k / kBlock; ++block) {
      const std::uint8_t* bb = b + block * kBlockBytes;
      float scale[kCols];
      std::memcpy(scale, bb, sizeof scale);
      const auto* q = reinterpret_cast<const std::int8_t*>(bb + kScaleBytes);
      const std::int16_t* v = x.values.data() + block * kBlock;
      std::int32_t dot[kCols] = {};  // at most 32 x 128 x 32767 < 2^28: exact
      for (std::size_t p = 0; p < kBlock; ++p) {
        for (std::size_t j = 0; j < kCols; ++j) dot[j] += q[p * kCols + j] * v[p];
      }
      const float x_scale = x.scales[block];
      for (std::size_t j = 0; j < kCols; ++j)
        acc[j] += static_cast<float>(dot[j]) * (scale[j] * x_scale);
    }
    std::memcpy(y, acc, sizeof acc);
  }
}

#if ATTNLENS_HAVE_SIMD
namespace {

using simd::f32x4;

// 8 int8 values (one depth of the panel) as two f32 vectors, columns [0, 4) and [4, 8).
// vec128.h has no integer widening, so each platform's own instructions.
ATTNLENS_VEC_INLINE void widen8(const std::int8_t* q, f32x4& lo, f32x4& hi) {
#if defined(__wasm_simd128__)
  const v128_t h = wasm_i16x8_load8x8(q);
  lo = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(h));
  hi = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(h));
#elif defined(__SSE2__)
  const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q));
  const __m128i h = _mm_srai_epi16(_mm_unpacklo_epi8(x, x), 8);
  lo = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(h, h), 16));
  hi = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpackhi_epi16(h, h), 16));
#else
  const int16x8_t h = vmovl_s8(vld1_s8(q));
  lo = vcvtq_f32_s32(vmovl_s16(vget_low_s16(h)));
  hi = vcvtq_f32_s32(vmovl_high_s16(h));
#endif
}

}  // namespace

// Registers: 8 accumulators, 2 scales, 2 weights and a broadcast of A (13 of V8's 15 on x86).
// Each depth: widen (5 instructions), scale (2), then the f32 kernel's 4 broadcasts and 8
// multiply-adds, in the same order as the scalar twin and as f32_panel_gemm__simd128_4x8 over
// the dequantised panel (same bits).
void q8_panel_gemm__simd128_4x8(std::size_t tiles, std::size_t k, const float* a,
                                std::size_t a_stride, const std::uint8_t* b, float* c) noexcept {
  for (std::size_t t = 0; t < tiles; ++t, a += a_stride, c += kRows * kCols) {
    f32x4 c00 = simd::splat(0.0f), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
          c31 = c00;
    const float* ap = a;
    for (std::size_t block = 0; block < k / kBlock; ++block) {
      const std::uint8_t* bb = b + block * kBlockBytes;
      const f32x4 s0 = simd::load(reinterpret_cast<const float*>(bb));
      const f32x4 s1 = simd::load(reinterpret_cast<const float*>(bb) + 4);
      const auto* q = reinterpret_cast<const std::int8_t*>(bb + kScaleBytes);
      for (std::size_t p = 0; p < kBlock; ++p, ap += kRows) {
        f32x4 b0, b1;
        widen8(q + p * kCols, b0, b1);
        b0 = simd::mul(b0, s0);
        b1 = simd::mul(b1, s1);
        f32x4 x = simd::load_splat(ap);
        c00 = simd::mul_add(x, b0, c00);
        c01 = simd::mul_add(x, b1, c01);
        x = simd::load_splat(ap + 1);
        c10 = simd::mul_add(x, b0, c10);
        c11 = simd::mul_add(x, b1, c11);
        x = simd::load_splat(ap + 2);
        c20 = simd::mul_add(x, b0, c20);
        c21 = simd::mul_add(x, b1, c21);
        x = simd::load_splat(ap + 3);
        c30 = simd::mul_add(x, b0, c30);
        c31 = simd::mul_add(x, b1, c31);
      }
    }
    simd::store(c + 0, c00);
    simd::store(c + 4, c01);
    simd::store(c + 8, c10);
    simd::store(c + 12, c11);
    simd::store(c + 16, c20);
    simd::store(c + 20, c21);
    simd::store(c + 24, c30);
    simd::store(c + 28, c31);
  }
}

namespace {

// The integer sums of one Q8_0 panel block against 32 values of an Int16Row, two depths at a time
// (int16_dot.h): columns [0, 4) in `lo`, [4, 8) in `hi`.
ATTNLENS_VEC_INLINE void q8_block_dot(const std::int8_t* q, const std::int16_t* v,
                                      int16_dot::i32x4& lo, int16_dot::i32x4& hi) {
  lo = int16_dot::zero();
  hi = lo;
  for (std::size_t p = 0; p < kBlock; p += 2) {
    int16_dot::add_depth_pair<true>(int16_dot::load16(q + p * kCols), v + p, lo, hi);
  }
}

}  // namespace

// One panel at a time: per block the integer sums (2 accumulators, a weight pair in 3 registers
// and the values), then the f32 accumulators += sums * (scales * the block's scale), as the
// scalar twin does. Per two depths of 8 columns: a load, a shuffle, 2 widenings, a broadcast, 2
// dot products and 2 adds, against f32's 14 instructions (4 loads, 2 broadcasts, 4 multiplies, 4
// adds).
void q8_panel_gemv__simd128_1x8(std::size_t panels, std::size_t k, const Int16Row& x,
                                const std::uint8_t* b, float* y) noexcept {
  const std::size_t panel_bytes = k / kBlock * kBlockBytes;
  for (std::size_t n = 0; n < panels; ++n, b += panel_bytes, y += kCols) {
    f32x4 c0 = simd::splat(0.0f), c1 = c0;
    for (std::size_t block = 0; block < k / kBlock; ++block) {
      const std::uint8_t* bb = b + block * kBlockBytes;
      int16_dot::i32x4 lo, hi;
      q8_block_dot(reinterpret_cast<const std::int8_t*>(bb + kScaleBytes),
                   x.values.data() + block * kBlock, lo, hi);
      const f32x4 x_scale = simd::splat(x.scales[block]);
      const f32x4 s0 = simd::mul(simd::load(reinterpret_cast<const float*>(bb)), x_scale);
      const f32x4 s1 = simd::mul(simd::load(reinterpret_cast<const float*>(bb) + 4), x_scale);
      c0 = simd::add(c0, simd::mul(int16_dot::to_f32(lo), s0));
      c1 = simd::add(c1, simd::mul(int16_dot::to_f32(hi), s1));
    }
    simd::store(y, c0);
    simd::store(y + 4, c1);
  }
}

void q8_panel_to_f32__simd128_x8(std::size_t k, const std::uint8_t* b, float* out) noexcept {
  for (std::size_t block = 0; block < k / kBlock; ++block) {
    const std::uint8_t* bb = b + block * kBlockBytes;
    const f32x4 s0 = simd::load(reinterpret_cast<const float*>(bb));
    const f32x4 s1 = simd::load(reinterpret_cast<const float*>(bb) + 4);
    const auto* q = reinterpret_cast<const std::int8_t*>(bb + kScaleBytes);
    float* o = out + block * kBlock * kCols;
    for (std::size_t p = 0; p < kBlock; ++p) {
      f32x4 b0, b1;
      widen8(q + p * kCols, b0, b1);
      simd::store(o + p * kCols, simd::mul(b0, s0));
      simd::store(o + p * kCols + 4, simd::mul(b1, s1));
    }
  }
}
#endif  // ATTNLENS_HAVE_SIMD

}  // namespace attnlens::models
