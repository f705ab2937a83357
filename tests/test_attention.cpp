// attention() against the double reference: every score function x mask x strategy x kernel set
// on a few shapes, then many awkward shapes and tile sizes on a few masks.
//
// Tolerances (inputs uniform in [-1, 1]): outputs abs 2e-5 + rel 1e-4, weights abs 1e-5, raw
// scores abs 1e-6 * (D + 8) + rel 1e-5 (a D-term float dot product accumulates up to D roundings).
// Shapes with D = 128 get twice the output and weight tolerance for the same reason.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "attention_checks.h"

using namespace attnlens;
using namespace attnlens_test;

TEST_CASE("attention: every score function x mask x strategy x kernel set", "[attention]") {
  std::uint32_t seed = 100;
  for (const TiledCase& c : tiled_cases()) {
    for (ScoreFunction score : all_scores()) {
      for (MaskKind kind : all_mask_kinds()) {
        const Problem p = make_problem(c.shape, seed++);
        MaskStorage storage;
        AttentionOptions options;
        options.score = score;
        options.scale = c.scale;
        options.temperature = c.temperature;
        options.mask = make_mask(kind, c.shape, seed++, storage);
        options.query_block = c.query_block;
        options.key_block = c.key_block;
        INFO(describe(c.shape) << ", blocks " << c.query_block << "x" << c.key_block << ", score "
                               << score_name(score) << ", mask " << mask_name(kind));
        check_all_runs(p, options, tolerances_for(c.shape));
      }
    }
  }
}

TEST_CASE("attention: awkward shapes", "[attention]") {
  const std::vector<AttentionShape> shapes = {
      {1, 1, 1, 1, 1},      {1, 3, 3, 3, 3},       {2, 5, 5, 1, 2},   {1, 1, 130, 64, 16},
      {4, 130, 1, 4, 4},    {3, 33, 67, 8, 12},    {2, 67, 5, 3, 9},  {12, 17, 17, 64, 64},
      {2, 67, 67, 128, 32}, {1, 130, 130, 64, 64}, {12, 33, 65, 3, 1}};
  const std::vector<MaskKind> masks = {MaskKind::kNone, MaskKind::kCausal, MaskKind::kCombined};
  const std::int64_t blocks[][2] = {{0, 0}, {16, 16}, {3, 8}, {8, 1}};
  std::uint32_t seed = 2000;
  std::size_t variant = 0;
  for (const AttentionShape& shape : shapes) {
    for (ScoreFunction score : all_scores()) {
      for (MaskKind kind : masks) {
        const Problem p = make_problem(shape, seed++);
        MaskStorage storage;
        AttentionOptions options;
        options.score = score;
        options.mask = make_mask(kind, shape, seed++, storage);
        const auto& block = blocks[variant++ % 4];
        options.query_block = block[0];
        options.key_block = block[1];
        INFO(describe(shape) << ", blocks " << block[0] << "x" << block[1] << ", score "
                             << score_name(score) << ", mask " << mask_name(kind));
        check_all_runs(p, options, tolerances_for(shape));
      }
    }
  }
}

TEST_CASE("attention: streaming tile sizes and tails", "[attention][streaming]") {
  const AttentionShape shape{2, 37, 29, 8, 5};
  const std::int64_t blocks[][2] = {{1, 1},   {1, 29},  {3, 5},   {8, 8}, {16, 3},
                                    {16, 16}, {37, 29}, {64, 64}, {4, 30}};
  std::uint32_t seed = 3000;
  for (const auto& block : blocks) {
    for (MaskKind kind : all_mask_kinds()) {
      const Problem p = make_problem(shape, seed++);
      MaskStorage storage;
      AttentionOptions options;
      options.mask = make_mask(kind, shape, seed++, storage);
      options.query_block = block[0];
      options.key_block = block[1];
      options.strategy = Strategy::kStreaming;
      const reference::Result expected = reference::attention(p.inputs(), options);
      for (const KernelSet& set : kernel_sets()) {
        options.kernels = &set;
        INFO("blocks " << block[0] << "x" << block[1] << ", mask " << mask_name(kind)
                       << ", kernels " << set.name);
        const AttentionResult r = attention(p.inputs(), options);
        ATTNLENS_CHECK_CLOSE(r.output, expected.output, tolerances_for(shape).output,
                             head_layout(2, 37, 5, "c"), "output");
        const std::int64_t tiles =
            2 * ((37 + block[0] - 1) / block[0]) * ((29 + block[1] - 1) / block[1]);
        CHECK(r.stats.tiles_total == tiles);
        CHECK(r.stats.tiles_visited <= r.stats.tiles_total);
      }
    }
  }
}

