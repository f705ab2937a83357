// Decoding against a KV cache (attnlens/models/kv_cache.h): a prompt's forward fills the cache,
// then steps of one or more new tokens give the logits, attention rows and hidden states a full
// forward of the whole prefix gives at those positions, for GPT-2 (learned positions), GPT-Neo
// (a local layer whose window the sequence outgrows), Qwen2-style llama (rotary, grouped K/V
// heads, biases) and a llama with a sliding-window layer; and every error a cache can meet,
// after which the cache and model stay usable.
//
// Tolerance: the step runs the same kernels on the same rows (linear layers row by row, the
// attention's decode path reads the cached rows in place with the same operations), so
// attention weights and hidden states came out bit-identical here; logits differ by rounding
// only, as the LM head takes dot products for fewer than 8 rows and the GEMM from 8 (worst
// 4% of the tolerance). Tolerances: attention abs 1e-6; logits, hidden abs 1e-5 + rel 1e-5.
#include <string>
#include <vector>

#include "attnlens/models/kv_cache.h"
#include "models_test_util.h"

using namespace attnlens;
using namespace attnlens::models;
using namespace attnlens_test;

namespace {

const Tolerance kStepTol{1e-5, 1e-5};
const Tolerance kStepAttentionTol{1e-6, 0.0};

struct Case {
  const char* name;
  TransformerConfig config;
};

std::vector<Case> decoder_cases() {
  TransformerConfig gpt2 = tiny(Architecture::kGpt2);
  gpt2.scale_attn_by_inverse_layer_idx = true;
  TransformerConfig gpt2_f16 = tiny(Architecture::kGpt2);
  gpt2_f16.matrix_dtype = WeightDtype::kF16;
  TransformerConfig neo = tiny(Architecture::kGptNeo);  // layer 1 local, window 4
  TransformerConfig qwen2 = tiny(Architecture::kLlama);
  TransformerConfig sliding = tiny(Architecture::kLlama);
  sliding.local_windows = {0, 3, 0};
  sliding.qkv_bias = false;
  sliding.kv_heads = 1;
  return {{"gpt2", gpt2},
          {"gpt2 f16", gpt2_f16},
          {"gpt_neo", neo},
          {"qwen2", qwen2},
          {"llama sliding window", sliding}};
}

struct Step {
  std::vector<float> logits, attention, hidden;
};

// One forward of ids[from, from + count) against `cache`, every new position's logits.
Step step(const Transformer& model, KvCache& cache, const std::vector<std::int32_t>& ids,
          std::int64_t from, std::int64_t count) {
  const TransformerConfig& c = model.config();
  const std::int64_t keys = from + count;
  const std::vector<std::int32_t> part(ids.begin() + from, ids.begin() + keys);
  ForwardOptions options;
  options.cache = &cache;
  for (std::int64_t i = 0; i < count; ++i) options.logit_positions.push_back(i);
  Step s;
  s.logits.resize(static_cast<std::size_t>(count * c.vocab));
  s.attention.resize(static_cast<std::size_t>(c.layers * c.heads * count * keys));
  s.hidden.resize(static_cast<std::size_t>((c.layers + 1) * count * c.hidden));
  model.forward({part, {}}, options, {s.attention, s.logits, s.hidden, {}, {}});
  return s;
}

// The rows [from, from + count) of a full forward of ids[0, from + count).
Step rows_of_full_run(const Transformer& model, const std::vector<std::int32_t>& ids,
                      std::int64_t from, std::int64_t count) {
  const TransformerConfig& c = model.config();
  const std::int64_t t = from + count;
  const Run full = run(model, std::vector<std::int32_t>(ids.begin(), ids.begin() + t), {}, {});
  Step s;
  s.logits.assign(full.logits.begin() + from * c.vocab, full.logits.end());
  for (std::int64_t lh = 0; lh < c.layers * c.heads; ++lh) {
    const auto begin = full.attention.begin() + (lh * t + from) * t;
    s.attention.insert(s.attention.end(), begin, begin + count * t);
  }
  for (std::int64_t state = 0; state <= c.layers; ++state) {
    const auto begin = full.hidden.begin() + (state * t + from) * c.hidden;
    s.hidden.insert(s.hidden.end(), begin, begin + count * c.hidden);
  }
  return s;
}

void check_step_equals_full_run(const Transformer& model, KvCache& cache,
                                const std::vector<std::int32_t>& ids, std::int64_t from,
                                std::int64_t count) {
  const TransformerConfig& c = model.config();
  const Step got = step(model, cache, ids, from, count);
  const Step expected = rows_of_full_run(model, ids, from, count);
  const std::vector<double> logits(expected.logits.begin(), expected.logits.end());
  const std::vector<double> attention(expected.attention.begin(), expected.attention.end());
  const std::vector<double> hidden(expected.hidden.begin(), expected.hidden.end());
  INFO("past " << from << ", " << count << " new");
  ATTNLENS_CHECK_CLOSE(got.logits, logits, kStepTol, matrix_layout(count, c.vocab), "logits");
  ATTNLENS_CHECK_CLOSE(
      got.attention, attention, kStepAttentionTol,
      (Layout{{c.layers, c.heads, count, from + count}, {"layer", "head", "i", "j"}}), "attention");
  ATTNLENS_CHECK_CLOSE(got.hidden, hidden, kStepTol,
                       (Layout{{c.layers + 1, count, c.hidden}, {"state", "i", "c"}}), "hidden");
  CHECK(cache.length() == from + count);
}

Transformer& finalized(Transformer& model, std::uint32_t seed) {
  write_weights(model, make_checkpoint(model, seed));
  return model;
}

}  // namespace

