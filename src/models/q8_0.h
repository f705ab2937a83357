// Q8_0 weights (GGML's 8-bit block: 32 int8 values q and one f16 scale d, value = q * d) as the
// linear layers keep them in memory, and their packing into the panel form the dequantising
// panel kernels run on (ModelOps::q8_panel_gemm / q8_panel_to_f32, ops.h).
//
//   written  W as out rows of in / 32 blocks, GGML's own bytes (a little-endian f16 scale, then
//            32 int8): what a GGUF file stores for a Q8_0 tensor, and what the JavaScript
//            quantiser writes for an f32 / f16 checkpoint.
//   packed   column panels [ceil(out / 8)][in / 32] of 288 bytes each: the 8 columns' scales as
//            f32 (the f16 scale widened, exactly), then the int8 values [32 depths][8 columns].
//            Padding columns have scale 0 and values 0. A matrix of several column groups
//            (GPT-2's q | k | v) packs each group on its own, as packing.h does.
//
// Every q * d is exact in f32 (an 8-bit integer times an 11-bit significand), so a dequantised
// weight equals the float weight of the Q8_0 tensor bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attnlens::models {

constexpr std::int64_t kQ8Block = 32;                 // depths per block (GGML's QK8_0)
constexpr std::int64_t kQ8BlockBytes = 2 + kQ8Block;  // written: f16 scale + 32 int8
constexpr std::int64_t kQ8PanelBlockBytes = 8 * 4 + kQ8Block * 8;  // packed: 8 f32 + [32][8]

// Bytes of a matrix written as Q8_0 rows (in a multiple of 32).
inline std::int64_t q8_written_bytes(std::int64_t in, std::int64_t out) {
  return out * (in / kQ8Block) * kQ8BlockBytes;
}
// Bytes of one packed column panel of depth `in`.
inline std::int64_t q8_panel_bytes(std::int64_t in) { return in / kQ8Block * kQ8PanelBlockBytes; }
// Bytes of a matrix of `groups` column groups once packed.
std::int64_t q8_packed_bytes(std::int64_t in, std::int64_t out, std::int64_t groups);

// InvalidArgumentError naming `name` unless `in` is a positive multiple of 32: Q8_0 blocks run
// along the depth of a linear layer.
void require_q8_depth(std::int64_t in, const std::string& name);

// NonFiniteError naming `name` and the block when a written block's scale is NaN or infinite.
void require_finite_q8(const std::uint8_t* written, std::int64_t in, std::int64_t out,
                       const std::string& name);

// Packs written Q8_0 rows into `dst` (q8_packed_bytes long); `src` and `dst` do not overlap.
void pack_q8_matrix(const std::uint8_t* src, std::int64_t in, std::int64_t out, std::int64_t groups,
                    std::uint8_t* dst);

}  // namespace attnlens::models