TEST_CASE("attention: streaming never needs the N x N matrix, even past a 32-bit address space",
          "[attention][streaming]") {
  // H * N * N floats = 2^31 bytes: more than wasm32 can address. Streaming must run anyway (only
  // a weights or scores output forms that matrix); a narrow window keeps the test fast. Rows are
  // checked against softmax over their visible keys, computed here in double.
  const std::int64_t n = 8192;
  const AttentionShape shape{8, n, n, 2, 2};
  const Problem p = make_problem(shape, 8192);
  AttentionOptions options;
  options.mask.window = LocalWindow{2, 2};
  options.strategy = Strategy::kStreaming;
  const AttentionResult r = attention(p.inputs(), options);
  CHECK(r.stats.scratch_bytes < 64 * 1024 * 1024);
  const double scale = 1.0 / std::sqrt(2.0);
  for (std::int64_t h : {std::int64_t{0}, std::int64_t{7}}) {
    for (std::int64_t i : {std::int64_t{0}, std::int64_t{1}, n / 2, n - 1}) {
      double logits[5], top = -1e300;
      std::int64_t first = std::max<std::int64_t>(0, i - 2), last = std::min(n - 1, i + 2);
      for (std::int64_t j = first; j <= last; ++j) {
        double dot = 0.0;
        for (std::int64_t c = 0; c < 2; ++c) {
          dot +=
              double(p.q[std::size_t((h * n + i) * 2 + c)]) * p.k[std::size_t((h * n + j) * 2 + c)];
        }
        logits[j - first] = dot * scale;
        top = std::max(top, logits[j - first]);
      }
      double total = 0.0, out[2] = {0.0, 0.0};
      for (std::int64_t j = first; j <= last; ++j) {
        const double w = std::exp(logits[j - first] - top);
        total += w;
        for (std::int64_t c = 0; c < 2; ++c) out[c] += w * p.v[std::size_t((h * n + j) * 2 + c)];
      }
      for (std::int64_t c = 0; c < 2; ++c) {
        INFO("head " << h << ", query " << i << ", column " << c);
        CHECK(std::abs(r.output[std::size_t((h * n + i) * 2 + c)] - out[c] / total) < 1e-5);
      }
    }
  }
}

TEST_CASE("attention: cosine score of zero vectors is 0", "[attention]") {
  const AttentionShape shape{2, 5, 6, 4, 3};
  Problem p = make_problem(shape, 77);
  // Query 1 of head 0 and key 2 of head 1 are zero vectors.
  std::fill(p.q.begin() + 4, p.q.begin() + 8, 0.0f);
  std::fill(p.k.begin() + (6 + 2) * 4, p.k.begin() + (6 + 3) * 4, 0.0f);
  AttentionOptions options;
  options.score = ScoreFunction::kCosine;
  options.temperature = 0.25f;
  const reference::Result expected = reference::attention(p.inputs(), options);
  for (const KernelSet& set : kernel_sets()) {
    options.kernels = &set;
    INFO("kernels " << set.name);
    const AttentionResult r = attention(p.inputs(), options, true, true);
    for (std::int64_t j = 0; j < 6; ++j) CHECK(r.scores[1 * 6 + j] == 0.0f);
    for (std::int64_t i = 0; i < 5; ++i) CHECK(r.scores[(5 + i) * 6 + 2] == 0.0f);
    ATTNLENS_CHECK_CLOSE(r.scores, expected.scores, tolerances_for(shape).scores,
                         head_layout(2, 5, 6), "scores");
    ATTNLENS_CHECK_CLOSE(r.output, expected.output, tolerances_for(shape).output,
                         head_layout(2, 5, 3, "c"), "output");
    options.strategy = Strategy::kStreaming;
    ATTNLENS_CHECK_CLOSE(attention(p.inputs(), options).output, expected.output,
                         tolerances_for(shape).output, head_layout(2, 5, 3, "c"),
                         "streaming output");
    options.strategy = Strategy::kAuto;
  }
}

