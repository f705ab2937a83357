// One layer's attention over head-major q [H][N][d], k and v [KV][N][d] (KV = kv_heads divides
// H; query head h reads K/V head h / (H / KV), the order the transformers library's repeat_kv
// gives), through attention() with K and V read in place: no copy of a K/V head per query head.
#pragma once

#include <cstdint>

#include "attnlens/attention.h"

namespace attnlens::models {

struct LayerHeads {
  std::int64_t heads = 0;     // H
  std::int64_t kv_heads = 0;  // KV
  std::int64_t n = 0;         // tokens
  std::int64_t head_dim = 0;  // d
};

// `qkv` holds q, then k, then v (H + 2 KV blocks of [N][d]). Writes the output [H][N][d] and,
// when `weights` is not empty, the attention weights [H][N][N]. Returns the threads that took
// part.
int attend_layer(const LayerHeads& shape, const float* qkv, const AttentionOptions& options,
                 float* output, MutableFloatView weights);

}  // namespace attnlens::models
