// Properties that hold whatever the numbers: weights are distributions (or exactly zero when a
// row sees no key), masked weights are exactly 0, both strategies agree, the temperature limits
// behave, large logits do not overflow, and streaming skips the tiles the mask removes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "reference/reference.h"
#include "test_util.h"

using namespace attnlens;
using namespace attnlens_test;

namespace {

AttentionResult run(const Problem& p, AttentionOptions options, Strategy strategy,
                    const KernelSet& set, bool with_weights) {
  if (options.score == ScoreFunction::kAdditive) options.additive = p.additive();
  options.strategy = strategy;
  options.kernels = &set;
  return attention(p.inputs(), options, with_weights, false);
}

// Every weight row sums to 1 within 1e-5, or, when the mask leaves the row no key, is exactly
// zero together with its output row; every masked weight is exactly 0.
void check_distributions(const Problem& p, const AttentionOptions& options,
                         const AttentionResult& r) {
  const AttentionShape& s = p.shape;
  for (std::int64_t h = 0; h < s.heads; ++h) {
    const std::vector<unsigned char> visible = mask_matrix(options.mask, s, h);
    for (std::int64_t i = 0; i < s.query_len; ++i) {
      const float* w = &r.weights[(h * s.query_len + i) * s.key_len];
      const float* o = &r.output[(h * s.query_len + i) * s.value_dim];
      const unsigned char* row_visible = &visible[i * s.key_len];
      INFO("h=" << h << " i=" << i);
      double sum = 0.0;
      std::int64_t count = 0;
      for (std::int64_t j = 0; j < s.key_len; ++j) {
        if (!row_visible[j] && w[j] != 0.0f) {
          FAIL_CHECK("masked weight at j=" << j << " is " << w[j] << ", must be exactly 0");
          return;
        }
        sum += w[j];
        count += row_visible[j] != 0;
      }
      if (count == 0) {
        for (std::int64_t c = 0; c < s.value_dim; ++c) {
          if (o[c] != 0.0f) {
            FAIL_CHECK("fully masked row: output c=" << c << " is " << o[c] << ", must be 0");
            return;
          }
        }
      } else if (!(std::fabs(sum - 1.0) <= 1e-5)) {
        FAIL_CHECK("weights sum to " << sum << " (tolerance 1e-5), " << count << " visible");
        return;
      }
    }
  }
  SUCCEED();
}

// Count of (head, query block, key block) tiles holding at least one visible pair: a streaming
// run must visit at least these (or it would be wrong), and for band masks exactly these.
std::int64_t non_empty_tiles(const MaskSpec& mask, const AttentionShape& s, std::int64_t bq,
                             std::int64_t bk) {
  std::int64_t count = 0;
  for (std::int64_t h = 0; h < s.heads; ++h) {
    for (std::int64_t q0 = 0; q0 < s.query_len; q0 += bq) {
      for (std::int64_t k0 = 0; k0 < s.key_len; k0 += bk) {
        bool any = false;
        for (std::int64_t i = q0; i < std::min(q0 + bq, s.query_len) && !any; ++i) {
          for (std::int64_t j = k0; j < std::min(k0 + bk, s.key_len) && !any; ++j) {
            any = reference::visible(mask, s, h, i, j);
          }
        }
        count += any;
      }
    }
  }
  return count;
}

}  // namespace

TEST_CASE("properties: weight rows are distributions, empty rows exactly zero", "[properties]") {
  const AttentionShape shape{3, 23, 19, 8, 6};
  std::uint32_t seed = 40;
  for (MaskKind kind : all_mask_kinds()) {
    const Problem p = make_problem(shape, seed++);
    MaskStorage storage;
    AttentionOptions options;
    options.mask = make_mask(kind, shape, seed++, storage);
    if (kind == MaskKind::kCustom) {
      // An explicitly empty row: query 4 sees nothing.
      std::fill(storage.custom.begin() + 4 * 19, storage.custom.begin() + 5 * 19, 0);
    }
    for (const KernelSet& set : kernel_sets()) {
      INFO("mask " << mask_name(kind) << ", kernels " << set.name);
      check_distributions(p, options, run(p, options, Strategy::kMaterialized, set, true));

      // Streaming has no weights, but its fully masked output rows must be exactly zero too.
      const AttentionResult streamed = run(p, options, Strategy::kStreaming, set, false);
      for (std::int64_t h = 0; h < shape.heads; ++h) {
        const std::vector<std::int64_t> counts = visible_counts(options.mask, shape, h);
        for (std::int64_t i = 0; i < shape.query_len; ++i) {
          if (counts[i] != 0) continue;
          for (std::int64_t c = 0; c < shape.value_dim; ++c) {
            INFO("streaming fully masked row h=" << h << " i=" << i << " c=" << c);
            REQUIRE(streamed.output[(h * shape.query_len + i) * shape.value_dim + c] == 0.0f);
          }
        }
      }
    }
  }
}

