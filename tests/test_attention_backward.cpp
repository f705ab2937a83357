// attention_backward() against the double reference (tests/reference/backward.h) and against
// central differences of the forward in double: every differentiable score x mask x kernel set,
// awkward shapes and tile sizes, temperature and scale, the forward's row log-sum-exp, rows and
// keys that see nothing, zero vectors under the cosine score, the tile statistics, and thread
// counts 1, 2 and 3 giving the same bits.
//
// Tolerances (inputs and dL/dO uniform in [-1, 1]): gradients abs 4e-5 + rel 2e-4 (a gradient is
// a sum over Nq or Nk of products of float dot products); the log-sum-exp abs 2e-6 + rel 2e-6.
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "reference/backward.h"
#include "test_util.h"

using namespace attnlens;
using namespace attnlens_test;

namespace {

const Tolerance kGradient{4e-5, 2e-4};

struct Gradients {
  const std::vector<float>& dq;
  const std::vector<float>& dk;
  const std::vector<float>& dv;
};

void check_gradients(const Gradients& actual, const reference::BackwardResult& expected,
                     const AttentionShape& s, Tolerance tol = kGradient) {
  ATTNLENS_CHECK_CLOSE(actual.dq, expected.dq, tol,
                       head_layout(s.heads, s.query_len, s.head_dim, "d"), "dq");
  ATTNLENS_CHECK_CLOSE(actual.dk, expected.dk, tol,
                       head_layout(s.heads, s.key_len, s.head_dim, "d"), "dk");
  ATTNLENS_CHECK_CLOSE(actual.dv, expected.dv, tol,
                       head_layout(s.heads, s.key_len, s.value_dim, "c"), "dv");
}

std::vector<float> d_output_for(const Problem& p, std::uint32_t seed) {
  return random_floats(p.output_size(), seed);
}

const std::vector<ScoreFunction>& differentiable_scores() {
  static const std::vector<ScoreFunction> scores = {ScoreFunction::kScaledDot, ScoreFunction::kDot,
                                                    ScoreFunction::kCosine};
  return scores;
}

// Both entry points: the one that runs the forward itself, and the one a training step calls
// with the forward's saved output and row log-sum-exp (here from the materialized strategy, so
// that the saved values of either strategy are shown to serve).
void check_both_entry_points(const Problem& p, const std::vector<float>& d_output,
                             const AttentionOptions& options,
                             const reference::BackwardResult& expected) {
  const AttentionShape& s = p.shape;
  const AttentionGradientsResult r = attention_backward(p.inputs(), d_output, options);
  check_gradients({r.dq, r.dk, r.dv}, expected, s);
  CHECK(r.stats.strategy == Strategy::kStreaming);

  AttentionOptions forward = options;
  forward.strategy = Strategy::kMaterialized;
  std::vector<float> output(p.output_size()), lse(static_cast<std::size_t>(s.heads * s.query_len));
  attention(p.inputs(), forward, AttentionOutputs{output, {}, {}, lse});
  std::vector<float> dq(p.q.size()), dk(p.k.size()), dv(p.v.size());
  attention_backward(AttentionBackwardInputs{p.inputs(), output, lse, d_output}, options,
                     AttentionGradients{dq, dk, dv});
  check_gradients({dq, dk, dv}, expected, s);
}

}  // namespace

TEST_CASE("attention_backward: every score x mask x kernel set against the reference",
          "[backward]") {
  std::uint32_t seed = 900;
  for (const TiledCase& c : tiled_cases()) {
    for (ScoreFunction score : differentiable_scores()) {
      for (MaskKind kind : all_mask_kinds()) {
        const Problem p = make_problem(c.shape, seed++);
        const std::vector<float> d_output = d_output_for(p, seed++);
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
        const reference::BackwardResult expected =
            reference::attention_backward(p.inputs(), d_output, options);
        for (const KernelSet& set : kernel_sets()) {
          INFO("kernels " << set.name);
          options.kernels = &set;
          check_both_entry_points(p, d_output, options, expected);
        }
      }
    }
  }
}