TEST_CASE("steps against a KV cache equal a full forward of the prefix", "[models][kv_cache]") {
  for (const Case& k : decoder_cases()) {
    for (const KernelSet& kernels : kernel_sets()) {
      Transformer model(k.config);
      finalized(model, 31);
      const auto ids = random_ids(18, k.config.vocab, 32);
      // A prompt of 5, single steps, steps of several tokens (across GPT-Neo's window of 4, the
      // sliding window of 3 and a full panel of 8 queries), up to a capacity below max_positions.
      KvCache cache(model, 18);
      INFO(k.name << " kernels " << kernels.name);
      std::int64_t past = 0;
      for (std::int64_t count : {5, 1, 1, 3, 1, 7}) {
        check_step_equals_full_run(model, cache, ids, past, count);
        past += count;
      }
      CHECK(cache.length() == 18);
      // reset() starts a new text: the prompt's forward again.
      cache.reset();
      check_step_equals_full_run(model, cache, ids, 0, 6);
      check_step_equals_full_run(model, cache, ids, 6, 1);
    }
  }
}

TEST_CASE("a cache's size is bounded and checked before it is allocated", "[models][kv_cache]") {
  const TransformerConfig c = tiny(Architecture::kLlama);  // 3 layers, 2 K/V heads of 6
  Transformer model(c);
  finalized(model, 5);
  CHECK(KvCache::bytes_for(c, 20) == 3 * 2 * 2 * 20 * 6 * 4);
  KvCache cache(model, 20);
  CHECK(cache.bytes() == KvCache::bytes_for(c, 20));
  CHECK(cache.capacity() == 20);
  CHECK(cache.length() == 0);
  CHECK_THROWS_AS(KvCache(model, 0), RangeError);
  CHECK_THROWS_AS(KvCache(model, 21), RangeError);  // max_positions is 20
  CHECK_THROWS_AS(KvCache(model, 5, -1), RangeError);
  try {
    KvCache too_big(model, 20, 1000);
    FAIL("a cache over the memory limit was allocated");
  } catch (const RangeError& e) {
    CHECK(std::string(e.what()).find("5760 bytes") != std::string::npos);
    CHECK(std::string(e.what()).find("1000 bytes") != std::string::npos);
  }
  TransformerConfig b = tiny(Architecture::kBert);
  Transformer bert(b);
  CHECK_THROWS_AS(KvCache(bert, 4), InvalidArgumentError);  // not causal
}

TEST_CASE("a step that cannot run leaves the cache as it was", "[models][kv_cache]") {
  const TransformerConfig c = tiny(Architecture::kGpt2);  // max_positions 20
  Transformer model(c), other(c);
  finalized(model, 7);
  finalized(other, 8);
  const auto ids = random_ids(20, c.vocab, 9);
  const auto tokens = [&](std::int64_t from, std::int64_t count) {
    return std::vector<std::int32_t>(ids.begin() + from, ids.begin() + from + count);
  };
  const auto forward = [&](const Transformer& m, KvCache& cache, std::vector<std::int32_t> part,
                           ForwardOptions options = {}) {
    options.cache = &cache;
    m.forward({part, {}}, options, {});
  };
  KvCache small(model, 6);
  forward(model, small, tokens(0, 4));
  CHECK_THROWS_AS(forward(model, small, tokens(4, 3)), RangeError);  // capacity 6
  try {
    forward(model, small, tokens(4, 3));
  } catch (const RangeError& e) {
    CHECK(std::string(e.parameter()) == "capacity");
  }
  CHECK(small.length() == 4);
  std::vector<std::int32_t> bad = tokens(4, 1);
  bad[0] = static_cast<std::int32_t>(c.vocab);
  CHECK_THROWS_AS(forward(model, small, bad), RangeError);
  CHECK_THROWS_AS(forward(other, small, tokens(4, 1)), InvalidArgumentError);  // another model's
  ForwardOptions masked;
  masked.masks = {MaskSpec{}};
  CHECK_THROWS_AS(forward(model, small, tokens(4, 1), masked), InvalidArgumentError);
  std::vector<float> wrong(static_cast<std::size_t>(c.layers * c.heads));  // N x N, not N x 5
  ForwardOptions with_cache;
  with_cache.cache = &small;
  CHECK_THROWS(model.forward({tokens(4, 1), {}}, with_cache, {wrong, {}, {}, {}, {}}));
  CHECK(small.length() == 4);
  check_step_equals_full_run(model, small, ids, 4, 2);  // still usable

  KvCache full(model, 20);
  forward(model, full, tokens(0, 20));
  try {
    forward(model, full, tokens(0, 1));
    FAIL("a step past max_positions ran");
  } catch (const RangeError& e) {
    CHECK(std::string(e.parameter()) == "token_ids");
    CHECK(std::string(e.what()).find("max_position_embeddings") != std::string::npos);
  }
}