TEST_CASE("properties: causal and window weights are exactly zero outside the band",
          "[properties]") {
  const AttentionShape shape{2, 40, 40, 16, 16};
  const Problem p = make_problem(shape, 5);
  for (const KernelSet& set : kernel_sets()) {
    AttentionOptions options;
    options.mask.causal = true;
    AttentionResult r = run(p, options, Strategy::kMaterialized, set, true);
    for (std::int64_t h = 0; h < 2; ++h) {
      for (std::int64_t i = 0; i < 40; ++i) {
        for (std::int64_t j = i + 1; j < 40; ++j) {
          INFO(set.name << " causal h=" << h << " i=" << i << " j=" << j);
          REQUIRE(r.weights[(h * 40 + i) * 40 + j] == 0.0f);
        }
      }
    }
    options.mask = MaskSpec{};
    options.mask.window = LocalWindow{3, 5, 1};
    r = run(p, options, Strategy::kMaterialized, set, true);
    for (std::int64_t h = 0; h < 2; ++h) {
      for (std::int64_t i = 0; i < 40; ++i) {
        for (std::int64_t j = 0; j < 40; ++j) {
          if (j - i >= -3 && j - i <= 5) continue;
          INFO(set.name << " window h=" << h << " i=" << i << " j=" << j);
          REQUIRE(r.weights[(h * 40 + i) * 40 + j] == 0.0f);
        }
      }
    }
  }
}

TEST_CASE("properties: streaming equals materialized", "[properties][streaming]") {
  // Many small tiles so tile boundaries, tails and skipped tiles are all exercised.
  const AttentionShape shape{2, 67, 53, 12, 9};
  const std::int64_t blocks[][2] = {{4, 4}, {7, 5}, {1, 16}, {0, 0}};
  std::uint32_t seed = 60;
  for (MaskKind kind : {MaskKind::kNone, MaskKind::kCausal, MaskKind::kCausalWindow,
                        MaskKind::kDilatedWindow, MaskKind::kStrided, MaskKind::kFixed,
                        MaskKind::kGlobalCausal, MaskKind::kKeyLengths, MaskKind::kCombined}) {
    for (const auto& block : blocks) {
      const Problem p = make_problem(shape, seed++);
      MaskStorage storage;
      AttentionOptions options;
      options.mask = make_mask(kind, shape, seed++, storage);
      options.query_block = block[0];
      options.key_block = block[1];
      for (const KernelSet& set : kernel_sets()) {
        INFO("mask " << mask_name(kind) << ", blocks " << block[0] << "x" << block[1]
                     << ", kernels " << set.name);
        const AttentionResult materialized = run(p, options, Strategy::kMaterialized, set, false);
        const AttentionResult streamed = run(p, options, Strategy::kStreaming, set, false);
        ATTNLENS_CHECK_CLOSE(
            streamed.output, to_double(materialized.output.data(), materialized.output.size()),
            (Tolerance{1e-5, 0.0}), head_layout(2, 67, 9, "c"), "streaming vs materialized output");
      }
    }
  }
}