TEST_CASE("attention_backward: awkward shapes, temperatures and scales", "[backward]") {
  std::uint32_t seed = 1900;
  const std::vector<AttentionShape> shapes = {
      {1, 1, 1, 1, 1},   {1, 3, 7, 3, 1},   {2, 7, 3, 1, 4},     {3, 33, 7, 9, 2},
      {1, 70, 33, 7, 3}, {2, 3, 70, 33, 9}, {1, 70, 70, 64, 64}, {2, 129, 300, 8, 5},
  };
  const std::vector<MaskKind> masks = {MaskKind::kNone, MaskKind::kCausal, MaskKind::kCausalWindow,
                                       MaskKind::kGlobalCausal, MaskKind::kKeyLengths};
  for (const AttentionShape& shape : shapes) {
    for (MaskKind kind : masks) {
      for (ScoreFunction score : differentiable_scores()) {
        const Problem p = make_problem(shape, seed++);
        const std::vector<float> d_output = d_output_for(p, seed++);
        MaskStorage storage;
        AttentionOptions options;
        options.score = score;
        options.mask = make_mask(kind, shape, seed++, storage);
        // A sharp and a flat softmax, an explicit scale on some.
        options.temperature = seed % 2 ? 0.5f : 2.0f;
        if (seed % 3 == 0) options.scale = 1.7f;
        INFO(describe(shape) << ", score " << score_name(score) << ", mask " << mask_name(kind)
                             << ", temperature " << options.temperature);
        const reference::BackwardResult expected =
            reference::attention_backward(p.inputs(), d_output, options);
        const AttentionGradientsResult r = attention_backward(p.inputs(), d_output, options);
        check_gradients({r.dq, r.dk, r.dv}, expected, shape);
      }
    }
  }
}

TEST_CASE("attention_backward: central differences of the forward in double", "[backward]") {
  // dL/dx for L = sum(d_output * O) by (L(x + h) - L(x - h)) / 2h on every input element: checks
  // the reference's calculus (to 1e-7) and the engine's (to its float tolerance) independently.
  struct Case {
    AttentionShape shape;
    MaskKind mask;
    ScoreFunction score;
  };
  std::vector<Case> cases;
  for (MaskKind kind : all_mask_kinds()) {
    cases.push_back({AttentionShape{2, 7, 9, 3, 4}, kind, ScoreFunction::kScaledDot});
  }
  for (ScoreFunction score : differentiable_scores()) {
    cases.push_back({AttentionShape{1, 1, 1, 1, 1}, MaskKind::kNone, score});
    cases.push_back({AttentionShape{3, 3, 7, 2, 3}, MaskKind::kCausal, score});
    cases.push_back({AttentionShape{1, 33, 7, 3, 2}, MaskKind::kWindow, score});
  }
  std::uint32_t seed = 2900;
  for (const Case& c : cases) {
    const AttentionShape& s = c.shape;
    const Problem p = make_problem(s, seed++);
    const std::vector<float> d_output = d_output_for(p, seed++);
    MaskStorage storage;
    AttentionOptions options;
    options.score = c.score;
    options.temperature = 0.8f;
    options.mask = make_mask(c.mask, s, seed++, storage);
    INFO(describe(s) << ", score " << score_name(c.score) << ", mask " << mask_name(c.mask));

    std::vector<double> q(p.q.begin(), p.q.end()), k(p.k.begin(), p.k.end()),
        v(p.v.begin(), p.v.end());
    const auto loss = [&] {
      const std::vector<double> out = reference::attention_output(s, options, q, k, v);
      double l = 0.0;
      for (std::size_t i = 0; i < out.size(); ++i) l += d_output[i] * out[i];
      return l;
    };
    const auto differences = [&](std::vector<double>& x) {
      std::vector<double> grad(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double x0 = x[i], h = 1e-5 * std::max(1.0, std::fabs(x0));
        x[i] = x0 + h;
        const double up = loss();
        x[i] = x0 - h;
        const double down = loss();
        x[i] = x0;
        grad[i] = (up - down) / (2 * h);
      }
      return grad;
    };
    const reference::BackwardResult fd{{}, {}, differences(q), differences(k), differences(v)};
    const reference::BackwardResult expected =
        reference::attention_backward(p.inputs(), d_output, options);
    const Tolerance tight{1e-7, 1e-6};
    ATTNLENS_CHECK_CLOSE(expected.dq, fd.dq, tight, Layout{}, "reference dq vs differences");
    ATTNLENS_CHECK_CLOSE(expected.dk, fd.dk, tight, Layout{}, "reference dk vs differences");
    ATTNLENS_CHECK_CLOSE(expected.dv, fd.dv, tight, Layout{}, "reference dv vs differences");
    const AttentionGradientsResult r = attention_backward(p.inputs(), d_output, options);
    check_gradients({r.dq, r.dk, r.dv}, fd, s);
  }
}

