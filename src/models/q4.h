// 4-bit weights (GGML's Q4_0 and Q4_K) as the linear layers keep them in memory, and their
// packing into the panel form the dequantising panel kernels run on (ModelOps::q4_panel_gemm /
// q4_panel_to_f32, ops.h). Both block types become one form per 32 depths of a column: an
// unsigned 4-bit q, an f32 scale s and an f32 min m, value = s * q - m.
//   Q4_0  s = d, m = 8 d                        ((q - 8) * d, ggml's dequantize_row_q4_0)
//   Q4_K  s = d * sc, m = dmin * mn (sub-block) (ggml's dequantize_row_q4_K: d1 * q - m1)
// s * q is exact in f32 (a 4-bit integer times at most 11 + 6 significant bits), so one rounding
// of s * q - m gives the weight ggml's dequantisation gives, bit for bit, whether the kernel
// multiplies and subtracts or fuses the two (Q4_0's s * q - m is exact). The one exception is a
// zero's sign: Q4_0's (q - 8) * d is -0 for q = 8 where d < 0, s * q - m is +0; they are equal
// and give the same bits in every sum of products (which starts at +0).
//
//   written  W as out rows of in / 32 sub-blocks of 24 bytes: s and m as little-endian f32, then
//            16 bytes whose low nibbles are the first 16 q and high nibbles the last 16 (Q4_0's
//            own nibble order). The JavaScript loader writes it from a GGUF's Q4_0 / Q4_K
//            blocks (a reshuffle, no rounding) or quantises an f32 / f16 checkpoint to Q4_0.
//   packed   column panels [ceil(out / 8)][in / 32] of 192 bytes each: the 8 columns' s, their
//            m, then [16 depth pairs][8 columns] bytes, depth p in the low nibble and p + 16 in
//            the high one. Padding columns are 0 throughout. Column groups (GPT-2's q | k | v)
//            pack on their own, as packing.h does.
// Both take 6 bits per weight (Q4_0's file 4.5, Q4_K's 4.5; the f32 scale and min are what lets
// the kernels dequantise with one multiply and one subtract, and the two types share them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attnlens::models {

constexpr std::int64_t kQ4Block = 32;                                  // depths per sub-block
constexpr std::int64_t kQ4BlockBytes = 4 + 4 + kQ4Block / 2;           // written: s, m, 16 bytes
constexpr std::int64_t kQ4PanelBlockBytes = 2 * 8 * 4 + kQ4Block * 4;  // packed: 8 s, 8 m, 128

// Bytes of a matrix written as Q4 rows (in a multiple of 32).
inline std::int64_t q4_written_bytes(std::int64_t in, std::int64_t out) {
  return out * (in / kQ4Block) * kQ4BlockBytes;
}
// Bytes of one packed column panel of depth `in`.
inline std::int64_t q4_panel_bytes(std::int64_t in) { return in / kQ4Block * kQ4PanelBlockBytes; }
// Bytes of a matrix of `groups` column groups once packed.
std::int64_t q4_packed_bytes(std::int64_t in, std::int64_t out, std::int64_t groups);

// InvalidArgumentError naming `name` unless `in` is a positive multiple of 32.
void require_q4_depth(std::int64_t in, const std::string& name);

// NonFiniteError naming `name`, the sub-block and its row when a written scale or min is NaN or
// infinite.
void require_finite_q4(const std::uint8_t* written, std::int64_t in, std::int64_t out,
                       const std::string& name);

// Packs written Q4 rows into `dst` (q4_packed_bytes long); `src` and `dst` do not overlap.
void pack_q4_matrix(const std::uint8_t* src, std::int64_t in, std::int64_t out, std::int64_t groups,
                    std::uint8_t* dst);

}  // namespace attnlens::models
