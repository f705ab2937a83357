// The model's output layer (lm_head.h).
#include "models/lm_head.h"

#include <cmath>

#include "models/linear.h"
#include "models/units/unit.h"
#include "validate.h"

namespace attnlens::models {

void lm_head_logits(ForwardPass& p, const ModelUnit& unit, std::vector<float>& rows,
                    std::int64_t positions, float* logits) {
  const float* head_bias = unit.head_transform ? unit.head_transform(p, rows, positions) : nullptr;
  // llama's own lm_head [vocab, hidden] is read like the embedding it would otherwise be tied to.
  const EmbeddingMatrix lm_head = p.views.embedding(kLmHead);
  const EmbeddingMatrix head = lm_head.rows > 0 ? lm_head : p.views.embedding(kTokenEmbedding);
  p.note_threads(tied_head(p.ctx, rows.data(), positions, head, head_bias, logits));
  const auto count = static_cast<std::size_t>(positions * p.config.vocab);
  if (detail::largest_abs_bits(FloatView(logits, count)) >= 0x7f800000u) {
    throw NonFiniteError("logits",
                         "logits: overflowed float32 (the checkpoint's weights are "
                         "out of range)");
  }
}

float log_sum_exp(const ForwardPass& p, const float* row, float* scratch) {
  const auto v = static_cast<std::size_t>(p.config.vocab);
  const float max = p.kernels.row_max(row, v);
  return max + std::log(p.kernels.exp_sum(row, max, scratch, v));
}

}  // namespace attnlens::models
