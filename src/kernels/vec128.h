// A thin 128-bit float vector abstraction: the simd128 kernels are written once against it.
//
//   Emscripten with -msimd128  -> wasm_simd128.h (the target that matters)
//   x86-64                     -> SSE2 (part of the baseline ABI)
//   AArch64                    -> NEON
// ATTNLENS_HAVE_SIMD is 0 when ATTNLENS_NO_SIMD is set or no mapping exists; then only scalar
// kernels are built. ATTNLENS_HAVE_RELAXED_SIMD is 1 in wasm builds with -mrelaxed-simd
// (ATTNLENS_RELAXED_SIMD in CMake), which add "relaxedsimd" kernels that multiply-add with
// f32x4.relaxed_madd. Only operations the kernels use are provided.
#pragma once

#include <cstdint>

#if defined(ATTNLENS_NO_SIMD)
#define ATTNLENS_HAVE_SIMD 0
#elif defined(__wasm_simd128__)
#define ATTNLENS_HAVE_SIMD 1
#include <wasm_simd128.h>
#elif defined(__SSE2__)
#define ATTNLENS_HAVE_SIMD 1
#include <emmintrin.h>
#elif defined(__ARM_NEON) && defined(__aarch64__)
#define ATTNLENS_HAVE_SIMD 1
#include <arm_neon.h>
#else
#define ATTNLENS_HAVE_SIMD 0
#endif

#if ATTNLENS_HAVE_SIMD && defined(__wasm_relaxed_simd__)
#define ATTNLENS_HAVE_RELAXED_SIMD 1
#else
#define ATTNLENS_HAVE_RELAXED_SIMD 0
#endif

#if ATTNLENS_HAVE_SIMD
namespace attnlens::simd {

#define ATTNLENS_VEC_INLINE static inline __attribute__((always_inline))

#if defined(__wasm_simd128__)
using f32x4 = v128_t;
ATTNLENS_VEC_INLINE f32x4 load(const float* p) { return wasm_v128_load(p); }
ATTNLENS_VEC_INLINE void store(float* p, f32x4 v) { wasm_v128_store(p, v); }
ATTNLENS_VEC_INLINE f32x4 splat(float x) { return wasm_f32x4_splat(x); }
ATTNLENS_VEC_INLINE f32x4 load_splat(const float* p) { return wasm_v128_load32_splat(p); }
ATTNLENS_VEC_INLINE f32x4 add(f32x4 a, f32x4 b) { return wasm_f32x4_add(a, b); }
ATTNLENS_VEC_INLINE f32x4 sub(f32x4 a, f32x4 b) { return wasm_f32x4_sub(a, b); }
ATTNLENS_VEC_INLINE f32x4 mul(f32x4 a, f32x4 b) { return wasm_f32x4_mul(a, b); }
ATTNLENS_VEC_INLINE f32x4 div(f32x4 a, f32x4 b) { return wasm_f32x4_div(a, b); }
// pmax/pmin are single x86 instructions under V8. A NaN in `a` passes through, which the
// overflow checks downstream rely on.
ATTNLENS_VEC_INLINE f32x4 max(f32x4 a, f32x4 b) { return wasm_f32x4_pmax(a, b); }
ATTNLENS_VEC_INLINE f32x4 min(f32x4 a, f32x4 b) { return wasm_f32x4_pmin(a, b); }
ATTNLENS_VEC_INLINE f32x4 abs(f32x4 a) { return wasm_f32x4_abs(a); }
ATTNLENS_VEC_INLINE f32x4 less(f32x4 a, f32x4 b) { return wasm_f32x4_lt(a, b); }
ATTNLENS_VEC_INLINE f32x4 equal(f32x4 a, f32x4 b) { return wasm_f32x4_eq(a, b); }
ATTNLENS_VEC_INLINE f32x4 bit_and(f32x4 a, f32x4 b) { return wasm_v128_and(a, b); }
ATTNLENS_VEC_INLINE f32x4 and_not(f32x4 a, f32x4 mask) { return wasm_v128_andnot(a, mask); }
ATTNLENS_VEC_INLINE f32x4 bit_or(f32x4 a, f32x4 b) { return wasm_v128_or(a, b); }
ATTNLENS_VEC_INLINE f32x4 bit_xor(f32x4 a, f32x4 b) { return wasm_v128_xor(a, b); }
// Integer operations on the lanes' bit patterns.
ATTNLENS_VEC_INLINE f32x4 bits_shl23(f32x4 a) { return wasm_i32x4_shl(a, 23); }
ATTNLENS_VEC_INLINE f32x4 int_splat(std::int32_t x) { return wasm_i32x4_splat(x); }
ATTNLENS_VEC_INLINE f32x4 int_sub(f32x4 a, f32x4 b) { return wasm_i32x4_sub(a, b); }
ATTNLENS_VEC_INLINE f32x4 int_max(f32x4 a, f32x4 b) { return wasm_i32x4_max(a, b); }
ATTNLENS_VEC_INLINE float hsum(f32x4 v) {
  const f32x4 s = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  return wasm_f32x4_extract_lane(wasm_f32x4_add(s, wasm_i32x4_shuffle(s, s, 1, 0, 3, 2)), 0);
}
ATTNLENS_VEC_INLINE float hmax(f32x4 v) {
  const f32x4 s = wasm_f32x4_pmax(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  return wasm_f32x4_extract_lane(wasm_f32x4_pmax(s, wasm_i32x4_shuffle(s, s, 1, 0, 3, 2)), 0);
}
// Rows r0..r3 become columns (each shuffle pattern is one unpck/movlh/movhl under V8).
ATTNLENS_VEC_INLINE void transpose4(f32x4& r0, f32x4& r1, f32x4& r2, f32x4& r3) {
  const f32x4 t0 = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5),
              t1 = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7);
  const f32x4 t2 = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5),
              t3 = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7);
  r0 = wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5);
  r1 = wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7);
  r2 = wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5);
  r3 = wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7);
}

