// Hashed attention (AttentionOptions::lsh, Reformer-style): against the double reference, whose
// buckets come from LshSpec's definition written out independently; the same buckets for a seed
// and other buckets for another; shared query/key projections keep each query's own key; errors.
#include <vector>

#include "attention_checks.h"
#include "error_checks.h"

using namespace attnlens;
using namespace attnlens_test;

TEST_CASE("lsh: buckets x rounds x masks x scores against the reference", "[lsh]") {
  const std::vector<AttentionShape> shapes = {
      {1, 1, 1, 1, 1}, {2, 9, 9, 4, 3}, {4, 33, 17, 8, 5, 2}, {2, 70, 70, 16, 8}};
  const std::vector<MaskKind> masks = {MaskKind::kNone, MaskKind::kCausal, MaskKind::kKeyLengths,
                                       MaskKind::kGlobalCausal};
  std::uint32_t seed = 21000;
  for (const AttentionShape& shape : shapes) {
    const Problem p = make_problem(shape, seed++);
    for (const LshSpec spec : {LshSpec{2, 1, 7}, LshSpec{8, 2, 1}, LshSpec{64, 3, 99}}) {
      for (ScoreFunction score : {ScoreFunction::kScaledDot, ScoreFunction::kCosine}) {
        for (MaskKind kind : masks) {
          MaskStorage storage;
          AttentionOptions options;
          options.score = score;
          options.lsh = spec;
          options.mask = make_mask(kind, shape, seed++, storage);
          if (kind == MaskKind::kGlobalCausal)
            options.top_k = std::min<std::int64_t>(2, shape.key_len);
          INFO(describe(shape) << ", buckets " << spec.buckets << ", rounds " << spec.rounds
                               << ", score " << score_name(score) << ", mask " << mask_name(kind));
          check_all_runs(p, options, tolerances_for(shape));
        }
      }
    }
  }
}

TEST_CASE("lsh: deterministic for a seed; shared projections keep each query's own key", "[lsh]") {
  const AttentionShape shape{2, 40, 40, 8, 8};
  Problem p = make_problem(shape, 21100);
  p.k = p.q;  // Reformer's shared query/key projection
  AttentionOptions options;
  options.lsh = LshSpec{16, 1, 5};
  options.strategy = Strategy::kMaterialized;
  const AttentionResult a = attention(p.inputs(), options, true);
  const AttentionResult b = attention(p.inputs(), options, true);
  CHECK(a.weights == b.weights);
  std::int64_t hidden = 0;
  for (std::int64_t i = 0; i < 2 * 40; ++i) {
    CHECK(a.weights[static_cast<std::size_t>(i * 40 + i % 40)] > 0.0f);  // its own bucket
    for (std::int64_t j = 0; j < 40; ++j)
      hidden += a.weights[static_cast<std::size_t>(i * 40 + j)] == 0.0f;
  }
  CHECK(hidden > 2 * 40 * 40 / 2);  // 16 buckets hide most keys
  options.lsh.seed = 6;
  CHECK(attention(p.inputs(), options, true).weights != a.weights);
  options.threads = 2;
  options.lsh.seed = 5;
  CHECK(attention(p.inputs(), options, true).weights == a.weights);
}

TEST_CASE("lsh: bad buckets and rounds name themselves", "[lsh][errors]") {
  const Problem p = make_problem({2, 4, 6, 3, 3}, 21200);
  for (const std::int64_t buckets :
       {std::int64_t{-2}, std::int64_t{1}, std::int64_t{3}, std::int64_t{1026}}) {
    AttentionOptions options;
    options.lsh.buckets = buckets;
    check_error<RangeError>([&] { attention(p.inputs(), options); }, "lsh.buckets");
  }
  for (const std::int64_t rounds : {std::int64_t{0}, std::int64_t{17}}) {
    AttentionOptions options;
    options.lsh = LshSpec{4, rounds, 0};
    check_error<RangeError>([&] { attention(p.inputs(), options); }, "lsh.rounds");
  }
}
