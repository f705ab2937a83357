// The llama family's forward pass (LlamaForCausalLM, Qwen2ForCausalLM: RMSNorm, rotary
// positions, grouped K/V heads, SwiGLU, tied or separate LM head) against the double-precision
// reference (tests/reference/llama_reference.cpp): each kernel set and storage dtype, the
// variants real checkpoints have (SmolLM2's and Qwen2.5's shapes in miniature, an explicit
// head_dim, sliding-window layers, RoPE scalings), threads, errors, and the memory decision for
// Qwen2.5-0.5B and SmolLM2-135M's configs (checked without allocating).
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "models_test_util.h"

using namespace attnlens;
using namespace attnlens::models;
using namespace attnlens_test;

namespace {

void check_llama(const TransformerConfig& c, std::uint32_t seed, std::int64_t n,
                 const ForwardOptions& options = {}) {
  Transformer model(c);
  const Checkpoint ckpt = make_checkpoint(model, seed);
  write_weights(model, ckpt);
  check_against_reference(model, ckpt, random_ids(n, c.vocab, seed + 1), {}, options);
}

// The parameter and the message of the error constructing a model raises, or "no error".
std::pair<std::string, std::string> refusal(const TransformerConfig& c, std::int64_t limit) {
  try {
    Transformer model(c, limit);
  } catch (const Error& e) {
    return {e.parameter(), e.what()};
  }
  return {"no error", ""};
}

// The config.json values of the Hub's checkpoints.
TransformerConfig qwen25_05b() {
  TransformerConfig c = tiny(Architecture::kLlama);
  c.layers = 24;
  c.heads = 14;
  c.kv_heads = 2;
  c.hidden = 896;
  c.intermediate = 4864;
  c.vocab = 151936;
  c.max_positions = 32768;
  c.rotary.theta = 1000000.0;
  return c;
}

TransformerConfig smollm2_135m() {
  TransformerConfig c = tiny(Architecture::kLlama);
  c.layers = 30;
  c.heads = 9;
  c.kv_heads = 3;
  c.hidden = 576;
  c.intermediate = 1536;
  c.vocab = 49152;
  c.max_positions = 8192;
  c.qkv_bias = false;
  c.layer_norm_eps = 1e-5f;
  c.rotary.theta = 100000.0;
  return c;
}

}  // namespace

TEST_CASE("llama: the forward pass matches the double reference", "[models][llama]") {
  for (const KernelSet& kernels : kernel_sets()) {
    for (std::int64_t n : {1, 5, 9, 20}) {
      ForwardOptions options;
      options.kernels = &kernels;
      INFO("kernels " << kernels.name << " N=" << n);
      check_llama(tiny(Architecture::kLlama), static_cast<std::uint32_t>(n), n, options);
    }
  }
}

TEST_CASE("llama: the variants checkpoints have", "[models][llama]") {
  TransformerConfig c = tiny(Architecture::kLlama);
  SECTION("SmolLM2's kind: no biases, 6 query heads over 3 K/V heads, eps 1e-5") {
    c.heads = 6;
    c.kv_heads = 3;
    c.qkv_bias = false;
    c.layer_norm_eps = 1e-5f;
    c.rotary.theta = 100000.0;
  }
  SECTION("multi-query: one K/V head") { c.kv_heads = 1; }
  SECTION("no grouping: as many K/V heads as query heads") { c.kv_heads = 0; }
  SECTION("an untied lm_head and every bias (attention_bias, mlp_bias)") {
    c.tie_word_embeddings = false;
    c.output_bias = true;
    c.mlp_bias = true;
  }
  SECTION("head_dim 10 with 4 heads over a width of 24, widths off the 8-column panels") {
    c.head_dim = 10;
    c.intermediate = 30;
  }
  SECTION("sliding-window layers (Qwen2's use_sliding_window above max_window_layers)") {
    c.local_windows = {0, 3, 3};
  }
  SECTION("linear RoPE scaling") {
    c.rotary.scaling = RopeScaling::kLinear;
    c.rotary.factor = 2.5;
  }
  SECTION("Llama 3.1's RoPE scaling, with the three bands in a head") {
    c.rotary.scaling = RopeScaling::kLlama3;
    c.rotary.theta = 500000.0;
    c.rotary.factor = 8.0;
    c.rotary.low_freq_factor = 1.0;
    c.rotary.high_freq_factor = 4.0;
    c.rotary.original_max_positions = 64;
  }
  SECTION("f16 storage") { c.matrix_dtype = WeightDtype::kF16; }
  check_llama(c, 5, 13);
}

TEST_CASE("llama: a sliding window keeps exactly window - 1 keys before each query",
          "[models][llama]") {
  TransformerConfig c = tiny(Architecture::kLlama);
  c.local_windows = {0, 3, 0};
  Transformer model(c);
  write_weights(model, make_checkpoint(model, 9));
  CHECK(model.layer_mask(0).window == std::nullopt);
  REQUIRE(model.layer_mask(1).window.has_value());
  CHECK(model.layer_mask(1).window->before == 2);
  const std::int64_t n = 8;
  const Run r = run(model, random_ids(n, c.vocab, 3), {}, {});
  for (std::int64_t hd = 0; hd < c.heads; ++hd) {
    for (std::int64_t i = 0; i < n; ++i) {
      const float* row = r.attention.data() + ((1 * c.heads + hd) * n + i) * n;
      for (std::int64_t j = 0; j < n; ++j) {
        if (j > i || j <= i - 3) CHECK(row[j] == 0.0f);
      }
    }
  }
}

