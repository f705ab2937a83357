// An encoder-decoder (Marian) decoding against a KV cache (attnlens/models/kv_cache.h): the first
// call runs the encoder once and keeps each decoder layer's cross keys and values; each step then
// runs only the new target tokens and gives the logits, decoder self-attention rows
// [layers, heads, T, past + T] and cross-attention rows [layers, heads, T, N] that a full forward
// of the whole target gives at those positions. The encoder's runs are counted (stats and the
// cache), not timed. copy_from() (a beam taking its parent's state) continues exactly as the
// parent would. Cross-attention surgery (CrossMask): each mask's rows are what it says, steps
// under it equal a full forward under it, and it changes the logits. And the errors a step can
// meet, after which the cache stays usable.
//
// Tolerance as test_models_kv_cache.cpp: same kernels on the same rows, logits differ by the LM
// head's rounding for fewer rows; attention abs 1e-6, logits abs 1e-5 + rel 1e-5.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "attnlens/models/kv_cache.h"
#include "error_checks.h"
#include "models_test_util.h"

using namespace attnlens;
using namespace attnlens::models;
using namespace attnlens_test;

namespace {

const Tolerance kStepTol{1e-5, 1e-5};
const Tolerance kStepAttentionTol{1e-6, 0.0};

struct Rows {
  std::vector<float> logits, self, cross;
  std::int64_t encoder_tokens = 0;
};

// target[from, from + count) against `cache` (ignored when null: then a full forward of
// target[0, from + count) and its rows from `from` on).
Rows run_rows(const Transformer& model, KvCache* cache, const std::vector<std::int32_t>& source,
              const std::vector<std::int32_t>& target, std::int64_t from, std::int64_t count,
              const KernelSet& kernels, const CrossMask& cross_mask = {}) {
  const TransformerConfig& c = model.config();
  const std::int64_t d = c.layers - c.encoder_layers, n = static_cast<std::int64_t>(source.size());
  const std::int64_t keys = from + count, first = cache ? from : 0, t = keys - first;
  const std::vector<std::int32_t> part(target.begin() + first, target.begin() + keys);
  ForwardOptions options;
  options.kernels = &kernels;
  options.cache = cache;
  options.cross_mask = cross_mask;
  for (std::int64_t i = 0; i < t; ++i) options.logit_positions.push_back(i);
  std::vector<float> logits(static_cast<std::size_t>(t * c.vocab));
  std::vector<float> self(static_cast<std::size_t>(d * c.heads * t * keys));
  std::vector<float> cross(static_cast<std::size_t>(d * c.heads * t * n));
  ForwardOutputs outputs;
  outputs.logits = logits;
  outputs.decoder_attention = self;
  outputs.cross_attention = cross;
  Rows r;
  r.encoder_tokens = model.forward({source, {}, part}, options, outputs).encoder_tokens;
  const std::int64_t skip = from - first;  // the full run's rows before `from`
  r.logits.assign(logits.begin() + skip * c.vocab, logits.end());
  for (std::int64_t lh = 0; lh < d * c.heads; ++lh) {
    const auto s = self.begin() + (lh * t + skip) * keys;
    r.self.insert(r.self.end(), s, s + count * keys);
    const auto x = cross.begin() + (lh * t + skip) * n;
    r.cross.insert(r.cross.end(), x, x + count * n);
  }
  return r;
}

void check_step(const Transformer& model, KvCache& cache, const std::vector<std::int32_t>& source,
                const std::vector<std::int32_t>& target, std::int64_t from, std::int64_t count,
                const KernelSet& kernels, const CrossMask& cross_mask = {}) {
  const TransformerConfig& c = model.config();
  const std::int64_t d = c.layers - c.encoder_layers, n = static_cast<std::int64_t>(source.size());
  const Rows got = run_rows(model, &cache, source, target, from, count, kernels, cross_mask);
  const Rows full = run_rows(model, nullptr, source, target, from, count, kernels, cross_mask);
  INFO("past " << from << ", " << count << " new");
  CHECK(got.encoder_tokens == (from == 0 ? n : 0));
  ATTNLENS_CHECK_CLOSE(got.logits, std::vector<double>(full.logits.begin(), full.logits.end()),
                       kStepTol, matrix_layout(count, c.vocab), "logits");
  ATTNLENS_CHECK_CLOSE(got.self, std::vector<double>(full.self.begin(), full.self.end()),
                       kStepAttentionTol,
                       (Layout{{d, c.heads, count, from + count}, {"layer", "head", "i", "j"}}),
                       "decoder self-attention");
  ATTNLENS_CHECK_CLOSE(
      got.cross, std::vector<double>(full.cross.begin(), full.cross.end()), kStepAttentionTol,
      (Layout{{d, c.heads, count, n}, {"layer", "head", "i", "j"}}), "cross-attention");
  CHECK(cache.length() == from + count);
}

}  // namespace

