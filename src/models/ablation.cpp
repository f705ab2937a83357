// Head ablation (ablation.h).
#include "models/ablation.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "models/blocks.h"

namespace attnlens::models {
namespace {

// Every row of one head's block [N][d] set to the block's column means (in double, so the mean
// of a long text does not depend on the summation order's rounding).
void replace_by_mean(float* block, std::int64_t n, std::int64_t d) {
  std::vector<double> mean(static_cast<std::size_t>(d), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < d; ++j) mean[static_cast<std::size_t>(j)] += block[i * d + j];
  }
  for (double& m : mean) m /= static_cast<double>(n);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < d; ++j) {
      block[i * d + j] = static_cast<float>(mean[static_cast<std::size_t>(j)]);
    }
  }
}

std::string head_name(const HeadAblation& a) {
  return "layer " + std::to_string(a.layer) + " head " + std::to_string(a.head);
}

}  // namespace

void ablate_heads(ForwardPass& p, std::int64_t l) {
  for (const HeadAblation& a : p.options.ablations) {
    if (a.layer != l) continue;
    float* block = p.heads_out.data() + a.head * p.head_block;
    if (a.mode == AblationMode::kZero) {
      std::fill(block, block + p.head_block, 0.0f);
    } else {
      replace_by_mean(block, p.n, p.head_dim);
    }
  }
}

void check_ablations(const TransformerConfig& c, const ForwardOptions& opt) {
  std::set<std::pair<std::int64_t, std::int64_t>> seen;
  for (const HeadAblation& a : opt.ablations) {
    if (a.layer < 0 || a.layer >= c.layers) {
      throw RangeError("ablations", "layer " + std::to_string(a.layer) +
                                        " is outside the model's " + std::to_string(c.layers) +
                                        " layers");
    }
    if (a.head < 0 || a.head >= c.heads) {
      throw RangeError("ablations", "head " + std::to_string(a.head) + " is outside the " +
                                        std::to_string(c.heads) + " heads of a layer");
    }
    if (a.mode != AblationMode::kZero && a.mode != AblationMode::kMean) {
      throw InvalidArgumentError("ablations", head_name(a) + ": the mode is neither zero nor mean");
    }
    if (!seen.insert({a.layer, a.head}).second) {
      throw InvalidArgumentError("ablations", head_name(a) + " is ablated twice");
    }
    if (a.mode == AblationMode::kMean && opt.cache) {
      throw InvalidArgumentError("ablations",
                                 head_name(a) +
                                     ": mean ablation averages over the whole text, which a call "
                                     "against a KV cache does not see");
    }
  }
}

}  // namespace attnlens::models
