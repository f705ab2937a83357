// The model's output layer over rows of the last stack's hidden states, shared by the logits of
// forward() and the logit lens (lens.cpp), so both read the same head: the unit's head
// transform (BERT's MLM transform) when it has one, then the token embedding (tied) or llama's
// own lm_head, plus the head's bias.
#pragma once

#include <cstdint>
#include <vector>

#include "models/blocks.h"

namespace attnlens::models {

struct ModelUnit;

// logits [positions, vocab] of `rows` [positions, hidden], which the head transform may
// overwrite. Throws NonFiniteError "logits" when a logit overflowed float32.
void lm_head_logits(ForwardPass& pass, const ModelUnit& unit, std::vector<float>& rows,
                    std::int64_t positions, float* logits);

// log sum_v exp(row_v) of one logits row, `scratch` at least vocab floats (the softmax's
// normaliser, on the registry's SIMD exp).
float log_sum_exp(const ForwardPass& pass, const float* row, float* scratch);

}  // namespace attnlens::models
