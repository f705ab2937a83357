#include "attnlens/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "attention_internal.h"
#include "attnlens/errors.h"
#include "attnlens/kernels.h"
#include "mask_eval.h"
#include "parallel.h"
#include "prepare.h"
#include "validate.h"

namespace attnlens {
namespace {

Strategy pick_strategy(const AttentionOptions& options, const AttentionOutputs& outputs) {
  if (options.strategy != Strategy::kAuto) return options.strategy;
  return outputs.weights.empty() && outputs.scores.empty() ? Strategy::kStreaming
                                                           : Strategy::kMaterialized;
}

}  // namespace

namespace detail {

double max_abs_score(const AttentionInputs& in, const AttentionOptions& options,
                     const InputMagnitudes& magnitudes) {
  const double limit = std::numeric_limits<float>::max() / 4.0;
  const double d = static_cast<double>(in.shape.head_dim);
  switch (options.score) {
    case ScoreFunction::kScaledDot:
    case ScoreFunction::kDot:
      return static_cast<double>(magnitudes.q) * magnitudes.k * d;
    case ScoreFunction::kCosine:
      return 1.0;  // |cosine| <= 1
    case ScoreFunction::kAdditive: {
      const AdditiveWeights& a = options.additive;
      const double pre_tanh = static_cast<double>(magnitudes.q) * max_abs(a.w_query) * d +
                              static_cast<double>(magnitudes.k) * max_abs(a.w_key) * d;
      if (pre_tanh > limit) return std::numeric_limits<double>::infinity();
      return static_cast<double>(max_abs(a.v)) * static_cast<double>(a.hidden);
    }
  }
  return std::numeric_limits<double>::infinity();
}

bool logits_may_overflow(const AttentionInputs& in, const AttentionOptions& options, float factor,
                         const InputMagnitudes& magnitudes) {
  // Bounds in double; a quarter of FLT_MAX leaves room for the online-softmax arithmetic.
  const double limit = std::numeric_limits<float>::max() / 4.0;
  return max_abs_score(in, options, magnitudes) * std::fabs(static_cast<double>(factor)) > limit;
}

float query_factor(const AttentionOptions& options, float scale) {
  return options.softcap > 0.0f ? static_cast<float>(static_cast<double>(scale) / options.softcap)
                                : scale / options.temperature;
}

float value_scale_for(std::int64_t key_len, float max_abs_value) {
  const double bound = static_cast<double>(key_len) * static_cast<double>(max_abs_value);
  const double limit = std::numeric_limits<float>::max() / 4.0;
  if (!(bound > limit)) return 1.0f;
  int exponent = 0;
  std::frexp(bound / limit, &exponent);  // bound / limit < 2^exponent
  return std::ldexp(1.0f, -exponent);
}

}  // namespace detail

std::vector<float> alibi_slopes(std::int64_t heads) {
  detail::require_in_range(heads, 1, std::int64_t{1} << 20, "heads");
  // The slopes of n = 2^k heads: 2^(-8/n), 2^(-16/n), ..., 2^(-8).
  const auto power_of_two_slopes = [](std::int64_t n) {
    std::vector<double> slopes;
    for (std::int64_t h = 1; h <= n; ++h) slopes.push_back(std::exp2(-8.0 * h / n));
    return slopes;
  };
  std::int64_t n = 1;
  while (n * 2 <= heads) n *= 2;
  std::vector<double> slopes = power_of_two_slopes(n);
  if (n < heads) {
    const std::vector<double> finer = power_of_two_slopes(2 * n);
    for (std::int64_t h = 0; static_cast<std::int64_t>(slopes.size()) < heads; h += 2) {
      slopes.push_back(finer[static_cast<std::size_t>(h)]);
    }
  }
  return std::vector<float>(slopes.begin(), slopes.end());
}

std::int64_t kv_head_count(const AttentionShape& shape) noexcept {
  return shape.kv_heads > 0 ? shape.kv_heads : shape.heads;
}

std::int64_t kv_head_of(const AttentionShape& shape, std::int64_t head) noexcept {
  return head / (shape.heads / kv_head_count(shape));
}

float default_scale(ScoreFunction score, std::int64_t head_dim) {
  if (score == ScoreFunction::kScaledDot && head_dim > 0) {
    return static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
  }
  return 1.0f;
}

AttentionStats attention(const AttentionInputs& inputs, const AttentionOptions& options,
                         const AttentionOutputs& outputs) {
  const detail::InputMagnitudes magnitudes = detail::validate_attention(inputs, options, outputs);
  const KernelSet& kernels = options.kernels ? *options.kernels : default_kernel_set();
  const float scale =
      options.scale ? *options.scale : default_scale(options.score, inputs.shape.head_dim);
  const detail::MaskEvaluator mask(options.mask, inputs.shape);
  const float factor = scale / options.temperature;
  const detail::LogitTerms terms = detail::logit_terms(inputs.shape, options, scale);
  const int threads = detail::resolve_threads(options.threads);
  std::optional<detail::LshBuckets> lsh;
  if (options.lsh.buckets > 0) lsh.emplace(inputs, options.lsh, threads);
  const detail::Problem problem{
      inputs,
      options,
      outputs,
      kernels,
      mask,
      factor,
      detail::logits_may_overflow(inputs, options, detail::query_factor(options, scale),
                                  magnitudes),
      terms,
      detail::terms_may_overflow(inputs.shape, options, scale,
                                 detail::max_abs_score(inputs, options, magnitudes),
                                 magnitudes.terms),
      lsh ? &*lsh : nullptr,
      options.top_k,
      threads,
      detail::value_scale_for(inputs.shape.key_len, magnitudes.v),
      magnitudes.v};

  AttentionStats stats = pick_strategy(options, outputs) == Strategy::kMaterialized
                             ? detail::run_materialized(problem)
                             : detail::run_streaming(problem);
  if (lsh) stats.scratch_bytes += lsh->bytes();
  // A safety net: outputs are weighted means of finite values and weights are probabilities, so
  // neither can overflow (the strategies rescale values whose sums could, see value_scale); a
  // non-finite element here is a bug, reported instead of handed back as NaN or Infinity.
  const std::int64_t nq = inputs.shape.query_len;
  detail::require_finite_result(FloatView(outputs.output.data, outputs.output.size), nq,
                                inputs.shape.value_dim, "output", "query", "attention");
  if (!outputs.weights.empty()) {
    detail::require_finite_result(FloatView(outputs.weights.data, outputs.weights.size), nq,
                                  inputs.shape.key_len, "weights", "query", "attention");
  }
  return stats;
}

AttentionResult attention(const AttentionInputs& inputs, const AttentionOptions& options,
                          bool return_weights, bool return_scores) {
  detail::validate_shape(inputs.shape);
  const AttentionShape& s = inputs.shape;
  AttentionResult result;
  result.output.resize(
      detail::to_size(s.heads * s.query_len * s.value_dim, sizeof(float), "output"));
  if (return_weights || return_scores) {
    const std::size_t weights =
        detail::to_size(s.heads * s.query_len * s.key_len, sizeof(float), "weights");
    if (return_weights) result.weights.resize(weights);
    if (return_scores) result.scores.resize(weights);
  }
  result.stats =
      attention(inputs, options,
                AttentionOutputs{MutableFloatView(result.output), MutableFloatView(result.weights),
                                 MutableFloatView(result.scores)});
  return result;
}

std::int64_t working_set_bytes(const AttentionShape& shape, Strategy strategy,
                               const AttentionOptions& options) {
  detail::validate_shape(shape);
  const std::int64_t f = sizeof(float);
  const std::int64_t depth =
      options.score == ScoreFunction::kAdditive && options.additive.hidden > 0
          ? options.additive.hidden
          : shape.head_dim;
  // One head's packed operands (prepare.h) and one query panel's scratch (query_panel.h).
  const std::int64_t keys4 = detail::round_up(shape.key_len, detail::kPanelKeys);
  const std::int64_t values4 = detail::round_up(shape.value_dim, detail::kPanelKeys);
  const std::int64_t operands = keys4 * (depth + values4) + shape.query_len * depth;
  const auto panel = [&](std::int64_t chunk) {
    return detail::kPanelQueries * (depth + chunk + values4 + 3);
  };
  if (strategy == Strategy::kMaterialized) {
    return f * (shape.query_len * shape.key_len + operands + panel(keys4));
  }
  return f * (operands + panel(std::min(detail::kStreamingChunk, keys4)));
}

}  // namespace attnlens
