// attention() against the double reference under every strategy and kernel set: what the
// forward's test files share. Tolerances (inputs uniform in [-1, 1]): outputs abs 2e-5 + rel
// 1e-4, weights abs 1e-5, raw scores abs 1e-6 * (D + 8) + rel 1e-5 (a D-term float dot product
// accumulates up to D roundings). Shapes with D = 128 get twice the output and weight tolerance.
#pragma once

#include <vector>

#include "reference/reference.h"
#include "test_util.h"

namespace attnlens_test {

using namespace attnlens;  // NOLINT: test code

struct Tolerances {
  Tolerance output;
  Tolerance weights;
  Tolerance scores;
};

inline Tolerances tolerances_for(const AttentionShape& shape) {
  const double d_factor = shape.head_dim > 64 ? 2.0 : 1.0;
  return Tolerances{Tolerance{2e-5 * d_factor, 1e-4 * d_factor}, Tolerance{1e-5 * d_factor, 0.0},
                    Tolerance{1e-6 * static_cast<double>(shape.head_dim + 8), 1e-5}};
}

// One way of calling attention(): the strategy, and whether weights and scores are requested.
struct Run {
  Strategy strategy;
  bool with_weights;
  Strategy expected_strategy;  // what stats.strategy must report
};

inline const std::vector<Run>& all_runs() {
  static const std::vector<Run> runs = {
      {Strategy::kMaterialized, true, Strategy::kMaterialized},
      {Strategy::kStreaming, false, Strategy::kStreaming},
      {Strategy::kAuto, true, Strategy::kMaterialized},
      {Strategy::kAuto, false, Strategy::kStreaming},
  };
  return runs;
}

// Runs `options` with every kernel set and every Run against one reference result.
inline void check_all_runs(const Problem& p, AttentionOptions options, const Tolerances& tol) {
  if (options.score == ScoreFunction::kAdditive) options.additive = p.additive();
  const reference::Result expected = reference::attention(p.inputs(), options);
  const AttentionShape& s = p.shape;
  for (const KernelSet& set : kernel_sets()) {
    for (const Run& run : all_runs()) {
      options.kernels = &set;
      options.strategy = run.strategy;
      INFO("kernels " << set.name << ", strategy " << strategy_name(run.strategy)
                      << (run.with_weights ? " with weights" : " without weights"));
      const AttentionResult r = attention(p.inputs(), options, run.with_weights, run.with_weights);
      CHECK(r.stats.strategy == run.expected_strategy);
      ATTNLENS_CHECK_CLOSE(r.output, expected.output, tol.output,
                           head_layout(s.heads, s.query_len, s.value_dim, "c"), "output");
      if (run.with_weights) {
        const Layout layout = head_layout(s.heads, s.query_len, s.key_len);
        ATTNLENS_CHECK_CLOSE(r.weights, expected.weights, tol.weights, layout, "weights");
        ATTNLENS_CHECK_CLOSE(r.scores, expected.scores, tol.scores, layout, "scores");
      } else {
        CHECK(r.weights.empty());
        CHECK(r.scores.empty());
      }
    }
  }
}

inline const std::vector<attnlens::ScoreFunction>& all_scores() {
  static const std::vector<ScoreFunction> scores = {ScoreFunction::kScaledDot, ScoreFunction::kDot,
                                                    ScoreFunction::kCosine,
                                                    ScoreFunction::kAdditive};
  return scores;
}

}  // namespace attnlens_test
