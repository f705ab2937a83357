// An encoder-decoder's cross-attention surgery (transformer.h's CrossMask) as what attention()
// takes: a mask over the [T, N] (target, source) scores and the score scale.
#pragma once

#include <cstdint>
#include <vector>

#include "attnlens/mask.h"
#include "attnlens/models/transformer.h"

namespace attnlens::models {

struct CrossAttentionMask {
  MaskSpec mask;
  float scale = 0.0f;
};

// For target rows at decoder positions past .. past + n - 1 over m source tokens, with the
// layer's own score scale: kFull no mask; kLast and kLocal a custom mask whose flags live in
// `flags` (n * m bytes, kept by the caller through the attention() call); kMean scale 0, so every
// score is 0 and each row's softmax is 1/m on every source token.
CrossAttentionMask cross_attention_mask(const CrossMask& cross, std::int64_t past, std::int64_t n,
                                        std::int64_t m, float scale,
                                        std::vector<unsigned char>& flags);

}  // namespace attnlens::models