TEST_CASE("Marian's steps against a KV cache equal a full forward of the target",
          "[models][kv_cache]") {
  const TransformerConfig c = tiny(Architecture::kMarian);
  Transformer model(c);
  write_weights(model, make_checkpoint(model, 41));
  const auto source = random_ids(7, c.vocab, 42);
  const auto target = random_ids(14, c.vocab, 43);
  for (const KernelSet& kernels : kernel_sets()) {
    INFO("kernels " << kernels.name);
    KvCache cache(model, 16);
    std::int64_t past = 0;
    // The decoder start token alone (translate()'s first call), single steps, several at once.
    for (std::int64_t count : {1, 1, 1, 3, 8}) {
      check_step(model, cache, source, target, past, count, kernels);
      past += count;
    }
    CHECK(cache.encoder_runs() == 1);  // the encoder ran on the first call only
    // reset() starts a new source: the encoder runs again.
    cache.reset();
    const auto other = random_ids(4, c.vocab, 44);
    check_step(model, cache, other, target, 0, 2, kernels);
    check_step(model, cache, other, target, 2, 1, kernels);
    CHECK(cache.encoder_runs() == 2);
  }
}

TEST_CASE("a beam's copy of a Marian cache continues as its parent", "[models][kv_cache]") {
  const TransformerConfig c = tiny(Architecture::kMarian);
  Transformer model(c);
  write_weights(model, make_checkpoint(model, 45));
  const auto source = random_ids(5, c.vocab, 46);
  const auto target = random_ids(6, c.vocab, 47);
  const KernelSet& kernels = kernel_sets()[0];
  KvCache parent(model, 8), child(model, 8);
  run_rows(model, &parent, source, target, 0, 3, kernels);
  child.copy_from(parent);  // shares the cross keys and values, copies the 3 positions
  CHECK(child.length() == 3);
  check_step(model, child, source, target, 3, 1, kernels);
  check_step(model, parent, source, target, 3, 2, kernels);
  CHECK(parent.encoder_runs() == 1);
  CHECK(child.encoder_runs() == 0);
  // A new source on the child gets its own cross block; the parent's stays right.
  child.reset();
  check_step(model, child, target, source, 0, 2, kernels);
  check_step(model, parent, source, target, 5, 1, kernels);
  KvCache small(model, 4);
  check_error<InvalidArgumentError>([&] { small.copy_from(parent); }, "cache");
}

TEST_CASE("a Marian step's errors name the input and leave the cache usable",
          "[models][kv_cache][errors]") {
  const TransformerConfig c = tiny(Architecture::kMarian);
  Transformer model(c);
  write_weights(model, make_checkpoint(model, 48));
  const std::vector<std::int32_t> source = {1, 2, 3}, other = {1, 2, 4}, one = {5};
  KvCache cache(model, 4);
  ForwardOptions options;
  options.cache = &cache;
  model.forward({source, {}, one}, options, {});
  check_error<InvalidArgumentError>(
      [&] {
        model.forward({other, {}, one}, options, {});
      },
      "token_ids");
  std::vector<float> encoder_attention(static_cast<std::size_t>(2 * c.heads * 9));
  ForwardOutputs outputs;
  outputs.attention = encoder_attention;
  check_error<InvalidArgumentError>(
      [&] {
        model.forward({source, {}, one}, options, outputs);
      },
      "attention");
  const std::vector<std::int32_t> four = {1, 2, 3, 4};
  check_error<RangeError>([&] { model.forward({source, {}, four}, options, {}); }, "capacity");
  CHECK(cache.length() == 1);
  model.forward({source, {}, one}, options, {});
  CHECK(cache.length() == 2);
  // Cross keys and values past the memory limit (a 12-token source needs 4608 bytes, a 3-token
  // one 1152): refused before allocating.
  KvCache tight(model, 4, KvCache::bytes_for(c, 4) + 2000);
  const auto long_source = random_ids(12, c.vocab, 49);
  options.cache = &tight;
  check_error<RangeError>([&] { model.forward({long_source, {}, one}, options, {}); }, "token_ids");
  CHECK(tight.length() == 0);
  model.forward({source, {}, one}, options, {});
  CHECK(tight.length() == 1);
}