TEST_CASE("properties: temperature towards 0 approaches argmax", "[properties][temperature]") {
  const AttentionShape shape{2, 16, 12, 4, 3};
  const Problem p = make_problem(shape, 123);
  const reference::Result ref = reference::attention(p.inputs(), AttentionOptions{});
  for (float temperature : {1e-4f, 1e-6f}) {
    AttentionOptions options;
    options.temperature = temperature;
    options.mask.causal = true;
    for (const KernelSet& set : kernel_sets()) {
      INFO(set.name << " T=" << temperature);
      const AttentionResult sharp = run(p, options, Strategy::kMaterialized, set, true);
      const AttentionResult streamed = run(p, options, Strategy::kStreaming, set, false);
      std::int64_t rows_checked = 0;
      for (std::int64_t h = 0; h < 2; ++h) {
        for (std::int64_t i = 0; i < 16; ++i) {
          // The argmax over visible keys (j <= i) of the raw scores, and the gap to the runner-up.
          const double* scores = &ref.scores[(h * 16 + i) * 12];
          const std::int64_t visible = std::min<std::int64_t>(i + 1, 12);
          const std::int64_t best = std::max_element(scores, scores + visible) - scores;
          double gap = std::numeric_limits<double>::infinity();
          for (std::int64_t j = 0; j < visible; ++j) {
            if (j != best) gap = std::min(gap, scores[best] - scores[j]);
          }
          // Skip near ties: a logit gap of 20 (score gap 40 T at scale 1/2) leaves the rest < 1e-8.
          if (gap < 40.0 * temperature) continue;
          ++rows_checked;
          const float weight = sharp.weights[(h * 16 + i) * 12 + best];
          if (!(weight > 0.999f)) {
            FAIL_CHECK("h=" << h << " i=" << i << ": argmax j=" << best << " has weight " << weight
                            << ", expected > 0.999");
            return;
          }
          for (std::int64_t c = 0; c < 3; ++c) {
            const float v_best = p.v[(h * 12 + best) * 3 + c];
            const float o_sharp = sharp.output[(h * 16 + i) * 3 + c];
            const float o_streamed = streamed.output[(h * 16 + i) * 3 + c];
            if (!(std::fabs(o_sharp - v_best) <= 1e-3f &&
                  std::fabs(o_streamed - v_best) <= 1e-3f)) {
              FAIL_CHECK("h=" << h << " i=" << i << " c=" << c << ": output " << o_sharp
                              << " (streaming " << o_streamed << ") is not v[argmax] = " << v_best
                              << " within 1e-3");
              return;
            }
          }
        }
      }
      CHECK(rows_checked >= 20);  // most rows have a clear argmax
    }
  }
}

TEST_CASE("properties: large temperature approaches uniform", "[properties][temperature]") {
  const AttentionShape shape{2, 20, 24, 8, 4};
  const Problem p = make_problem(shape, 321);
  MaskStorage storage;
  AttentionOptions options;
  options.temperature = 1e6f;
  options.mask = make_mask(MaskKind::kCombined, shape, 322, storage);
  for (const KernelSet& set : kernel_sets()) {
    INFO(set.name);
    const AttentionResult r = run(p, options, Strategy::kMaterialized, set, true);
    for (std::int64_t h = 0; h < 2; ++h) {
      const std::vector<unsigned char> visible = mask_matrix(options.mask, shape, h);
      const std::vector<std::int64_t> counts = visible_counts(options.mask, shape, h);
      for (std::int64_t i = 0; i < 20; ++i) {
        for (std::int64_t j = 0; j < 24; ++j) {
          if (!visible[i * 24 + j]) continue;
          const float weight = r.weights[(h * 20 + i) * 24 + j];
          if (!(std::fabs(weight - 1.0 / counts[i]) <= 1e-4)) {
            FAIL_CHECK("h=" << h << " i=" << i << " j=" << j << ": weight " << weight
                            << ", expected 1/" << counts[i] << " within 1e-4");
            return;
          }
        }
      }
    }
  }
  SUCCEED();
}

