// Training a Gpt (gpt.h) with AdamW: one step is the loss and gradients of a batch, the
// gradients clipped to a global norm, then the update.
//
// AdamW (Loshchilov & Hutter), per parameter p with gradient g at step t (from 1):
//   m = beta1 m + (1 - beta1) g            v = beta2 v + (1 - beta2) g^2
//   p -= lr (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + epsilon) + lr weight_decay p
// The decay is decoupled from the gradient and applies only to the tensors whose
// ParameterInfo::decay is set (the linear layers' matrices). Before the update, when the
// gradients' global norm |g| (over every parameter) exceeds max_grad_norm, every gradient is
// scaled by max_grad_norm / |g|.
#pragma once

#include <cstdint>
#include <vector>

#include "attnlens/span.h"
#include "attnlens/training/gpt.h"

namespace attnlens::training {

struct AdamWOptions {
  float learning_rate = 1e-3f;  // 0..10
  float beta1 = 0.9f;           // [0, 1)
  float beta2 = 0.95f;          // [0, 1)
  float epsilon = 1e-8f;        // > 0
  float weight_decay = 0.1f;    // >= 0, finite
  float max_grad_norm = 1.0f;   // >= 0, finite; 0 never clips
};

struct StepOptions {
  AdamWOptions optimizer;
  ForwardSettings forward;
};

struct StepResult {
  float loss = 0.0f;       // the batch's mean cross-entropy, before the update
  float grad_norm = 0.0f;  // the gradients' global norm, before clipping
  bool clipped = false;
  std::int64_t step = 0;  // steps taken, this one included
};

// The optimizer's state: both moments of every parameter and the step count.
class AdamW {
 public:
  explicit AdamW(std::size_t parameters);

  // RangeError naming the first option out of range.
  static void validate(const AdamWOptions& options);

  // One update of `values` from `gradients` (same length as the state). Returns the global norm
  // before clipping and whether it clipped.
  struct Update {
    double grad_norm = 0.0;
    bool clipped = false;
  };
  Update update(MutableFloatView values, FloatView gradients,
                const std::vector<ParameterInfo>& tensors, const AdamWOptions& options);

  std::int64_t steps() const { return steps_; }
  // Forgets the moments and the step count (after parameters are written from outside).
  void reset();

 private:
  std::vector<float> m_, v_;
  std::int64_t steps_ = 0;
};

class GptTrainer {
 public:
  GptTrainer(const GptConfig& config, std::uint64_t seed);

  Gpt& model() { return model_; }
  const Gpt& model() const { return model_; }
  std::int64_t steps() const { return optimizer_.steps(); }

  // One step on `batch` sequences of T + 1 tokens (as Gpt::loss). Every option and the batch
  // are checked first; a loss or gradient norm that is not finite throws NonFiniteError and
  // leaves the parameters and the optimizer as they were.
  StepResult step(Span<const std::int32_t> tokens, std::int64_t batch, const StepOptions& options);

  // After parameter_values() were written from outside: checks them (NonFiniteError naming the
  // tensor) and resets the optimizer.
  void parameters_written();

 private:
  Gpt model_;
  AdamW optimizer_;
};

}  // namespace attnlens::training
