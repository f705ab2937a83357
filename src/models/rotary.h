// Rotary position embeddings: the inverse frequencies of a config (RopeScaling) and the cos/sin
// tables of the first N positions, which ModelOps::rotary applies to each q and k head.
#pragma once

#include <cstdint>
#include <vector>

#include "attnlens/models/transformer.h"

namespace attnlens::models {

// head_dim / 2 inverse frequencies, in float as the transformers library keeps them.
std::vector<float> inverse_frequencies(const RotaryConfig& rotary, std::int64_t head_dim);

// cos / sin [n][head_dim / 2] of positions p = first .. first + n - 1 (a decoding step's start
// after the cached ones): angle(p, i) = float(p) * inv_freq[i], the product rounded to float as
// LlamaRotaryEmbedding's float32 matmul rounds it, then cos and sin of that angle.
void rotary_tables(const std::vector<float>& inv_freq, std::int64_t n, std::vector<float>& cos,
                   std::vector<float>& sin, std::int64_t first = 0);

}  // namespace attnlens::models