#elif defined(__SSE2__)
using f32x4 = __m128;
ATTNLENS_VEC_INLINE f32x4 load(const float* p) { return _mm_loadu_ps(p); }
ATTNLENS_VEC_INLINE void store(float* p, f32x4 v) { _mm_storeu_ps(p, v); }
ATTNLENS_VEC_INLINE f32x4 splat(float x) { return _mm_set1_ps(x); }
ATTNLENS_VEC_INLINE f32x4 load_splat(const float* p) { return _mm_set1_ps(*p); }
ATTNLENS_VEC_INLINE f32x4 add(f32x4 a, f32x4 b) { return _mm_add_ps(a, b); }
ATTNLENS_VEC_INLINE f32x4 sub(f32x4 a, f32x4 b) { return _mm_sub_ps(a, b); }
ATTNLENS_VEC_INLINE f32x4 mul(f32x4 a, f32x4 b) { return _mm_mul_ps(a, b); }
ATTNLENS_VEC_INLINE f32x4 div(f32x4 a, f32x4 b) { return _mm_div_ps(a, b); }
// Operands swapped so NaN handling matches wasm pmax/pmin: max(a, b) = a < b ? b : a.
ATTNLENS_VEC_INLINE f32x4 max(f32x4 a, f32x4 b) { return _mm_max_ps(b, a); }
ATTNLENS_VEC_INLINE f32x4 min(f32x4 a, f32x4 b) { return _mm_min_ps(b, a); }
ATTNLENS_VEC_INLINE f32x4 abs(f32x4 a) {
  return _mm_and_ps(a, _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff)));
}
ATTNLENS_VEC_INLINE f32x4 less(f32x4 a, f32x4 b) { return _mm_cmplt_ps(a, b); }
ATTNLENS_VEC_INLINE f32x4 equal(f32x4 a, f32x4 b) { return _mm_cmpeq_ps(a, b); }
ATTNLENS_VEC_INLINE f32x4 bit_and(f32x4 a, f32x4 b) { return _mm_and_ps(a, b); }
ATTNLENS_VEC_INLINE f32x4 and_not(f32x4 a, f32x4 mask) { return _mm_andnot_ps(mask, a); }
ATTNLENS_VEC_INLINE f32x4 bit_or(f32x4 a, f32x4 b) { return _mm_or_ps(a, b); }
ATTNLENS_VEC_INLINE f32x4 bit_xor(f32x4 a, f32x4 b) { return _mm_xor_ps(a, b); }
ATTNLENS_VEC_INLINE f32x4 bits_shl23(f32x4 a) {
  return _mm_castsi128_ps(_mm_slli_epi32(_mm_castps_si128(a), 23));
}
ATTNLENS_VEC_INLINE f32x4 int_splat(std::int32_t x) { return _mm_castsi128_ps(_mm_set1_epi32(x)); }
ATTNLENS_VEC_INLINE f32x4 int_sub(f32x4 a, f32x4 b) {
  return _mm_castsi128_ps(_mm_sub_epi32(_mm_castps_si128(a), _mm_castps_si128(b)));
}
// SSE2 has no pmaxsd: compare and select.
ATTNLENS_VEC_INLINE f32x4 int_max(f32x4 a, f32x4 b) {
  const __m128i x = _mm_castps_si128(a), y = _mm_castps_si128(b);
  const __m128i greater = _mm_cmpgt_epi32(x, y);
  return _mm_castsi128_ps(_mm_or_si128(_mm_and_si128(greater, x), _mm_andnot_si128(greater, y)));
}
ATTNLENS_VEC_INLINE float hsum(f32x4 v) {
  const __m128 s = _mm_add_ps(v, _mm_movehl_ps(v, v));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
}
ATTNLENS_VEC_INLINE float hmax(f32x4 v) {
  const __m128 s = _mm_max_ps(v, _mm_movehl_ps(v, v));
  return _mm_cvtss_f32(_mm_max_ss(s, _mm_shuffle_ps(s, s, 1)));
}
ATTNLENS_VEC_INLINE void transpose4(f32x4& r0, f32x4& r1, f32x4& r2, f32x4& r3) {
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
}

