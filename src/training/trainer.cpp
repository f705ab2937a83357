// AdamW with global-norm clipping, and the trainer's step (trainer.h has the formulas).
#include "attnlens/training/trainer.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "validate.h"

namespace attnlens::training {
namespace {

void require_between(float value, float lo, float hi, bool hi_included, const char* name,
                     const char* range) {
  const bool ok = std::isfinite(value) && value >= lo && (hi_included ? value <= hi : value < hi);
  if (!ok)
    throw RangeError(name, std::string("must be ") + range + ", got " + std::to_string(value));
}

}  // namespace

AdamW::AdamW(std::size_t parameters) : m_(parameters, 0.0f), v_(parameters, 0.0f) {}

void AdamW::validate(const AdamWOptions& o) {
  require_between(o.learning_rate, 0.0f, 10.0f, true, "learning_rate", "between 0 and 10");
  require_between(o.beta1, 0.0f, 1.0f, false, "beta1", "at least 0 and below 1");
  require_between(o.beta2, 0.0f, 1.0f, false, "beta2", "at least 0 and below 1");
  if (!(o.epsilon > 0.0f) || !std::isfinite(o.epsilon)) {
    throw RangeError("epsilon",
                     "must be a positive finite number, got " + std::to_string(o.epsilon));
  }
  require_between(o.weight_decay, 0.0f, 1e30f, true, "weight_decay", "a finite number >= 0");
  require_between(o.max_grad_norm, 0.0f, 1e30f, true, "max_grad_norm", "a finite number >= 0");
}

AdamW::Update AdamW::update(MutableFloatView values, FloatView gradients,
                            const std::vector<ParameterInfo>& tensors, const AdamWOptions& o) {
  // The global norm in double, every parameter in order: the same sum for any thread count.
  double squares = 0.0;
  for (float g : gradients) squares += static_cast<double>(g) * g;
  Update result;
  result.grad_norm = std::sqrt(squares);
  float clip = 1.0f;
  if (o.max_grad_norm > 0.0f && result.grad_norm > o.max_grad_norm) {
    clip = static_cast<float>(o.max_grad_norm / result.grad_norm);
    result.clipped = true;
  }
  ++steps_;
  const double t = static_cast<double>(steps_);
  const auto m_correction = static_cast<float>(1.0 / (1.0 - std::pow(o.beta1, t)));
  const auto v_correction = static_cast<float>(1.0 / (1.0 - std::pow(o.beta2, t)));
  const float lr = o.learning_rate, b1 = o.beta1, b2 = o.beta2;
  for (const ParameterInfo& tensor : tensors) {
    const float decay = tensor.decay ? lr * o.weight_decay : 0.0f;
    const auto begin = static_cast<std::size_t>(tensor.offset);
    const auto end = begin + static_cast<std::size_t>(tensor.elements);
    for (std::size_t i = begin; i < end; ++i) {
      const float g = gradients[i] * clip;
      m_[i] = b1 * m_[i] + (1.0f - b1) * g;
      v_[i] = b2 * v_[i] + (1.0f - b2) * g * g;
      const float m_hat = m_[i] * m_correction, v_hat = v_[i] * v_correction;
      values[i] -= lr * m_hat / (std::sqrt(v_hat) + o.epsilon) + decay * values[i];
    }
  }
  return result;
}

void AdamW::reset() {
  std::fill(m_.begin(), m_.end(), 0.0f);
  std::fill(v_.begin(), v_.end(), 0.0f);
  steps_ = 0;
}

GptTrainer::GptTrainer(const GptConfig& config, std::uint64_t seed)
    : model_(config, seed), optimizer_(model_.parameter_values().size) {}

StepResult GptTrainer::step(Span<const std::int32_t> tokens, std::int64_t batch,
                            const StepOptions& options) {
  AdamW::validate(options.optimizer);
  StepResult result;
  result.loss = model_.loss(tokens, batch, options.forward, /*backward=*/true);
  const AdamW::Update update = optimizer_.update(model_.parameter_values(), model_.gradients(),
                                                 model_.parameters(), options.optimizer);
  result.grad_norm = static_cast<float>(update.grad_norm);
  result.clipped = update.clipped;
  result.step = optimizer_.steps();
  return result;
}

void GptTrainer::parameters_written() {
  model_.check_parameters();
  optimizer_.reset();
}

}  // namespace attnlens::training