namespace {

// Whether source token j is visible to the target token at position t under `mask`.
bool visible(const CrossMask& mask, std::int64_t t, std::int64_t j, std::int64_t n) {
  switch (mask.kind) {
    case CrossMaskKind::kLast:
      return j == n - 1;
    case CrossMaskKind::kLocal:
      return std::abs(j - std::min(t, n - 1)) <= mask.radius;
    default:
      return true;
  }
}

}  // namespace

TEST_CASE("Marian's cross-attention surgery: each mask's rows are what it says",
          "[models][kv_cache]") {
  const TransformerConfig c = tiny(Architecture::kMarian);
  Transformer model(c);
  write_weights(model, make_checkpoint(model, 50));
  const auto source = random_ids(6, c.vocab, 51);
  const auto target = random_ids(9, c.vocab, 52);
  const std::int64_t n = 6, t = 9, layers_heads = (c.layers - c.encoder_layers) * c.heads;
  const KernelSet& kernels = kernel_sets()[0];
  const Rows full = run_rows(model, nullptr, source, target, 0, t, kernels);
  for (const CrossMask& mask :
       {CrossMask{CrossMaskKind::kLast, 0}, CrossMask{CrossMaskKind::kMean, 0},
        CrossMask{CrossMaskKind::kLocal, 0}, CrossMask{CrossMaskKind::kLocal, 1}}) {
    INFO("mask kind " << static_cast<int>(mask.kind) << " radius " << mask.radius);
    const Rows rows = run_rows(model, nullptr, source, target, 0, t, kernels, mask);
    for (std::int64_t lh = 0; lh < layers_heads; ++lh) {
      for (std::int64_t i = 0; i < t; ++i) {
        const float* row = rows.cross.data() + (lh * t + i) * n;
        double sum = 0;
        std::int64_t seen = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          sum += row[j];
          if (!visible(mask, i, j, n)) {
            CHECK(row[j] == 0.0f);
          } else {
            ++seen;
            if (mask.kind == CrossMaskKind::kMean) CHECK(row[j] == Approx(1.0 / n).margin(1e-6));
          }
        }
        CHECK(sum == Approx(1.0).margin(1e-5));
        CHECK(seen >= 1);
      }
    }
    // The surgery changes what the decoder computes.
    double change = 0;
    for (std::size_t k = 0; k < full.logits.size(); ++k) {
      change = std::max(change, static_cast<double>(std::fabs(full.logits[k] - rows.logits[k])));
    }
    CHECK(change > 1e-3);
    // Decoding against a cache under the mask gives the full forward's rows under it.
    KvCache cache(model, t);
    std::int64_t past = 0;
    for (std::int64_t count : {1, 1, 7}) {
      check_step(model, cache, source, target, past, count, kernels, mask);
      past += count;
    }
    // The cached keys were made with this mask: another one is refused by name.
    check_error<InvalidArgumentError>(
        [&] {
          cache.reset();
          run_rows(model, &cache, source, target, 0, 1, kernels, mask);
          run_rows(model, &cache, source, target, 1, 1, kernels, CrossMask{});
        },
        "cross_mask");
  }
  // Bad masks: a radius past the positions, or surgery on a model without cross-attention.
  check_error<RangeError>(
      [&] {
        run_rows(model, nullptr, source, target, 0, 2, kernels,
                 CrossMask{CrossMaskKind::kLocal, -1});
      },
      "cross_mask");
  Transformer gpt(tiny(Architecture::kGpt2));
  write_weights(gpt, make_checkpoint(gpt, 53));
  ForwardOptions options;
  options.cross_mask.kind = CrossMaskKind::kLast;
  check_error<InvalidArgumentError>([&] { gpt.forward({source, {}}, options, {}); }, "cross_mask");
}
