// The architectures' units by Architecture, and the pieces several units share.
#include <cmath>

#include "models/units/unit.h"

namespace attnlens::models {

const ModelUnit& unit_of(Architecture architecture) {
  switch (architecture) {
    case Architecture::kGptNeo:
      return kGptNeoUnit;
    case Architecture::kBert:
      return kBertUnit;
    case Architecture::kLlama:
      return kLlamaUnit;
    case Architecture::kVit:
      return kVitUnit;
    case Architecture::kMarian:
      return kMarianUnit;
    case Architecture::kGpt2:
      break;
  }
  return kGpt2Unit;
}

const StackUnit& ModelUnit::stack_of_layer(const TransformerConfig& config,
                                           std::int64_t layer) const {
  for (const StackUnit& stack : stacks) {
    const LayerRange range = stack.layers(config);
    if (layer >= range.first && layer < range.first + range.count) return stack;
  }
  return head_stack();  // unreachable for a layer of a validated config
}

LayerRange all_layers(const TransformerConfig& config) { return {0, config.layers}; }

MaskSpec causal_mask(const TransformerConfig& config, std::int64_t layer) {
  MaskSpec mask;
  mask.causal = true;
  if (!config.local_windows.empty()) {
    const std::int64_t window = config.local_windows[static_cast<std::size_t>(layer)];
    // i - window < j <= i: window - 1 keys before the query, and the query itself.
    if (window > 0) mask.window = LocalWindow{window - 1, 0, 1};
  }
  return mask;
}

float inverse_sqrt_head_dim(const TransformerConfig& config, std::int64_t /*layer*/) {
  return 1.0f / std::sqrt(static_cast<float>(head_dim_of(config)));
}

void final_norm(ForwardPass& pass, NormKind kind) {
  if (!pass.config.final_norm) return;
  const Norm norm = pass.views.norm(pass.config.layers, kFinalNormWeight, kFinalNormBias);
  normalize(pass, kind, norm, pass.x.data(), pass.x.data());
}

}  // namespace attnlens::models
