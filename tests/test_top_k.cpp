// Dynamic sparse attention (AttentionOptions::top_k): each query keeps its k largest logits among
// the keys it may see. Against the double reference over awkward shapes, masks, scores and the
// logit terms; ties to the lower key whatever the chunking; the two passes' count; errors.
#include <vector>

#include "attention_checks.h"
#include "error_checks.h"

using namespace attnlens;
using namespace attnlens_test;

TEST_CASE("top_k: every mask and score against the reference", "[top_k]") {
  const std::vector<AttentionShape> shapes = {
      {1, 1, 1, 1, 1}, {2, 5, 9, 4, 3}, {3, 17, 33, 8, 5, 1}, {2, 40, 130, 16, 8}};
  const std::vector<MaskKind> masks = {MaskKind::kNone, MaskKind::kCausal, MaskKind::kDilatedWindow,
                                       MaskKind::kKeyLengths, MaskKind::kCombined};
  std::uint32_t seed = 20000;
  for (const AttentionShape& shape : shapes) {
    const Problem p = make_problem(shape, seed++);
    const std::vector<float> slopes = alibi_slopes(shape.heads);
    for (const std::int64_t k : {std::int64_t{1}, std::int64_t{3}, shape.key_len}) {
      if (k > shape.key_len) continue;
      for (ScoreFunction score : all_scores()) {
        for (MaskKind kind : masks) {
          MaskStorage storage;
          AttentionOptions options;
          options.score = score;
          options.top_k = k;
          options.mask = make_mask(kind, shape, seed++, storage);
          if (kind == MaskKind::kCombined) {
            options.softcap = 3.0f;
            options.alibi_slopes = FloatView(slopes);
          }
          // Small key blocks: the selection must not depend on how the keys were chunked.
          options.key_block = 8;
          INFO(describe(shape) << ", top_k " << k << ", score " << score_name(score) << ", mask "
                               << mask_name(kind));
          check_all_runs(p, options, tolerances_for(shape));
        }
      }
    }
  }
}

TEST_CASE("top_k: equal logits go to the lower key, in both strategies", "[top_k]") {
  // q = 0: every score is 0, so the k kept keys are the first k visible ones.
  const AttentionShape shape{1, 12, 50, 4, 2};
  Problem p = make_problem(shape, 20100);
  std::fill(p.q.begin(), p.q.end(), 0.0f);
  for (Strategy strategy : {Strategy::kMaterialized, Strategy::kStreaming}) {
    AttentionOptions options;
    options.top_k = 5;
    options.mask.causal = true;
    options.mask.query_offset = 20;
    options.key_block = 4;
    options.strategy = strategy;
    const AttentionResult r = attention(p.inputs(), options);
    for (std::int64_t i = 0; i < shape.query_len; ++i) {
      for (std::int64_t c = 0; c < 2; ++c) {
        double mean = 0.0;
        for (std::int64_t j = 0; j < 5; ++j) mean += p.v[static_cast<std::size_t>(j * 2 + c)] / 5.0;
        INFO(strategy_name(strategy) << ", query " << i << ", c " << c);
        CHECK(r.output[static_cast<std::size_t>(i * 2 + c)] == Approx(mean).margin(1e-6));
      }
    }
    // Streaming scores each visible pair twice (select, then attend); materialized all once.
    const std::int64_t visible = 12 * 21 + 12 * 11 / 2;
    if (strategy == Strategy::kStreaming) {
      CHECK(r.stats.pairs_scored >= 2 * visible);
      CHECK(r.stats.pairs_scored < 2 * 12 * 50);
    } else {
      CHECK(r.stats.pairs_scored == 12 * 50);
    }
  }
}

TEST_CASE("top_k: threads give the same bits", "[top_k][threads]") {
  const AttentionShape shape{3, 45, 70, 8, 8};
  const Problem p = make_problem(shape, 20200);
  for (Strategy strategy : {Strategy::kMaterialized, Strategy::kStreaming}) {
    AttentionOptions options;
    options.top_k = 7;
    options.mask.causal = true;
    options.query_block = 16;
    options.strategy = strategy;
    const AttentionResult one = attention(p.inputs(), options);
    options.threads = 2;
    const AttentionResult two = attention(p.inputs(), options);
    CHECK(one.output == two.output);
  }
}

TEST_CASE("top_k: outside 0..Nk is a RangeError", "[top_k][errors]") {
  const Problem p = make_problem({2, 4, 6, 3, 3}, 20300);
  for (const std::int64_t k : {std::int64_t{-1}, std::int64_t{7}}) {
    AttentionOptions options;
    options.top_k = k;
    check_error<RangeError>([&] { attention(p.inputs(), options); }, "top_k");
  }
}