#else  // NEON
using f32x4 = float32x4_t;
ATTNLENS_VEC_INLINE f32x4 load(const float* p) { return vld1q_f32(p); }
ATTNLENS_VEC_INLINE void store(float* p, f32x4 v) { vst1q_f32(p, v); }
ATTNLENS_VEC_INLINE f32x4 splat(float x) { return vdupq_n_f32(x); }
ATTNLENS_VEC_INLINE f32x4 load_splat(const float* p) { return vld1q_dup_f32(p); }
ATTNLENS_VEC_INLINE f32x4 add(f32x4 a, f32x4 b) { return vaddq_f32(a, b); }
ATTNLENS_VEC_INLINE f32x4 sub(f32x4 a, f32x4 b) { return vsubq_f32(a, b); }
ATTNLENS_VEC_INLINE f32x4 mul(f32x4 a, f32x4 b) { return vmulq_f32(a, b); }
ATTNLENS_VEC_INLINE f32x4 div(f32x4 a, f32x4 b) { return vdivq_f32(a, b); }
ATTNLENS_VEC_INLINE f32x4 max(f32x4 a, f32x4 b) { return vmaxq_f32(a, b); }
ATTNLENS_VEC_INLINE f32x4 min(f32x4 a, f32x4 b) { return vminq_f32(a, b); }
ATTNLENS_VEC_INLINE f32x4 abs(f32x4 a) { return vabsq_f32(a); }
ATTNLENS_VEC_INLINE f32x4 less(f32x4 a, f32x4 b) { return vreinterpretq_f32_u32(vcltq_f32(a, b)); }
ATTNLENS_VEC_INLINE f32x4 equal(f32x4 a, f32x4 b) { return vreinterpretq_f32_u32(vceqq_f32(a, b)); }
ATTNLENS_VEC_INLINE f32x4 bit_and(f32x4 a, f32x4 b) {
  return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)));
}
ATTNLENS_VEC_INLINE f32x4 and_not(f32x4 a, f32x4 mask) {
  return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(mask)));
}
ATTNLENS_VEC_INLINE f32x4 bit_or(f32x4 a, f32x4 b) {
  return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)));
}
ATTNLENS_VEC_INLINE f32x4 bit_xor(f32x4 a, f32x4 b) {
  return vreinterpretq_f32_u32(veorq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)));
}
ATTNLENS_VEC_INLINE f32x4 bits_shl23(f32x4 a) {
  return vreinterpretq_f32_s32(vshlq_n_s32(vreinterpretq_s32_f32(a), 23));
}
ATTNLENS_VEC_INLINE f32x4 int_splat(std::int32_t x) {
  return vreinterpretq_f32_s32(vdupq_n_s32(x));
}
ATTNLENS_VEC_INLINE f32x4 int_sub(f32x4 a, f32x4 b) {
  return vreinterpretq_f32_s32(vsubq_s32(vreinterpretq_s32_f32(a), vreinterpretq_s32_f32(b)));
}
ATTNLENS_VEC_INLINE f32x4 int_max(f32x4 a, f32x4 b) {
  return vreinterpretq_f32_s32(vmaxq_s32(vreinterpretq_s32_f32(a), vreinterpretq_s32_f32(b)));
}
ATTNLENS_VEC_INLINE float hsum(f32x4 v) { return vaddvq_f32(v); }
ATTNLENS_VEC_INLINE float hmax(f32x4 v) { return vmaxvq_f32(v); }
ATTNLENS_VEC_INLINE void transpose4(f32x4& r0, f32x4& r1, f32x4& r2, f32x4& r3) {
  const f32x4 t0 = vzip1q_f32(r0, r1), t1 = vzip2q_f32(r0, r1);
  const f32x4 t2 = vzip1q_f32(r2, r3), t3 = vzip2q_f32(r2, r3);
  r0 = vreinterpretq_f32_f64(vzip1q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2)));
  r1 = vreinterpretq_f32_f64(vzip2q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2)));
  r2 = vreinterpretq_f32_f64(vzip1q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)));
  r3 = vreinterpretq_f32_f64(vzip2q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)));
}
#endif

