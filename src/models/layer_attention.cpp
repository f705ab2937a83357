#include "models/layer_attention.h"

#include <algorithm>

namespace attnlens::models {

int attend_layer(const LayerHeads& s, const float* qkv, const AttentionOptions& options,
                 float* output, MutableFloatView weights) {
  const std::int64_t block = s.n * s.head_dim;
  const float* k = qkv + s.heads * block;
  const float* v = k + s.kv_heads * block;
  const auto view = [](const float* data, std::int64_t floats) {
    return FloatView(data, static_cast<std::size_t>(floats));
  };
  if (s.kv_heads == s.heads) {
    const AttentionInputs inputs{{s.heads, s.n, s.n, s.head_dim, s.head_dim},
                                 view(qkv, s.heads * block),
                                 view(k, s.heads * block),
                                 view(v, s.heads * block)};
    const MutableFloatView out(output, static_cast<std::size_t>(s.heads * block));
    return attention(inputs, options, AttentionOutputs{out, weights, {}}).threads;
  }
  // Grouped K/V heads: one call per query head, over its group's K and V where they lie.
  const std::int64_t group = s.heads / s.kv_heads;
  int threads = 1;
  for (std::int64_t h = 0; h < s.heads; ++h) {
    const std::int64_t g = h / group;
    const AttentionInputs inputs{{1, s.n, s.n, s.head_dim, s.head_dim},
                                 view(qkv + h * block, block),
                                 view(k + g * block, block),
                                 view(v + g * block, block)};
    const MutableFloatView out(output + h * block, static_cast<std::size_t>(block));
    MutableFloatView head_weights;
    if (!weights.empty()) {
      head_weights =
          MutableFloatView(weights.data + h * s.n * s.n, static_cast<std::size_t>(s.n * s.n));
    }
    threads = std::max(threads,
                       attention(inputs, options, AttentionOutputs{out, head_weights, {}}).threads);
  }
  return threads;
}

}  // namespace attnlens::models