TEST_CASE("attention: caller-owned buffers", "[attention]") {
  const AttentionShape shape{3, 9, 11, 6, 4};
  const Problem p = make_problem(shape, 88);
  MaskStorage storage;
  AttentionOptions options;
  options.mask = make_mask(MaskKind::kKeyLengths, shape, 89, storage);  // head 2 fully masked
  const reference::Result expected = reference::attention(p.inputs(), options);
  const Tolerances tol = tolerances_for(shape);
  const float nan = std::numeric_limits<float>::quiet_NaN();

  // Buffers start as NaN: every element, including fully masked rows, must be written.
  std::vector<float> output(p.output_size(), nan);
  std::vector<float> weights(p.weights_size(), nan);
  std::vector<float> scores(p.weights_size(), nan);

  SECTION("output only") {
    const AttentionStats stats = attention(p.inputs(), options, AttentionOutputs{output, {}, {}});
    CHECK(stats.strategy == Strategy::kStreaming);
    ATTNLENS_CHECK_CLOSE(output, expected.output, tol.output, head_layout(3, 9, 4, "c"), "output");
  }
  SECTION("output and weights") {
    const AttentionStats stats =
        attention(p.inputs(), options, AttentionOutputs{output, weights, {}});
    CHECK(stats.strategy == Strategy::kMaterialized);
    ATTNLENS_CHECK_CLOSE(output, expected.output, tol.output, head_layout(3, 9, 4, "c"), "output");
    ATTNLENS_CHECK_CLOSE(weights, expected.weights, tol.weights, head_layout(3, 9, 11), "weights");
  }
  SECTION("output and scores") {
    const AttentionStats stats =
        attention(p.inputs(), options, AttentionOutputs{output, {}, scores});
    CHECK(stats.strategy == Strategy::kMaterialized);
    ATTNLENS_CHECK_CLOSE(output, expected.output, tol.output, head_layout(3, 9, 4, "c"), "output");
    ATTNLENS_CHECK_CLOSE(scores, expected.scores, tol.scores, head_layout(3, 9, 11), "scores");
  }
  SECTION("materialized without weights") {
    options.strategy = Strategy::kMaterialized;
    const AttentionStats stats = attention(p.inputs(), options, AttentionOutputs{output, {}, {}});
    CHECK(stats.strategy == Strategy::kMaterialized);
    ATTNLENS_CHECK_CLOSE(output, expected.output, tol.output, head_layout(3, 9, 4, "c"), "output");
  }
}

TEST_CASE("attention: default_scale", "[attention]") {
  CHECK(default_scale(ScoreFunction::kScaledDot, 64) == 0.125f);
  CHECK(default_scale(ScoreFunction::kScaledDot, 1) == 1.0f);
  CHECK(default_scale(ScoreFunction::kScaledDot, 3) == Approx(1.0 / std::sqrt(3.0)).epsilon(1e-6));
  CHECK(default_scale(ScoreFunction::kDot, 64) == 1.0f);
  CHECK(default_scale(ScoreFunction::kCosine, 64) == 1.0f);
  CHECK(default_scale(ScoreFunction::kAdditive, 64) == 1.0f);
}

TEST_CASE("attention: working_set_bytes grows as documented", "[attention]") {
  const AttentionShape small{8, 512, 512, 64, 64};
  const AttentionShape large{8, 2048, 2048, 64, 64};
  const std::int64_t materialized_small = working_set_bytes(small, Strategy::kMaterialized);
  const std::int64_t materialized_large = working_set_bytes(large, Strategy::kMaterialized);
  const std::int64_t streaming_small = working_set_bytes(small, Strategy::kStreaming);
  const std::int64_t streaming_large = working_set_bytes(large, Strategy::kStreaming);
  CHECK(materialized_small > 0);
  CHECK(streaming_small > 0);
  // Materialized holds at least one [Nq, Nk] float matrix; streaming grows linearly in N.
  CHECK(materialized_large >= 2048 * 2048 * 4);
  CHECK(materialized_large >= 12 * materialized_small);
  CHECK(streaming_large <= 5 * streaming_small);
  CHECK(streaming_large < materialized_large);
}
