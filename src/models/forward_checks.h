#pragma once

#include "attnlens/models/transformer.h"

namespace attnlens::models {

// RangeError / ShapeError / InvalidArgumentError naming the first bad input of a forward() call:
// finalized model, 1 <= N <= max_positions, token ids and types in range, mask and position
// counts, output buffer lengths, threads.
void check_forward_inputs(const Transformer& model, const ForwardInputs& inputs,
                          const ForwardOptions& options, const ForwardOutputs& outputs);

}  // namespace attnlens::models
