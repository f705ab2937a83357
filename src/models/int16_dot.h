// The integer step the one-row Q8_0 and 4-bit kernels share (q8_0.cpp, q4.cpp): 16 bytes holding
// two depths of a packed panel's 8 columns (depth p's 8 bytes, then depth p + 1's), times an
// Int16Row's values of those two depths, added to the columns' 32-bit sums (columns [0, 4) in
// `lo`, [4, 8) in `hi`). The bytes are interleaved per column and widened to 16 bits, so one dot
// product of 8 lanes with (v[p], v[p + 1]) repeated gives 4 columns' two products summed
// (wasm's i32x4.dot_i16x8_s, SSE2's pmaddwd; NEON multiply-adds each depth). Exact: a block's 32
// products of at most 128 x 32767 sum below 2^28.
//
// vec128.h has no integer vectors, so this header holds the platform intrinsics for them.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/vec128.h"

#if ATTNLENS_HAVE_SIMD
namespace attnlens::models::int16_dot {

#if defined(__wasm_simd128__)
using bytes16 = v128_t;
using i32x4 = v128_t;
ATTNLENS_VEC_INLINE bytes16 load16(const void* p) { return wasm_v128_load(p); }
ATTNLENS_VEC_INLINE i32x4 zero() { return wasm_i32x4_splat(0); }
ATTNLENS_VEC_INLINE bytes16 low_nibbles(bytes16 w) {
  return wasm_v128_and(w, wasm_i8x16_splat(0x0f));
}
ATTNLENS_VEC_INLINE bytes16 high_nibbles(bytes16 w) {
  return wasm_v128_and(wasm_u16x8_shr(w, 4), wasm_i8x16_splat(0x0f));
}
ATTNLENS_VEC_INLINE simd::f32x4 to_f32(i32x4 v) { return wasm_f32x4_convert_i32x4(v); }

// kSigned: int8 bytes (Q8_0); else values below 256 (4-bit nibbles).
template <bool kSigned>
ATTNLENS_VEC_INLINE void add_depth_pair(bytes16 w, const std::int16_t* v, i32x4& lo, i32x4& hi) {
  const v128_t pairs =
      wasm_i8x16_shuffle(w, w, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
  const v128_t x = wasm_v128_load32_splat(v);
  const v128_t low =
      kSigned ? wasm_i16x8_extend_low_i8x16(pairs) : wasm_u16x8_extend_low_u8x16(pairs);
  const v128_t high =
      kSigned ? wasm_i16x8_extend_high_i8x16(pairs) : wasm_u16x8_extend_high_u8x16(pairs);
  lo = wasm_i32x4_add(lo, wasm_i32x4_dot_i16x8(low, x));
  hi = wasm_i32x4_add(hi, wasm_i32x4_dot_i16x8(high, x));
}

#elif defined(__SSE2__)
using bytes16 = __m128i;
using i32x4 = __m128i;
ATTNLENS_VEC_INLINE bytes16 load16(const void* p) {
  return _mm_loadu_si128(static_cast<const __m128i*>(p));
}
ATTNLENS_VEC_INLINE i32x4 zero() { return _mm_setzero_si128(); }
ATTNLENS_VEC_INLINE bytes16 low_nibbles(bytes16 w) { return _mm_and_si128(w, _mm_set1_epi8(0x0f)); }
ATTNLENS_VEC_INLINE bytes16 high_nibbles(bytes16 w) {
  return _mm_and_si128(_mm_srli_epi16(w, 4), _mm_set1_epi8(0x0f));
}
ATTNLENS_VEC_INLINE simd::f32x4 to_f32(i32x4 v) { return _mm_cvtepi32_ps(v); }

template <bool kSigned>
ATTNLENS_VEC_INLINE void add_depth_pair(bytes16 w, const std::int16_t* v, i32x4& lo, i32x4& hi) {
  const __m128i pairs = _mm_unpacklo_epi8(w, _mm_srli_si128(w, 8));
  std::int32_t two;
  std::memcpy(&two, v, sizeof two);
  const __m128i x = _mm_set1_epi32(two);
  // Each byte doubled into a 16-bit lane, then shifted down: arithmetically (sign-extended) for
  // int8, logically (zero-extended) for nibbles.
  const __m128i low_doubled = _mm_unpacklo_epi8(pairs, pairs);
  const __m128i high_doubled = _mm_unpackhi_epi8(pairs, pairs);
  const __m128i low = kSigned ? _mm_srai_epi16(low_doubled, 8) : _mm_srli_epi16(low_doubled, 8);
  const __m128i high = kSigned ? _mm_srai_epi16(high_doubled, 8) : _mm_srli_epi16(high_doubled, 8);
  lo = _mm_add_epi32(lo, _mm_madd_epi16(low, x));
  hi = _mm_add_epi32(hi, _mm_madd_epi16(high, x));
}

#else
using bytes16 = uint8x16_t;
using i32x4 = int32x4_t;
ATTNLENS_VEC_INLINE bytes16 load16(const void* p) {
  return vld1q_u8(static_cast<const std::uint8_t*>(p));
}
ATTNLENS_VEC_INLINE i32x4 zero() { return vdupq_n_s32(0); }
ATTNLENS_VEC_INLINE bytes16 low_nibbles(bytes16 w) { return vandq_u8(w, vdupq_n_u8(0x0f)); }
ATTNLENS_VEC_INLINE bytes16 high_nibbles(bytes16 w) { return vshrq_n_u8(w, 4); }
ATTNLENS_VEC_INLINE simd::f32x4 to_f32(i32x4 v) { return vcvtq_f32_s32(v); }

template <bool kSigned>
ATTNLENS_VEC_INLINE void add_depth_pair(bytes16 w, const std::int16_t* v, i32x4& lo, i32x4& hi) {
  const int16x8_t first = kSigned ? vmovl_s8(vreinterpret_s8_u8(vget_low_u8(w)))
                                  : vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(w)));
  const int16x8_t second = kSigned ? vmovl_s8(vreinterpret_s8_u8(vget_high_u8(w)))
                                   : vreinterpretq_s16_u16(vmovl_u8(vget_high_u8(w)));
  lo = vmlal_n_s16(vmlal_n_s16(lo, vget_low_s16(first), v[0]), vget_low_s16(second), v[1]);
  hi = vmlal_high_n_s16(vmlal_high_n_s16(hi, first, v[0]), second, v[1]);
}
#endif

}  // namespace attnlens::models::int16_dot
#endif  // ATTNLENS_HAVE_SIMD
