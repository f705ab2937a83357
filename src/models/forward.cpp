// The forward pass over one stack of layers (transformer.h has the semantics per architecture),
// run by the config's unit (units/*.cpp) from the shared blocks (blocks.h):
//
//   ids -> unit.embed: x [N, hidden]
//   per layer: unit.layer: x = layer(x) (attention through attention() with the layer's mask
//              into the caller's weights buffer; the MLP), then a finiteness check
//   unit.finish (GPT, llama: the final norm);  logits at the asked positions = rows . E^T
//   (+ bias), the rows first through unit.head_transform (BERT's MLM transform), E the token
//   embedding or llama's own lm_head.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attnlens/kernels.h"
#include "attnlens/models/transformer.h"
#include "models/blocks.h"
#include "models/forward_checks.h"
#include "models/linear.h"
#include "models/units/unit.h"
#include "validate.h"

namespace attnlens::models {
namespace {

// Every layer's output checked for overflow: finite weights can still multiply past float32.
void require_finite_activations(const std::vector<float>& x, const char* where) {
  if (detail::largest_abs_bits(FloatView(x)) >= 0x7f800000u) {
    throw NonFiniteError(where, std::string(where) +
                                    ": the activations overflowed float32 (the checkpoint's "
                                    "weights are out of range)");
  }
}

// Logits at the asked positions, and their log-sum-exp when asked.
void logits(ForwardPass& p, const ModelUnit& unit) {
  const ForwardOptions& opt = p.options;
  const ForwardOutputs& out = p.outputs;
  const std::int64_t h = p.hidden;
  const auto positions = static_cast<std::int64_t>(opt.logit_positions.size());
  if (positions == 0 || out.logits.empty()) return;
  std::vector<float> rows(static_cast<std::size_t>(positions * h));
  for (std::int64_t r = 0; r < positions; ++r) {
    const float* src = p.x.data() + opt.logit_positions[static_cast<std::size_t>(r)] * h;
    std::copy(src, src + h, rows.data() + r * h);
  }
  const float* head_bias = unit.head_transform ? unit.head_transform(p, rows, positions) : nullptr;
  // llama's own lm_head [vocab, hidden] is read like the embedding it would otherwise be tied to.
  const EmbeddingMatrix lm_head = p.views.embedding(kLmHead);
  const EmbeddingMatrix head = lm_head.rows > 0 ? lm_head : p.views.embedding(kTokenEmbedding);
  p.note_threads(tied_head(p.ctx, rows.data(), positions, head, head_bias, out.logits.data));
  if (detail::largest_abs_bits(FloatView(out.logits.data, out.logits.size)) >= 0x7f800000u) {
    throw NonFiniteError("logits",
                         "logits: overflowed float32 (the checkpoint's weights are "
                         "out of range)");
  }
  if (!out.log_sum_exp.empty()) {  // the softmax's normaliser, on the registry's SIMD exp
    const auto v = static_cast<std::size_t>(p.config.vocab);
    std::vector<float> exps(v);
    for (std::int64_t r = 0; r < positions; ++r) {
      const float* logits_row = out.logits.data + r * p.config.vocab;
      const float max = p.kernels.row_max(logits_row, v);
      out.log_sum_exp[static_cast<std::size_t>(r)] =
          max + std::log(p.kernels.exp_sum(logits_row, max, exps.data(), v));
    }
  }
}

}  // namespace

ForwardStats Transformer::forward(const ForwardInputs& in, const ForwardOptions& opt,
                                  const ForwardOutputs& out) const {
  check_forward_inputs(*this, in, opt, out);
  const ModelUnit& unit = unit_of(config_.architecture);
  ForwardPass p(*this, in, opt, out);
  const std::int64_t layers = config_.layers;
  const auto save_hidden = [&](std::int64_t index) {
    if (out.hidden_states.empty()) return;
    std::copy(p.x.begin(), p.x.end(), out.hidden_states.data + index * p.n * p.hidden);
  };

  unit.embed(p, in);
  save_hidden(0);
  for (std::int64_t l = 0; l < layers; ++l) {
    unit.layer(p, l);
    const std::string where = "layers." + std::to_string(l);
    require_finite_activations(p.x, where.c_str());
    if (l + 1 < layers || !unit.hidden_after_finish) save_hidden(l + 1);
  }
  if (unit.finish) unit.finish(p);
  if (unit.hidden_after_finish) save_hidden(layers);
  logits(p, unit);
  return p.stats;
}

}  // namespace attnlens::models