TEST_CASE("llama: mask overrides and threads", "[models][llama][threads]") {
  TransformerConfig c = tiny(Architecture::kLlama);
  MaskSpec look_back_one;
  look_back_one.causal = true;
  look_back_one.window = LocalWindow{1, 1, 1};
  ForwardOptions one;
  one.masks = {look_back_one};
  Transformer model(c);
  const Checkpoint ckpt = make_checkpoint(model, 13);
  write_weights(model, ckpt);
  const auto ids = random_ids(11, c.vocab, 14);
  check_against_reference(model, ckpt, ids, {}, one, one.masks);

  c.hidden = 48;  // several column blocks in every GEMM and vocabulary blocks in the head
  c.intermediate = 600;
  c.vocab = 1100;
  Transformer wide(c);
  write_weights(wide, make_checkpoint(wide, 15));
  const auto long_ids = random_ids(17, c.vocab, 16);
  ForwardOptions several;
  several.threads = 3;
  const Run a = run(wide, long_ids, {}, {}), b = run(wide, long_ids, {}, several);
  CHECK(std::memcmp(a.attention.data(), b.attention.data(), a.attention.size() * 4) == 0);
  CHECK(std::memcmp(a.logits.data(), b.logits.data(), a.logits.size() * 4) == 0);
}

TEST_CASE("llama: configs are validated, naming the field", "[models][llama][errors]") {
  const auto field_of = [](const TransformerConfig& c) { return refusal(c, 1 << 30).first; };
  TransformerConfig c = tiny(Architecture::kLlama);
  c.kv_heads = 3;  // 4 query heads do not split into 3 groups
  CHECK(field_of(c) == "kv_heads");
  c = tiny(Architecture::kLlama);
  c.kv_heads = 5;
  CHECK(field_of(c) == "kv_heads");
  c = tiny(Architecture::kLlama);
  c.head_dim = 7;  // rotary halves need an even head
  CHECK(field_of(c) == "head_dim");
  c = tiny(Architecture::kLlama);
  c.activation = Activation::kGeluTanh;
  CHECK(field_of(c) == "activation");
  c = tiny(Architecture::kLlama);
  c.rotary.theta = 0.0;
  CHECK(field_of(c) == "rope_theta");
  c = tiny(Architecture::kLlama);
  c.rotary.scaling = RopeScaling::kLlama3;
  c.rotary.high_freq_factor = 0.5;
  CHECK(field_of(c) == "rope_high_freq_factor");
  c = tiny(Architecture::kGpt2);
  c.kv_heads = 1;  // only the llama family groups its K/V heads
  CHECK(field_of(c) == "kv_heads");
  c = tiny(Architecture::kBert);
  c.activation = Activation::kSilu;
  CHECK(field_of(c) == "activation");
  c = tiny(Architecture::kGptNeo);
  c.tie_word_embeddings = false;
  CHECK(field_of(c) == "tie_word_embeddings");
  CHECK(field_of(tiny(Architecture::kLlama)) == "no error");
}

TEST_CASE("Qwen2.5-0.5B and SmolLM2-135M: sizes and the memory decision, without allocating",
          "[models][llama][errors]") {
  const std::int64_t wasm32 = std::int64_t{1} << 31;  // what a wasm32 module addresses
  TransformerConfig qwen = qwen25_05b();
  const ModelSize f32 = model_size(qwen);
  // Embedding (tied) + 24 layers of q/k/v (+ biases), o, gate/up/down and two norms + the norm.
  const std::int64_t per_layer =
      896 * 896 + 896 + 2 * (896 * 128 + 128) + 896 * 896 + 3 * 896 * 4864 + 2 * 896;
  CHECK(f32.parameters == 151936 * 896 + 24 * per_layer + 896);
  CHECK(f32.parameters == 494032768);
  CHECK(f32.weight_bytes == 4 * f32.parameters);  // every width is whole 8-column panels
  CHECK(f32.load_scratch_bytes == 4 * 896 * 4864);
  // f32: 1.84 GiB of weights, within the 2 GiB but not within 1.5 GiB; f16: 0.92 GiB.
  CHECK(require_model_fits(qwen, wasm32).weight_bytes == f32.weight_bytes);
  const std::string refused = refusal(qwen, 3 * (std::int64_t{1} << 29)).second;
  INFO(refused);
  CHECK(refused.rfind("model: needs 1.86 GiB (494032768 parameters, weights 1.84 GiB", 0) == 0);
  CHECK(refused.find("more than the 1.50 GiB of memory available") != std::string::npos);
  CHECK(refused.find("f16 storage halves the matrices") != std::string::npos);
  qwen.matrix_dtype = WeightDtype::kF16;
  const ModelSize f16 = require_model_fits(qwen, 3 * (std::int64_t{1} << 29));
  const std::int64_t vectors = 24 * (896 + 2 * 128 + 2 * 896) + 896;  // biases and norms stay f32
  CHECK(f16.weight_bytes == 2 * (f16.parameters - vectors) + 4 * vectors);
  CHECK(f16.weight_bytes < (std::int64_t{1} << 30));
  // SmolLM2-135M: 134.5M parameters, 513 MiB at f32.
  const ModelSize smol = require_model_fits(smollm2_135m(), wasm32);
  CHECK(smol.parameters == 134515008);
  CHECK(smol.weight_bytes == 4 * smol.parameters);
}
