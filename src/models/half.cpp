// IEEE half (binary16) to float, for weights stored as f16. Exact for every half: normals
// are rebiased, subnormals become normal floats, infinities and NaN (payload kept) stay so.
//
// vec128.h has no integer widening or shifts by other than 23, so the simd128 version uses the
// platform intrinsics directly (wasm_simd128.h, SSE2, NEON's own conversion instruction).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "models/ops.h"

namespace attnlens::models {
namespace {

// The exponent and mantissa moved into float position (<< 13) are then fixed by exponent:
// a normal half needs its exponent rebiased by 127 - 15; an all-ones exponent (Inf/NaN) by
// 255 - 31 more; a zero exponent (zero or subnormal) is rebiased as if normal with one more
// and then the implicit leading one taken away by subtracting 2^-14.
constexpr std::uint32_t kRebias = (127 - 15) << 23;
constexpr std::uint32_t kInfNanRebias = (128 - 16) << 23;
constexpr std::uint32_t kShiftedExponent = 0x7c00u << 13;
constexpr std::uint32_t kSubnormalMagic = 113u << 23;  // 2^-14 as float bits

float from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::uint32_t to_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

}  // namespace

void f16_to_f32__scalar(std::size_t n, const std::uint16_t* bits, float* out) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t h = bits[i];
    std::uint32_t o = (h & 0x7fffu) << 13;
    const std::uint32_t exponent = o & kShiftedExponent;
    o += kRebias;
    if (exponent == kShiftedExponent) {
      o += kInfNanRebias;
    } else if (exponent == 0) {
      o = to_bits(from_bits(o + (1u << 23)) - from_bits(kSubnormalMagic));
    }
    out[i] = from_bits(o | ((h & 0x8000u) << 16));
  }
}

#if ATTNLENS_HAVE_SIMD
#if defined(__wasm_simd128__)
namespace {

// Four halves (already widened to 32-bit lanes) to floats; the same steps as the scalar twin.
inline v128_t convert4(v128_t h) {
  const v128_t sign = wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x8000)), 16);
  const v128_t o = wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x7fff)), 13);
  const v128_t exponent = wasm_v128_and(o, wasm_i32x4_splat(static_cast<int>(kShiftedExponent)));
  const v128_t normal = wasm_i32x4_add(o, wasm_i32x4_splat(static_cast<int>(kRebias)));
  const v128_t inf_nan = wasm_i32x4_add(normal, wasm_i32x4_splat(static_cast<int>(kInfNanRebias)));
  const v128_t subnormal = wasm_f32x4_sub(wasm_i32x4_add(normal, wasm_i32x4_splat(1 << 23)),
                                          wasm_i32x4_splat(static_cast<int>(kSubnormalMagic)));
  const v128_t is_inf_nan =
      wasm_i32x4_eq(exponent, wasm_i32x4_splat(static_cast<int>(kShiftedExponent)));
  const v128_t is_subnormal = wasm_i32x4_eq(exponent, wasm_i32x4_splat(0));
  v128_t r = wasm_v128_bitselect(inf_nan, normal, is_inf_nan);
  r = wasm_v128_bitselect(subnormal, r, is_subnormal);
  return wasm_v128_or(r, sign);
}

}  // namespace

void f16_to_f32__simd128_x8(std::size_t n, const std::uint16_t* bits, float* out) noexcept {
  const std::size_t n8 = n / 8 * 8;
  for (std::size_t i = 0; i < n8; i += 8) {
    const v128_t h = wasm_v128_load(bits + i);
    wasm_v128_store(out + i, convert4(wasm_u32x4_extend_low_u16x8(h)));
    wasm_v128_store(out + i + 4, convert4(wasm_u32x4_extend_high_u16x8(h)));
  }
  f16_to_f32__scalar(n - n8, bits + n8, out + n8);
}

#elif defined(__SSE2__)
namespace {

inline __m128 convert4(__m128i h) {
  const __m128i sign = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x8000)), 16);
  const __m128i o = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x7fff)), 13);
  const __m128i exponent = _mm_and_si128(o, _mm_set1_epi32(static_cast<int>(kShiftedExponent)));
  const __m128i normal = _mm_add_epi32(o, _mm_set1_epi32(static_cast<int>(kRebias)));
  const __m128i inf_nan = _mm_add_epi32(normal, _mm_set1_epi32(static_cast<int>(kInfNanRebias)));
  const __m128i subnormal = _mm_castps_si128(
      _mm_sub_ps(_mm_castsi128_ps(_mm_add_epi32(normal, _mm_set1_epi32(1 << 23))),
                 _mm_castsi128_ps(_mm_set1_epi32(static_cast<int>(kSubnormalMagic)))));
  const __m128i is_inf_nan =
      _mm_cmpeq_epi32(exponent, _mm_set1_epi32(static_cast<int>(kShiftedExponent)));
  const __m128i is_subnormal = _mm_cmpeq_epi32(exponent, _mm_setzero_si128());
  __m128i r =
      _mm_or_si128(_mm_and_si128(is_inf_nan, inf_nan), _mm_andnot_si128(is_inf_nan, normal));
  r = _mm_or_si128(_mm_and_si128(is_subnormal, subnormal), _mm_andnot_si128(is_subnormal, r));
  return _mm_castsi128_ps(_mm_or_si128(r, sign));
}

}  // namespace

void f16_to_f32__simd128_x8(std::size_t n, const std::uint16_t* bits, float* out) noexcept {
  const std::size_t n8 = n / 8 * 8;
  const __m128i zero = _mm_setzero_si128();
  for (std::size_t i = 0; i < n8; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bits + i));
    _mm_storeu_ps(out + i, convert4(_mm_unpacklo_epi16(h, zero)));
    _mm_storeu_ps(out + i + 4, convert4(_mm_unpackhi_epi16(h, zero)));
  }
  f16_to_f32__scalar(n - n8, bits + n8, out + n8);
}

#else  // NEON (AArch64) converts halves in one instruction.
void f16_to_f32__simd128_x8(std::size_t n, const std::uint16_t* bits, float* out) noexcept {
  const std::size_t n4 = n / 4 * 4;
  for (std::size_t i = 0; i < n4; i += 4) {
    vst1q_f32(out + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(bits + i))));
  }
  f16_to_f32__scalar(n - n4, bits + n4, out + n4);
}
#endif
#endif  // ATTNLENS_HAVE_SIMD

}  // namespace attnlens::models
