// The GPT a trainer trains (attnlens/training/gpt.h, trainer.h): its loss and attention against
// the reference forward pass of attnlens/models in double, every gradient against central
// differences of that loss, the same bits as a models::Transformer given its parameters, the
// same bits for every thread count, AdamW against a double implementation, and a loss that
// falls on a tiny corpus.
//
// Tolerances: the loss abs 1e-5 + rel 1e-5; attention weights abs 2e-6; gradients (float
// against central differences of the double loss, step 1e-4) abs 1e-6 + rel 5e-4.
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "attnlens/models/transformer.h"
#include "attnlens/training/trainer.h"
#include "reference/training_reference.h"
#include "test_util.h"

using namespace attnlens;
using namespace attnlens::training;
using namespace attnlens_test;

namespace {

const Tolerance kLoss{1e-5, 1e-5};
const Tolerance kAttention{2e-6, 0.0};
const Tolerance kGradient{1e-6, 5e-4};
const Tolerance kUpdate{2e-6, 1e-5};  // AdamW in float against double

GptConfig tiny(bool attention_only, bool final_norm = true) {
  GptConfig c;
  c.final_norm = final_norm;
  c.layers = 2;
  c.heads = 2;
  c.width = 6;
  c.context = 7;
  c.vocab = 11;
  c.attention_only = attention_only;
  c.mlp_width = 10;
  return c;
}

std::vector<std::int32_t> random_tokens(std::size_t n, std::int64_t vocab, std::uint32_t seed) {
  Rng rng(seed);
  std::vector<std::int32_t> ids(n);
  for (auto& id : ids) id = static_cast<std::int32_t>(rng.integer(0, vocab - 1));
  return ids;
}

// Parameters spread wider than the initialisation (which keeps every gradient tiny), so that
// attention is neither uniform nor one-hot and every path carries gradient.
void spread_parameters(Gpt& model, std::uint32_t seed) {
  Rng rng(seed);
  MutableFloatView values = model.parameter_values();
  for (const ParameterInfo& p : model.parameters()) {
    const bool gain = p.name.find("norm.weight") != std::string::npos;
    for (std::int64_t i = 0; i < p.elements; ++i) {
      values[static_cast<std::size_t>(p.offset + i)] =
          gain ? rng.uniform(0.5f, 1.5f) : rng.uniform(-0.6f, 0.6f);
    }
  }
}

FloatView values_of(const Gpt& model) { return model.parameter_values(); }

bool same_bits(FloatView a, FloatView b) {
  return a.size == b.size && std::memcmp(a.data, b.data, a.size * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("GPT loss, attention and every gradient match the double reference", "[training][gpt]") {
  const bool attention_only = GENERATE(true, false);
  const bool final_norm = GENERATE(true, false);
  const float temperature = GENERATE(1.0f, 0.6f);
  const KernelSet set = GENERATE(each_kernel(kernel_sets()));
  CAPTURE(attention_only, final_norm, temperature, set.name);
  const GptConfig config = tiny(attention_only, final_norm);
  Gpt model(config, 3);
  spread_parameters(model, 5);
  const std::int64_t batch = 2;
  const auto tokens =
      random_tokens(static_cast<std::size_t>(batch * config.context), config.vocab, 9);
  ForwardSettings settings;
  settings.temperature = temperature;
  settings.kernels = &set;
  const float loss = model.loss(tokens, batch, settings, /*backward=*/true);
  const auto weights = reference::gpt_weights(model);
  const double expected = reference::gpt_loss(config, weights, tokens, batch, temperature);
  CHECK(std::fabs(loss - expected) <= kLoss.abs + kLoss.rel * std::fabs(expected));

  const std::vector<std::int32_t> text(tokens.begin(), tokens.begin() + config.context);
  std::vector<float> attention(
      static_cast<std::size_t>(config.layers * config.heads * config.context * config.context));
  model.attention(text, settings, attention);
  ATTNLENS_CHECK_CLOSE(attention, reference::gpt_attention(config, weights, text, temperature),
                       kAttention, Layout{}, "attention");

  // Central differences of the reference loss, parameter by parameter.
  for (const ParameterInfo& p : model.parameters()) {
    std::vector<double> numeric(static_cast<std::size_t>(p.elements));
    auto perturbed = weights;
    std::vector<double>& w = perturbed[p.name];
    const double h = 1e-4;
    for (std::size_t i = 0; i < w.size(); ++i) {
      const double keep = w[i];
      w[i] = keep + h;
      const double up = reference::gpt_loss(config, perturbed, tokens, batch, temperature);
      w[i] = keep - h;
      const double down = reference::gpt_loss(config, perturbed, tokens, batch, temperature);
      w[i] = keep;
      numeric[i] = (up - down) / (2 * h);
    }
    const FloatView grads = model.gradients();
    const std::vector<float> analytic(grads.data + p.offset, grads.data + p.offset + p.elements);
    INFO("parameter " << p.name);
    ATTNLENS_CHECK_CLOSE(analytic, numeric, kGradient, Layout{}, p.name);
  }
}

TEST_CASE("GPT parameters in a models::Transformer give the same attention, bit for bit",
          "[training][gpt]") {
  for (const auto& [attention_only, final_norm] :
       {std::pair{true, true}, std::pair{false, true}, std::pair{true, false}}) {
    CAPTURE(attention_only, final_norm);
    GptConfig config = tiny(attention_only, final_norm);
    config.context = 9;
    Gpt model(config, 21);
    spread_parameters(model, 22);
    models::TransformerConfig t;
    t.layers = config.layers;
    t.heads = config.heads;
    t.hidden = config.width;
    t.intermediate = attention_only ? 1 : config.mlp_width;
    t.vocab = config.vocab;
    t.max_positions = config.context;
    t.final_norm = final_norm;
    models::Transformer transformer(t);
    const auto weights = reference::gpt_weights(model);
    for (std::size_t i = 0; i < transformer.weights().size(); ++i) {
      const models::WeightInfo& info = transformer.weights()[i];
      float* data = static_cast<float*>(transformer.weight_data(static_cast<std::int64_t>(i)));
      const auto found = weights.find(info.name);
      // An attention-only model's MLP: zero weights (gelu(0) = 0) and identity norms.
      const bool gain = info.name.find("norm.weight") != std::string::npos;
      for (std::int64_t e = 0; e < info.elements; ++e) {
        data[e] =
            found != weights.end() ? static_cast<float>(found->second[e]) : (gain ? 1.0f : 0.0f);
      }
    }
    transformer.finalize();
    const auto text = random_tokens(static_cast<std::size_t>(config.context), config.vocab, 4);
    const std::size_t count =
        static_cast<std::size_t>(config.layers * config.heads * config.context * config.context);
    std::vector<float> ours(count), theirs(count);
    model.attention(text, {}, ours);
    transformer.forward({text, {}}, {}, {theirs, {}, {}, {}});
    CHECK(same_bits(ours, theirs));
  }
}

TEST_CASE("GPT training is the same bits on any number of threads", "[training][gpt][threads]") {
  GptConfig config;
  config.layers = 2;
  config.heads = 3;
  config.width = 24;
  config.context = 40;
  config.vocab = 50;
  const std::int64_t batch = 4;
  std::vector<std::vector<float>> results;
  std::vector<float> losses;
  for (std::int64_t threads : {1, 2, 3, 0}) {
    GptTrainer trainer(config, 8);
    StepOptions options;
    options.forward.threads = threads;
    for (std::uint32_t step = 0; step < 3; ++step) {
      const auto tokens = random_tokens(static_cast<std::size_t>(batch * 41), config.vocab, step);
      losses.push_back(trainer.step(tokens, batch, options).loss);
    }
    const FloatView values = values_of(trainer.model());
    results.emplace_back(values.data, values.data + values.size);
  }
  for (std::size_t i = 1; i < results.size(); ++i) {
    CHECK(same_bits(results[i], results[0]));
    for (std::size_t s = 0; s < 3; ++s) CHECK(losses[i * 3 + s] == losses[s]);
  }
}

TEST_CASE("GPT initialisation: a seed gives the same parameters, GPT-2's statistics",
          "[training][gpt]") {
  GptConfig config;
  config.vocab = 100;
  Gpt a(config, 7), b(config, 7), c(config, 8);
  CHECK(same_bits(values_of(a), values_of(b)));
  CHECK_FALSE(same_bits(values_of(a), values_of(c)));
  for (const ParameterInfo& p : a.parameters()) {
    INFO(p.name);
    const float* v = values_of(a).data + p.offset;
    double mean = 0, squares = 0;
    for (std::int64_t i = 0; i < p.elements; ++i) {
      mean += v[i];
      squares += double(v[i]) * v[i];
    }
    mean /= static_cast<double>(p.elements);
    const double std_dev = std::sqrt(squares / static_cast<double>(p.elements) - mean * mean);
    if (p.shape.size() == 1) {
      CHECK(std_dev == 0.0);
      CHECK(mean == (p.name.find("norm.weight") != std::string::npos ? 1.0 : 0.0));
      CHECK_FALSE(p.decay);
    } else {
      const bool residual = p.name.find("attention.output") != std::string::npos ||
                            p.name.find("mlp.output") != std::string::npos;
      CHECK(std_dev == Approx(residual ? 0.01 : 0.02).epsilon(0.05));
      CHECK(p.decay == (p.name.find("embedding") == std::string::npos));
    }
  }
}

TEST_CASE("GPT without ln_f has no final_norm tensors; token_embedding_std sets the embedding",
          "[training][gpt]") {
  GptConfig config;
  config.vocab = 100;
  config.final_norm = false;
  config.token_embedding_std = 0.2f;
  Gpt model(config, 7);
  bool token = false;
  for (const ParameterInfo& p : model.parameters()) {
    INFO(p.name);
    CHECK(p.name.rfind("final_norm", 0) == std::string::npos);
    if (p.name != "token_embedding" && p.name != "position_embedding") continue;
    const float* v = values_of(model).data + p.offset;
    double squares = 0;
    for (std::int64_t i = 0; i < p.elements; ++i) squares += double(v[i]) * v[i];
    const double std_dev = std::sqrt(squares / static_cast<double>(p.elements));
    CHECK(std_dev == Approx(p.name == "token_embedding" ? 0.2 : 0.02).epsilon(0.05));
    token = token || p.name == "token_embedding";
  }
  CHECK(token);
}

TEST_CASE("AdamW: bias-corrected moments, decoupled decay, global-norm clipping",
          "[training][optimizer]") {
  GptConfig config = tiny(true);
  GptTrainer trainer(config, 1);
  spread_parameters(trainer.model(), 2);
  const FloatView values = values_of(trainer.model());
  std::vector<double> p(values.data, values.data + values.size), m(p.size()), v(p.size());
  StepOptions options;
  options.optimizer.learning_rate = 0.01f;
  options.optimizer.max_grad_norm = 0.5f;  // the spread parameters' gradients are larger
  for (int step = 1; step <= 3; ++step) {
    const auto tokens = random_tokens(2 * 8, config.vocab, static_cast<std::uint32_t>(step));
    const StepResult r = trainer.step(tokens, 2, options);
    const FloatView g = trainer.model().gradients();
    double norm = 0;
    for (float x : g) norm += double(x) * x;
    norm = std::sqrt(norm);
    CHECK(r.grad_norm == Approx(norm).epsilon(1e-6));
    CHECK(r.clipped == (norm > 0.5));
    CHECK(r.step == step);
    const double clip = norm > 0.5 ? 0.5 / norm : 1.0;
    const AdamWOptions& o = options.optimizer;
    for (const ParameterInfo& t : trainer.model().parameters()) {
      for (std::int64_t i = t.offset; i < t.offset + t.elements; ++i) {
        const double gi = g[static_cast<std::size_t>(i)] * clip;
        m[i] = o.beta1 * m[i] + (1 - o.beta1) * gi;
        v[i] = o.beta2 * v[i] + (1 - o.beta2) * gi * gi;
        const double m_hat = m[i] / (1 - std::pow(o.beta1, step));
        const double v_hat = v[i] / (1 - std::pow(o.beta2, step));
        p[i] -= o.learning_rate * m_hat / (std::sqrt(v_hat) + o.epsilon) +
                (t.decay ? o.learning_rate * o.weight_decay * p[i] : 0.0);
      }
    }
    ATTNLENS_CHECK_CLOSE(values_of(trainer.model()), p, kUpdate, Layout{},
                         "parameters after step " + std::to_string(step));
  }
}

TEST_CASE("GPT training: the loss falls on a tiny corpus", "[training][gpt]") {
  // "abcabd abcabd ..." as ids: after a few hundred steps the model predicts it almost surely.
  const std::string text = "the cat sat on the mat. the cat sat on the mat. the cat ate. ";
  std::vector<std::int32_t> corpus;
  for (char ch : text) corpus.push_back(static_cast<std::int32_t>(static_cast<unsigned char>(ch)));
  GptConfig config;
  config.layers = 2;
  config.heads = 2;
  config.width = 32;
  config.context = 16;
  config.vocab = 128;
  GptTrainer trainer(config, 1);
  StepOptions options;
  options.optimizer.learning_rate = 3e-3f;
  Rng rng(3);
  float first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    std::vector<std::int32_t> batch;
    for (int b = 0; b < 8; ++b) {
      const auto start = rng.integer(0, static_cast<std::int64_t>(corpus.size()) - 17);
      batch.insert(batch.end(), corpus.begin() + start, corpus.begin() + start + 17);
    }
    const float loss = trainer.step(batch, 8, options).loss;
    if (step == 0) first = loss;
    last = loss;
  }
  INFO("first " << first << ", last " << last);
  CHECK(first == Approx(std::log(128.0)).epsilon(0.05));  // uniform at initialisation
  CHECK(last < 0.5f);
}
