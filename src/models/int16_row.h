// One row of activations as 16-bit integers per block of 32 depths: what the one-row Q8_0 and
// 4-bit kernels (ops.h's QuantPanelGemvFn, a decoding step's token) multiply their integer weights
// by, with integer dot products (wasm's i32x4.dot_i16x8_s, SSE2's pmaddwd, NEON's smlal).
//
// Block b keeps scale[b] = max |x| / 32767 and values v = round(x / scale[b]) in [-32767, 32767],
// so v * scale[b] is within scale[b] / 2 of x: at most 1/65534 of the block's largest value,
// 1/258 of what the 8-bit weight's own rounding moves it (1/254 of its block's largest weight).
// llama.cpp rounds the activations to 8 bits for its Q8_0 dot product, as large an error as the
// weights'; 16 bits keep the attention a person looks at what the weights make it, and are still
// integers the SIMD units multiply 8 pairs at a time.
//
// A block whose largest value is not finite keeps its values 0 and its scale NaN or infinite, so
// the outputs it reaches are not finite either (as an f32 product's would be) and the forward's
// finiteness checks name them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnlens::models {

constexpr std::int64_t kInt16Block = 32;  // depths per block: the Q8_0 and 4-bit blocks' own

struct Int16Row {
  std::vector<std::int16_t> values;  // [k]
  std::vector<float> scales;         // [k / 32]: x ~ values * scale
  std::vector<float> sums;           // [k / 32]: scale * (the block's values summed, exactly)

  // Rounds x[p * x_step] for p < k (a multiple of 32) into this row; the buffers only grow.
  void quantize(std::size_t k, const float* x, std::size_t x_step);
};

}  // namespace attnlens::models