TEST_CASE("attention_backward: the forward's row log-sum-exp, both strategies", "[backward]") {
  std::uint32_t seed = 3900;
  for (const AttentionShape& shape :
       {AttentionShape{3, 37, 21, 5, 3}, AttentionShape{1, 9, 70, 8, 8}}) {
    for (MaskKind kind : all_mask_kinds()) {
      const Problem p = make_problem(shape, seed++);
      MaskStorage storage;
      AttentionOptions options;
      options.temperature = 0.3f;  // logits up to ~15: the log-sum-exp is far from 0
      options.mask = make_mask(kind, shape, seed++, storage);
      const std::vector<float> unused(p.output_size());
      const reference::BackwardResult expected =
          reference::attention_backward(p.inputs(), unused, options);
      for (Strategy strategy : {Strategy::kStreaming, Strategy::kMaterialized}) {
        INFO(describe(shape) << ", mask " << mask_name(kind) << ", " << strategy_name(strategy));
        options.strategy = strategy;
        std::vector<float> output(p.output_size()), lse(expected.row_logsumexp.size(), 7.0f);
        attention(p.inputs(), options, AttentionOutputs{output, {}, {}, lse});
        for (std::size_t i = 0; i < lse.size(); ++i) {
          if (std::isinf(expected.row_logsumexp[i])) {
            CHECK(lse[i] == -std::numeric_limits<float>::infinity());
          }
        }
        std::vector<double> finite_expected = expected.row_logsumexp;
        std::vector<float> finite_actual = lse;
        for (std::size_t i = 0; i < lse.size(); ++i) {
          if (std::isinf(finite_expected[i])) finite_expected[i] = finite_actual[i] = 0.0f;
        }
        ATTNLENS_CHECK_CLOSE(finite_actual, finite_expected, (Tolerance{2e-6, 2e-6}),
                             head_layout(shape.heads, shape.query_len, 1), "row_logsumexp");
        ATTNLENS_CHECK_CLOSE(output, expected.output, (Tolerance{2e-5, 1e-4}),
                             head_layout(shape.heads, shape.query_len, shape.value_dim, "c"),
                             "output with row_logsumexp");
      }
    }
  }
}

TEST_CASE("attention_backward: what sees nothing gets exactly zero gradients", "[backward]") {
  const AttentionShape shape{3, 10, 12, 4, 5};
  const Problem p = make_problem(shape, 4900);
  const std::vector<float> d_output = d_output_for(p, 4901);
  AttentionOptions options;
  options.mask.key_lengths = {12, 0, 5};  // head 1 sees no key; head 2 only the first 5
  std::vector<unsigned char> custom(10 * 12, 1);
  for (std::int64_t j = 0; j < 12; ++j) custom[3 * 12 + j] = 0;  // query 3 sees no key
  options.mask.custom = ByteView(custom);
  const AttentionGradientsResult r = attention_backward(p.inputs(), d_output, options);
  for (std::int64_t h = 0; h < 3; ++h) {
    for (std::int64_t i = 0; i < 10; ++i) {
      for (std::int64_t x = 0; x < 4; ++x) {
        const float g = r.dq[(h * 10 + i) * 4 + x];
        if (h == 1 || i == 3) CHECK(g == 0.0f);
      }
    }
    for (std::int64_t j = 0; j < 12; ++j) {
      const bool hidden = h == 1 || (h == 2 && j >= 5);
      for (std::int64_t x = 0; x < 4; ++x) {
        if (hidden) CHECK(r.dk[(h * 12 + j) * 4 + x] == 0.0f);
      }
      for (std::int64_t x = 0; x < 5; ++x) {
        if (hidden) CHECK(r.dv[(h * 12 + j) * 5 + x] == 0.0f);
      }
    }
  }
  check_gradients({r.dq, r.dk, r.dv}, reference::attention_backward(p.inputs(), d_output, options),
                  shape);
}