TEST_CASE("properties: large logits do not overflow", "[properties]") {
  SECTION("entries ~100 with D = 1: logits ~1e4") {
    const AttentionShape shape{2, 33, 33, 1, 4};
    Problem p = make_problem(shape, 9, -100.0f, 100.0f);
    Rng rng(10);
    p.v = random_floats(p.v.size(), rng);  // values stay in [-1, 1]
    for (const KernelSet& set : kernel_sets()) {
      for (MaskKind kind : {MaskKind::kNone, MaskKind::kCausal}) {
        MaskStorage storage;
        AttentionOptions options;
        options.mask = make_mask(kind, shape, 11, storage);
        const AttentionResult r = run(p, options, Strategy::kMaterialized, set, true);
        INFO(set.name << " mask " << mask_name(kind));
        check_distributions(p, options, r);
        const AttentionResult streamed = run(p, options, Strategy::kStreaming, set, false);
        for (float x : streamed.output) REQUIRE(std::fabs(x) <= 1.0f);  // a convex combination of v
      }
    }
  }
  SECTION("scale 1e4 with inputs in [-1, 1]") {
    const AttentionShape shape{2, 17, 29, 8, 5};
    const Problem p = make_problem(shape, 12);
    AttentionOptions options;
    options.scale = 1e4f;
    for (const KernelSet& set : kernel_sets()) {
      INFO(set.name);
      const AttentionResult r = run(p, options, Strategy::kMaterialized, set, true);
      check_distributions(p, options, r);
      const AttentionResult streamed = run(p, options, Strategy::kStreaming, set, false);
      for (float x : streamed.output) REQUIRE(std::fabs(x) <= 1.0f);
    }
  }
}

TEST_CASE("properties: large values whose weighted sums exceed FLT_MAX give finite, exact outputs",
          "[properties]") {
  // The output is a weighted mean of values, so it is finite whenever they are; only the
  // unnormalised sum of Nk * |v| could overflow, which the strategies avoid by scaling values by
  // a power of two. That scaling is exact: the output equals, bit for bit, the output of values
  // scaled down beforehand, scaled back up (and held within max |v|, as a mean must be, where
  // the rounding of 8192 terms carried it past).
  struct Case {
    const char* name;
    AttentionShape shape;
    float value;
    float q_scale;  // 0: every logit 0, so every weight before normalisation is exactly 1
  };
  const float kMax = std::numeric_limits<float>::max();
  for (const Case& c :
       {Case{"v = 1e38, Nk = 4, uniform weights", AttentionShape{1, 3, 4, 4, 3}, 1e38f, 0.0f},
        Case{"v = 1e35, Nk = 8192", AttentionShape{2, 5, 8192, 4, 5}, 1e35f, 1.0f},
        Case{"v = FLT_MAX, Nk = 3", AttentionShape{1, 9, 3, 2, 4}, kMax, 1.0f}}) {
    Problem p = make_problem(c.shape, 31);
    for (float& x : p.q) x *= c.q_scale;
    // Alternating signs keep the means away from max |v| for all but the last value column.
    for (std::size_t i = 0; i < p.v.size(); ++i) {
      const bool last_column = i % static_cast<std::size_t>(c.shape.value_dim) ==
                               static_cast<std::size_t>(c.shape.value_dim - 1);
      p.v[i] = last_column ? c.value : (p.v[i] > 0 ? c.value : -c.value * 0.5f);
    }
    Problem prescaled = p;
    const float down = std::ldexp(1.0f, -40);
    for (float& x : prescaled.v) x *= down;
    const reference::Result expected = reference::attention(p.inputs(), AttentionOptions{});
    for (const KernelSet& set : kernel_sets()) {
      for (Strategy strategy : {Strategy::kMaterialized, Strategy::kStreaming}) {
        INFO(c.name << ", " << set.name << ", " << strategy_name(strategy));
        AttentionResult r;
        REQUIRE_NOTHROW(r = run(p, AttentionOptions{}, strategy, set, false));
        const AttentionResult small = run(prescaled, AttentionOptions{}, strategy, set, false);
        for (std::size_t i = 0; i < r.output.size(); ++i) {
          INFO("output[" << i << "] = " << r.output[i] << ", reference " << expected.output[i]);
          REQUIRE(std::isfinite(r.output[i]));
          REQUIRE(std::fabs(r.output[i]) <= c.value);
          REQUIRE(std::fabs(r.output[i] - expected.output[i]) <= 1e-5 * c.value);
          if (c.value != kMax) {
            const float unscaled = std::ldexp(small.output[i], 40);
            REQUIRE(r.output[i] == std::clamp(unscaled, -c.value, c.value));
          }
        }
      }
    }
  }
}

