// Bad input to the trainer (attnlens/training/gpt.h, trainer.h) throws the documented
// attnlens::Error naming the parameter, before any work: the config, the batch, token ids,
// temperature and threads (the forward's rules), AdamW's options, parameters written with NaN
// or Infinity, and activations that overflow float32, after which the trainer is unchanged and
// keeps working.
#include <cstring>
#include <limits>
#include <vector>

#include "attnlens/training/trainer.h"
#include "error_checks.h"
#include "test_util.h"

using namespace attnlens;
using namespace attnlens::training;
using namespace attnlens_test;

namespace {

GptConfig small() {
  GptConfig c;
  c.layers = 1;
  c.heads = 2;
  c.width = 8;
  c.context = 6;
  c.vocab = 10;
  return c;
}

std::vector<std::int32_t> ids(std::size_t n) {
  std::vector<std::int32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::int32_t>(i % 10);
  return v;
}

}  // namespace

TEST_CASE("GPT config: every field is checked", "[training][errors]") {
  const auto with = [](auto change) {
    GptConfig c = small();
    change(c);
    return [c] { Gpt model(c, 1); };
  };
  check_error<RangeError>(with([](GptConfig& c) { c.layers = 0; }), "layers");
  check_error<RangeError>(with([](GptConfig& c) { c.layers = 65; }), "layers");
  check_error<RangeError>(with([](GptConfig& c) { c.heads = 0; }), "heads");
  check_error<RangeError>(with([](GptConfig& c) { c.heads = 3; }), "heads", "multiple of heads");
  check_error<RangeError>(with([](GptConfig& c) { c.width = 0; }), "width");
  for (const float std_dev : {0.0f, -0.1f, 1.5f, NAN}) {
    check_error<RangeError>(with([=](GptConfig& c) { c.token_embedding_std = std_dev; }),
                            "token_embedding_std");
  }
  check_error<RangeError>(with([](GptConfig& c) { c.context = 0; }), "context");
  check_error<RangeError>(with([](GptConfig& c) { c.context = 8193; }), "context");
  check_error<RangeError>(with([](GptConfig& c) { c.vocab = 0; }), "vocab");
  check_error<RangeError>(with([](GptConfig& c) { c.vocab = (1 << 20) + 1; }), "vocab");
  check_error<RangeError>(with([](GptConfig& c) { c.mlp_width = -1; }), "mlp_width");
  check_error<RangeError>(with([](GptConfig& c) { c.layer_norm_eps = 0.0f; }), "layer_norm_eps");
  check_error<RangeError>(with([](GptConfig& c) { c.layer_norm_eps = kNaN; }), "layer_norm_eps");
}

TEST_CASE("GPT loss and attention: the forward's rules", "[training][errors]") {
  Gpt model(small(), 1);
  const ForwardSettings ok;
  const auto loss = [&](std::vector<std::int32_t> tokens, std::int64_t batch,
                        ForwardSettings s = {}) {
    return [&model, tokens, batch, s] { model.loss(tokens, batch, s, true); };
  };
  check_error<RangeError>(loss(ids(14), 0), "batch");
  check_error<ShapeError>(loss(ids(13), 2), "tokens", "batch * (T + 1)");
  check_error<ShapeError>(loss(ids(2), 2), "tokens");   // T = 0
  check_error<ShapeError>(loss(ids(16), 2), "tokens");  // T = 7 > context
  std::vector<std::int32_t> bad = ids(14);
  bad[9] = 10;
  check_error<RangeError>(loss(bad, 2), "tokens", "token 9 is 10");
  bad[9] = -1;
  check_error<RangeError>(loss(bad, 2), "tokens", "token 9 is -1");
  for (float t : {0.0f, -1.0f, kNaN, kInf}) {
    ForwardSettings s;
    s.temperature = t;
    check_error<RangeError>(loss(ids(14), 2, s), "temperature");
  }
  for (std::int64_t threads : {-1, 257}) {
    ForwardSettings s;
    s.threads = threads;
    check_error<RangeError>(loss(ids(14), 2, s), "threads");
  }
  std::vector<float> weights(2 * 5 * 5);
  check_error<ShapeError>([&] { model.attention(ids(5), ok, {weights.data(), 49}); }, "weights");
  check_error<RangeError>([&] { model.attention({}, ok, {}); }, "tokens");
  std::vector<float> big(2 * 7 * 7);
  check_error<RangeError>([&] { model.attention(ids(7), ok, big); }, "tokens");
  std::vector<std::int32_t> outside = ids(5);
  outside[4] = 99;
  check_error<RangeError>([&] { model.attention(outside, ok, weights); }, "tokens");
  // Still usable.
  CHECK(std::isfinite(model.loss(ids(14), 2, ok, true)));
}

TEST_CASE("AdamW options are checked before the step", "[training][errors]") {
  GptTrainer trainer(small(), 1);
  const auto step = [&](auto change) {
    StepOptions o;
    change(o.optimizer);
    return [&trainer, o] { trainer.step(ids(14), 2, o); };
  };
  check_error<RangeError>(step([](AdamWOptions& o) { o.learning_rate = -1e-3f; }), "learning_rate");
  check_error<RangeError>(step([](AdamWOptions& o) { o.learning_rate = 11.0f; }), "learning_rate");
  check_error<RangeError>(step([](AdamWOptions& o) { o.learning_rate = kNaN; }), "learning_rate");
  check_error<RangeError>(step([](AdamWOptions& o) { o.beta1 = 1.0f; }), "beta1");
  check_error<RangeError>(step([](AdamWOptions& o) { o.beta2 = -0.5f; }), "beta2");
  check_error<RangeError>(step([](AdamWOptions& o) { o.epsilon = 0.0f; }), "epsilon");
  check_error<RangeError>(step([](AdamWOptions& o) { o.weight_decay = -1.0f; }), "weight_decay");
  check_error<RangeError>(step([](AdamWOptions& o) { o.max_grad_norm = kInf; }), "max_grad_norm");
  CHECK(trainer.steps() == 0);
}

TEST_CASE("Parameters from outside: NaN named, overflow refused, the trainer unchanged",
          "[training][errors]") {
  GptTrainer trainer(small(), 1);
  MutableFloatView values = trainer.model().parameter_values();
  const std::vector<float> good(values.data, values.data + values.size);
  int found = 0;
  for (const ParameterInfo& p : trainer.model().parameters()) {
    if (p.name != "layers.0.attention.qkv.weight") continue;
    ++found;
    values[static_cast<std::size_t>(p.offset + 3)] = kNaN;
    check_error<NonFiniteError>([&] { trainer.parameters_written(); }, p.name,
                                p.name + "[3] is NaN");
  }
  CHECK(found == 1);
  // Finite but far too large: the activations overflow float32 and the step is refused.
  std::copy(good.begin(), good.end(), values.data);
  for (std::size_t i = 0; i < values.size; ++i) values[i] = good[i] * 3e37f;
  trainer.parameters_written();
  const std::vector<float> before(values.data, values.data + values.size);
  check_error_of_kind<NonFiniteError>([&] { trainer.step(ids(14), 2, StepOptions{}); });
  CHECK(std::memcmp(before.data(), values.data, before.size() * sizeof(float)) == 0);
  CHECK(trainer.steps() == 0);
  std::copy(good.begin(), good.end(), values.data);
  trainer.parameters_written();
  CHECK(trainer.step(ids(14), 2, StepOptions{}).step == 1);
}