TEST_CASE("attention_backward: cosine with zero vectors", "[backward]") {
  const AttentionShape shape{2, 6, 5, 4, 3};
  Problem p = make_problem(shape, 5900);
  for (std::int64_t x = 0; x < 4; ++x) {
    p.q[2 * 4 + x] = 0.0f;        // head 0, query 2
    p.k[(5 + 3) * 4 + x] = 0.0f;  // head 1, key 3
  }
  const std::vector<float> d_output = d_output_for(p, 5901);
  AttentionOptions options;
  options.score = ScoreFunction::kCosine;
  const AttentionGradientsResult r = attention_backward(p.inputs(), d_output, options);
  for (std::int64_t x = 0; x < 4; ++x) {
    CHECK(r.dq[2 * 4 + x] == 0.0f);
    CHECK(r.dk[(5 + 3) * 4 + x] == 0.0f);
  }
  check_gradients({r.dq, r.dk, r.dv}, reference::attention_backward(p.inputs(), d_output, options),
                  shape);
}

TEST_CASE("attention_backward: visits the forward's tiles", "[backward]") {
  const AttentionShape shape{2, 300, 260, 8, 8};
  const Problem p = make_problem(shape, 6900);
  const std::vector<float> d_output = d_output_for(p, 6901);
  for (MaskKind kind : all_mask_kinds()) {
    MaskStorage storage;
    AttentionOptions options;
    options.mask = make_mask(kind, shape, 6902, storage);
    options.strategy = Strategy::kStreaming;
    INFO("mask " << mask_name(kind));
    const AttentionResult forward = attention(p.inputs(), options);
    const AttentionGradientsResult backward = attention_backward(p.inputs(), d_output, options);
    CHECK(backward.stats.tiles_total == forward.stats.tiles_total);
    CHECK(backward.stats.tiles_visited == forward.stats.tiles_visited);
    CHECK(backward.stats.scratch_bytes > 0);
    if (kind == MaskKind::kCausal) CHECK(backward.stats.tiles_visited < backward.stats.tiles_total);
  }
}

TEST_CASE("attention_backward: threads give the same bits as one thread", "[backward][threads]") {
  const std::vector<AttentionShape> shapes = {
      {8, 70, 70, 16, 8},  // heads divide among 2 threads, not among 3
      {3, 45, 33, 8, 12},  // cross-attention, D != Dv
      {1, 90, 700, 8, 4},  // one head, three groups of keys sharing its dQ
  };
  const std::vector<MaskKind> masks = {MaskKind::kNone, MaskKind::kCausal, MaskKind::kGlobalCausal,
                                       MaskKind::kCombinedSparse};
  std::uint32_t seed = 7900;
  for (const AttentionShape& shape : shapes) {
    for (MaskKind kind : masks) {
      const Problem p = make_problem(shape, seed++);
      const std::vector<float> d_output = d_output_for(p, seed++);
      MaskStorage storage;
      AttentionOptions options;
      options.mask = make_mask(kind, shape, seed++, storage);
      INFO(describe(shape) << ", mask " << mask_name(kind));
      options.threads = 1;
      const AttentionGradientsResult one = attention_backward(p.inputs(), d_output, options);
      for (std::int64_t threads : {2, 3}) {
        INFO("threads " << threads);
        options.threads = threads;
        const AttentionGradientsResult many = attention_backward(p.inputs(), d_output, options);
        for (const auto& [a, b, name] :
             {std::tuple{&one.dq, &many.dq, "dq"}, std::tuple{&one.dk, &many.dk, "dk"},
              std::tuple{&one.dv, &many.dv, "dv"}}) {
          INFO(name);
          CHECK(std::memcmp(a->data(), b->data(), a->size() * sizeof(float)) == 0);
        }
        CHECK(many.stats.tiles_visited == one.stats.tiles_visited);
        if (threads_supported()) CHECK(many.stats.threads == threads);
        if (!threads_supported()) CHECK(many.stats.threads == 1);
      }
    }
  }
}
