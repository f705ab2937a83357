// IEEE half (binary16) to float, for weights stored as f16. Exact for every half: normals
// are rebiased, subnormals become normal floats, infinities and NaN (payload kept) stay so.
//
// vec128.h has no integer widening or shifts by other than 23, so the simd128 version uses the
// platform intrinsics directly (wasm_simd128.h, SSE2, NEON's own conversion instruction), and its
// own steps (below).
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
// Four halves, sign-extended to 32-bit lanes, in 7 operations where the scalar twin's steps took
// 15 (the f16 linear layers and the tied LM head of a decoding step convert every weight they
// read): the half's bits shifted into float position (<< 13) and the copies of the sign that
// lands in the exponent cleared, which is the half as a float 2^-112 too small (a subnormal half
// as a subnormal float), then one multiply by 2^112, exact (a power of two, into the normal
// range). An all-ones exponent (Inf, NaN) comes out finite (2^16 x 1.m) and gets its exponent
// set back to all ones, the payload kept. The same bits as the scalar twin for every half.
constexpr std::uint32_t kSignAndMagnitude = 0x8fffffffu;  // bits 28-30 hold copies of the sign
constexpr std::uint32_t kHalfExponent = 0x1fu << 23;      // after << 13
constexpr std::uint32_t kFloatExponent = 0xffu << 23;
constexpr float kHalfScale = 0x1p112f;  // 2^(127 - 15)

#if defined(__wasm_simd128__)
namespace {

inline v128_t convert4(v128_t h) {
  const v128_t t =
      wasm_v128_and(wasm_i32x4_shl(h, 13), wasm_i32x4_splat(static_cast<int>(kSignAndMagnitude)));
  const v128_t scaled = wasm_f32x4_mul(t, wasm_f32x4_splat(kHalfScale));
  const v128_t exponent = wasm_i32x4_splat(static_cast<int>(kHalfExponent));
  const v128_t inf_nan = wasm_i32x4_eq(wasm_v128_and(t, exponent), exponent);
  return wasm_v128_or(scaled,
                      wasm_v128_and(inf_nan, wasm_i32x4_splat(static_cast<int>(kFloatExponent))));
}

}  // namespace

void f16_to_f32__simd128_x8(std::size_t n, const std::uint16_t* bits, float* out) noexcept {
  const std::size_t n8 = n / 8 * 8;
  for (std::size_t i = 0; i < n8; i += 8) {
    const v128_t h = wasm_v128_load(bits + i);
    wasm_v128_store(out + i, convert4(wasm_i32x4_extend_low_i16x8(h)));
    wasm_v128_store(out + i + 4, convert4(wasm_i32x4_extend_high_i16x8(h)));
  }
  f16_to_f32__scalar(n - n8, bits + n8, out + n8);
}

#elif defined(__SSE2__)
namespace {

// `high`: the half in a lane's upper 16 bits, so an arithmetic shift by 3 is the sign-extended
// half shifted by 13.
inline __m128 convert4(__m128i high) {
  const __m128i t =
      _mm_and_si128(_mm_srai_epi32(high, 3), _mm_set1_epi32(static_cast<int>(kSignAndMagnitude)));
  const __m128 scaled = _mm_mul_ps(_mm_castsi128_ps(t), _mm_set1_ps(kHalfScale));
  const __m128i exponent = _mm_set1_epi32(static_cast<int>(kHalfExponent));
  const __m128i inf_nan = _mm_cmpeq_epi32(_mm_and_si128(t, exponent), exponent);
  return _mm_or_ps(scaled, _mm_castsi128_ps(_mm_and_si128(
                               inf_nan, _mm_set1_epi32(static_cast<int>(kFloatExponent)))));
}

}  // namespace

void f16_to_f32__simd128_x8(std::size_t n, const std::uint16_t* bits, float* out) noexcept {
  const std::size_t n8 = n / 8 * 8;
  const __m128i zero = _mm_setzero_si128();
  for (std::size_t i = 0; i < n8; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bits + i));
    _mm_storeu_ps(out + i, convert4(_mm_unpacklo_epi16(zero, h)));
    _mm_storeu_ps(out + i + 4, convert4(_mm_unpackhi_epi16(zero, h)));
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