// a * b + c. Two roundings on every target (no FMA in baseline wasm SIMD), so results match
// across builds.
ATTNLENS_VEC_INLINE f32x4 mul_add(f32x4 a, f32x4 b, f32x4 c) { return add(mul(a, b), c); }

// How a kernel forms a * b + c, as a template parameter, so one kernel body serves both ISAs.
struct MulAdd {
  ATTNLENS_VEC_INLINE f32x4 apply(f32x4 a, f32x4 b, f32x4 c) { return mul_add(a, b, c); }
};
#if ATTNLENS_HAVE_RELAXED_SIMD
// f32x4.relaxed_madd: a * b + c rounded once (FMA) or twice, as the hardware prefers. clang 14
// has no intrinsic for the standard instruction: __builtin_wasm_fma_f32x4(a, b, c) emits the
// pre-standard opcode 0xfd 0xaf, which scripts/wasm_relaxed_madd.py rewrites after linking to
// relaxed_madd (0xfd 0x105, operands a * b + c); clang treats the builtin as opaque.
struct RelaxedMulAdd {
  ATTNLENS_VEC_INLINE f32x4 apply(f32x4 a, f32x4 b, f32x4 c) {
    return __builtin_wasm_fma_f32x4(a, b, c);
  }
};
#endif

// Picks a where mask lanes are all ones, else b.
ATTNLENS_VEC_INLINE f32x4 select(f32x4 mask, f32x4 a, f32x4 b) {
  return bit_or(bit_and(mask, a), and_not(b, mask));
}

// 2^n for the integer n that the magic-number rounding left in the low mantissa bits of
// `rounded` (bits = 0x4B400000 + n + bias), or exactly 0 when the biased exponent would be 0 or
// less. The clamp is an integer max instead of a compare and select: clang 14 turns
// andnot(x, compare) into v128.bitselect, three instructions under V8.
ATTNLENS_VEC_INLINE f32x4 two_to_the(f32x4 rounded, std::int32_t bias) {
  const f32x4 exponent = int_max(int_sub(rounded, int_splat(0x4B400000 - bias)), int_splat(0));
  return bits_shl23(exponent);
}

// The same where the caller has clamped n >= -bias, so the biased exponent is never negative:
// one instruction fewer (the softmax exponent's innermost loop counts them).
ATTNLENS_VEC_INLINE f32x4 two_to_the_nonnegative(f32x4 rounded, std::int32_t bias) {
  return bits_shl23(int_sub(rounded, int_splat(0x4B400000 - bias)));
}