TEST_CASE("properties: strategy choice and stats", "[properties][stats]") {
  const AttentionShape shape{2, 64, 48, 8, 8};
  const Problem p = make_problem(shape, 99);
  AttentionOptions options;
  options.strategy = Strategy::kMaterialized;
  CHECK(attention(p.inputs(), options).stats.strategy == Strategy::kMaterialized);
  options.strategy = Strategy::kAuto;
  CHECK(attention(p.inputs(), options, true, false).stats.strategy == Strategy::kMaterialized);
  CHECK(attention(p.inputs(), options, false, true).stats.strategy == Strategy::kMaterialized);
  CHECK(attention(p.inputs(), options).stats.strategy == Strategy::kStreaming);
  options.strategy = Strategy::kStreaming;
  const AttentionStats streaming = attention(p.inputs(), options).stats;
  CHECK(streaming.strategy == Strategy::kStreaming);
  CHECK(streaming.tiles_visited == streaming.tiles_total);  // no mask: every tile
  CHECK(streaming.tiles_total > 0);
}

TEST_CASE("properties: streaming skips tiles the mask removes", "[properties][stats]") {
  SECTION("causal, N = 256, default tiles") {
    const AttentionShape shape{2, 256, 256, 16, 16};
    const Problem p = make_problem(shape, 1);
    AttentionOptions options;
    options.mask.causal = true;
    options.strategy = Strategy::kStreaming;
    const AttentionStats stats = attention(p.inputs(), options).stats;
    INFO("visited " << stats.tiles_visited << " of " << stats.tiles_total);
    CHECK(stats.tiles_visited > 0);
    // Diagonal tiles are half visible, so causal costs a bit more than half of the tiles.
    CHECK(stats.tiles_visited <= 0.65 * stats.tiles_total);
  }
  SECTION("causal, N = 256, 32 x 32 tiles: exactly the non-empty tiles") {
    const AttentionShape shape{2, 256, 256, 16, 16};
    const Problem p = make_problem(shape, 2);
    AttentionOptions options;
    options.mask.causal = true;
    options.strategy = Strategy::kStreaming;
    options.query_block = options.key_block = 32;
    const AttentionStats stats = attention(p.inputs(), options).stats;
    CHECK(stats.tiles_total == 2 * 8 * 8);
    CHECK(stats.tiles_visited == non_empty_tiles(options.mask, shape, 32, 32));  // 2 * 36
    CHECK(stats.tiles_visited <= 0.6 * stats.tiles_total);
  }
  SECTION("window 16 both sides, N = 512, 32 x 32 tiles: at most 3 tiles per query block") {
    const AttentionShape shape{2, 512, 512, 8, 8};
    const Problem p = make_problem(shape, 3);
    AttentionOptions options;
    options.mask.window = LocalWindow{16, 16, 1};
    options.strategy = Strategy::kStreaming;
    options.query_block = options.key_block = 32;
    const AttentionStats stats = attention(p.inputs(), options).stats;
    INFO("visited " << stats.tiles_visited << " of " << stats.tiles_total);
    CHECK(stats.tiles_total == 2 * 16 * 16);
    CHECK(stats.tiles_visited <= 2 * 16 * 3);
    CHECK(stats.tiles_visited == non_empty_tiles(options.mask, shape, 32, 32));
  }
  SECTION("key_lengths: padded key tiles are skipped") {
    const AttentionShape shape{2, 64, 128, 8, 8};
    const Problem p = make_problem(shape, 4);
    AttentionOptions options;
    options.mask.key_lengths = {32, 0};
    options.strategy = Strategy::kStreaming;
    options.query_block = options.key_block = 32;
    const AttentionStats stats = attention(p.inputs(), options).stats;
    CHECK(stats.tiles_total == 2 * 2 * 4);
    CHECK(stats.tiles_visited == non_empty_tiles(options.mask, shape, 32, 32));  // 2
  }
  SECTION("scratch: streaming needs far less than materialized") {
    const AttentionShape shape{2, 512, 512, 16, 16};
    const Problem p = make_problem(shape, 5);
    AttentionOptions options;
    options.strategy = Strategy::kMaterialized;
    const AttentionStats materialized = attention(p.inputs(), options).stats;
    options.strategy = Strategy::kStreaming;
    const AttentionStats streamed = attention(p.inputs(), options).stats;
    INFO("scratch bytes: materialized " << materialized.scratch_bytes << ", streaming "
                                        << streamed.scratch_bytes);
    CHECK(materialized.scratch_bytes >= 512 * 512 * 4);
    CHECK(streamed.scratch_bytes < materialized.scratch_bytes);
  }
}