// exp(x) for x <= 88, relative error below 2e-7 (1.9e-7 measured over every float in
// [-87.3, 88]). x below -87.3 (including -inf) gives 0, exactly: the exponent clamp makes 2^n
// zero, which is what makes masked softmax entries exact zeros; NaN stays NaN (max() lets it
// through). Every caller passes x <= 0 (softmax arguments are x - max, tanh uses exp(-2|x|)).
//
// About 20 vector operations per 4 lanes and no float<->int conversion (those are multi-
// instruction sequences under V8 on x86): n = round(x / ln 2) comes from adding a magic
// constant, whose low mantissa bits then hold n + 127, so shifting the bits left by 23 builds
// 2^n directly. Then x - n ln 2 in two parts (hi has trailing zero bits, so n * hi is exact) and
// a degree-5 polynomial; the constants are XNNPACK's rr2_p5 minimax set.
template <typename M = MulAdd>
ATTNLENS_VEC_INLINE f32x4 exp(f32x4 x) {
  x = max(x, splat(-88.5f));
  const f32x4 magic = splat(0x1.8000FEp23f);  // 1.5 * 2^23 + 127
  f32x4 n = M::apply(x, splat(0x1.715476p+0f), magic);
  const f32x4 two_n = two_to_the(n, 0);  // the magic constant already holds the bias
  n = sub(n, magic);
  f32x4 t = M::apply(n, splat(-0x1.62E400p-1f), x);
  t = M::apply(n, splat(-0x1.7F7D1Cp-20f), t);
  f32x4 p = M::apply(splat(0x1.0F9F9Cp-7f), t, splat(0x1.573A1Ap-5f));
  p = M::apply(p, t, splat(0x1.555A80p-3f));
  p = M::apply(p, t, splat(0x1.FFFDC6p-2f));
  p = M::apply(p, t, splat(0x1.FFFFF6p-1f));
  t = mul(t, two_n);
  return M::apply(t, p, two_n);  // 2^n (1 + t p(t))
}

// 2^x for x <= 127, relative error below 2e-7 (1.8e-7 measured over [-126, 0]); below -126.5
// (including -inf) exactly 0, NaN stays NaN. The softmax kernels work in base 2 (the caller
// folds log2(e) into the logits), which saves exp's multiplication by 1/ln 2 and its two-part
// reduction: x - round(x) is exact. Degree-5 polynomial for 2^t on [-0.5, 0.5], fitted for
// relative error (Lawson's algorithm in 40-digit arithmetic, rounded to float).
template <typename M = MulAdd>
ATTNLENS_VEC_INLINE f32x4 exp2(f32x4 x) {
  x = max(x, splat(-127.0f));
  const f32x4 magic = splat(0x1.8p23f);  // 1.5 * 2^23: adding it rounds to an integer
  const f32x4 rounded = add(x, magic);
  const f32x4 t = sub(x, sub(rounded, magic));               // in [-0.5, 0.5], exact
  const f32x4 two_n = two_to_the_nonnegative(rounded, 127);  // n >= -127: x was clamped
  f32x4 p = M::apply(splat(0x1.5BBA4Cp-10f), t, splat(0x1.3CEAB8p-7f));
  p = M::apply(p, t, splat(0x1.C6B754p-5f));
  p = M::apply(p, t, splat(0x1.EBF9BCp-3f));
  p = M::apply(p, t, splat(0x1.62E42Ap-1f));
  return M::apply(mul(t, two_n), p, two_n);  // 2^n (1 + t p(t))
}

// tanh(x) = sign(x) * (1 - e) / (1 + e) with e = exp(-2|x|): no cancellation for large |x|,
// absolute error ~1e-7 near 0.
ATTNLENS_VEC_INLINE f32x4 tanh(f32x4 x) {
  const f32x4 sign = bit_and(x, splat(-0.0f));
  const f32x4 e = exp(mul(abs(x), splat(-2.0f)));
  const f32x4 one = splat(1.0f);
  return bit_or(div(sub(one, e), add(one, e)), sign);
}

}  // namespace attnlens::simd
#endif  // ATTNLENS_HAVE_SIMD
