// Grouped-query and multi-query attention (AttentionShape::kv_heads): against the double
// reference over awkward shapes, every score, mask, strategy and kernel set; against ONNX's
// definition (each K/V head repeated for its query heads, np.repeat along the head axis), bit
// for bit; threads; the backward (dK and dV summed over a K/V head's query heads); bad kv_heads.
#include <cstring>
#include <vector>

#include "attention_checks.h"
#include "error_checks.h"
#include "reference/backward.h"

using namespace attnlens;
using namespace attnlens_test;

namespace {

// K or V [Hkv, N, width] with each head repeated `group` times: the [H, N, width] tensor that
// ONNX's Attention forms before it attends, and what plain multi-head attention then reads.
std::vector<float> repeat_heads(const std::vector<float>& x, std::int64_t kv_heads,
                                std::int64_t group) {
  const std::size_t head = x.size() / static_cast<std::size_t>(kv_heads);
  std::vector<float> out;
  for (std::int64_t kv = 0; kv < kv_heads; ++kv) {
    for (std::int64_t g = 0; g < group; ++g) {
      out.insert(out.end(), x.begin() + kv * head, x.begin() + (kv + 1) * head);
    }
  }
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

}  // namespace

TEST_CASE("grouped-query: every score x mask x strategy x kernel set against the reference",
          "[gqa]") {
  const std::vector<AttentionShape> shapes = {
      {4, 17, 33, 5, 7, 2},     // two query heads per K/V head, Nq < Nk, Dv != D
      {6, 33, 17, 16, 3, 3},    // Nq > Nk
      {8, 9, 9, 4, 4, 1},       // multi-query: one K/V head for all
      {3, 1, 1, 1, 1, 1},       // one of everything
      {4, 130, 65, 64, 16, 2},  // past the tiles
      {5, 13, 13, 4, 4, 5},     // kv_heads == heads: plain multi-head attention
  };
  const std::vector<MaskKind> masks = {MaskKind::kNone, MaskKind::kCausal, MaskKind::kKeyLengths,
                                       MaskKind::kGlobalCausal, MaskKind::kCombined};
  std::uint32_t seed = 18000;
  for (const AttentionShape& shape : shapes) {
    for (ScoreFunction score : all_scores()) {
      for (MaskKind kind : masks) {
        const Problem p = make_problem(shape, seed++);
        MaskStorage storage;
        AttentionOptions options;
        options.score = score;
        options.mask = make_mask(kind, shape, seed++, storage);
        INFO(describe(shape) << ", score " << score_name(score) << ", mask " << mask_name(kind));
        check_all_runs(p, options, tolerances_for(shape));
      }
    }
  }
}

TEST_CASE("grouped-query: ONNX's repeated K/V heads, bit for bit", "[gqa][onnx]") {
  // ONNX's test case shape (q_num_heads 9, kv_num_heads 3, 4 queries, 6 keys, D 8) and one past
  // the panel sizes.
  for (const AttentionShape& shape :
       {AttentionShape{9, 4, 6, 8, 8, 3}, AttentionShape{8, 37, 70, 16, 12, 2}}) {
    const Problem gqa = make_problem(shape, 18100);
    Problem mha = gqa;
    const std::int64_t group = shape.heads / shape.kv_heads;
    mha.shape.kv_heads = 0;
    mha.k = repeat_heads(gqa.k, shape.kv_heads, group);
    mha.v = repeat_heads(gqa.v, shape.kv_heads, group);
    for (ScoreFunction score : {ScoreFunction::kScaledDot, ScoreFunction::kCosine}) {
      for (const bool causal : {false, true}) {
        for (const Run& run : all_runs()) {
          AttentionOptions options;
          options.score = score;
          options.mask.causal = causal;
          options.strategy = run.strategy;
          INFO(describe(shape) << ", score " << score_name(score) << (causal ? ", causal" : "")
                               << ", strategy " << strategy_name(run.strategy));
          const AttentionResult a =
              attention(gqa.inputs(), options, run.with_weights, run.with_weights);
          const AttentionResult b =
              attention(mha.inputs(), options, run.with_weights, run.with_weights);
          CHECK(same_bits(a.output, b.output));
          CHECK(same_bits(a.weights, b.weights));
          CHECK(same_bits(a.scores, b.scores));
          CHECK(a.stats.tiles_visited == b.stats.tiles_visited);
        }
      }
    }
  }
}

TEST_CASE("grouped-query: threads give the same bits as one thread", "[gqa][threads]") {
  const AttentionShape shape{6, 45, 70, 8, 12, 2};
  const Problem p = make_problem(shape, 18200);
  for (Strategy strategy : {Strategy::kMaterialized, Strategy::kStreaming}) {
    for (ScoreFunction score : {ScoreFunction::kScaledDot, ScoreFunction::kAdditive}) {
      AttentionOptions options;
      options.score = score;
      if (score == ScoreFunction::kAdditive) options.additive = p.additive();
      options.mask.causal = true;
      options.strategy = strategy;
      options.query_block = 16;
      const bool weights = strategy == Strategy::kMaterialized;
      const AttentionResult one = attention(p.inputs(), options, weights);
      for (std::int64_t threads : {2, 4}) {
        INFO(strategy_name(strategy) << ", " << score_name(score) << ", threads " << threads);
        options.threads = threads;
        const AttentionResult many = attention(p.inputs(), options, weights);
        CHECK(same_bits(one.output, many.output));
        CHECK(same_bits(one.weights, many.weights));
      }
      options.threads = 1;
    }
  }
}

TEST_CASE("grouped-query: the backward sums dK and dV over each K/V head's query heads",
          "[gqa][backward]") {
  const std::vector<AttentionShape> shapes = {
      {4, 17, 33, 5, 7, 2}, {6, 40, 300, 8, 4, 1}, {3, 9, 9, 3, 3, 3}};
  std::uint32_t seed = 18300;
  for (const AttentionShape& shape : shapes) {
    for (ScoreFunction score : {ScoreFunction::kScaledDot, ScoreFunction::kCosine}) {
      for (MaskKind kind : {MaskKind::kNone, MaskKind::kCausal, MaskKind::kCombined}) {
        const Problem p = make_problem(shape, seed++);
        const std::vector<float> d_output = random_floats(p.output_size(), seed++);
        MaskStorage storage;
        AttentionOptions options;
        options.score = score;
        options.mask = make_mask(kind, shape, seed++, storage);
        INFO(describe(shape) << ", score " << score_name(score) << ", mask " << mask_name(kind));
        const reference::BackwardResult expected =
            reference::attention_backward(p.inputs(), d_output, options);
        const Tolerance tol{4e-5, 2e-4};
        for (const KernelSet& set : kernel_sets()) {
          INFO("kernels " << set.name);
          options.kernels = &set;
          const AttentionGradientsResult r = attention_backward(p.inputs(), d_output, options);
          const std::int64_t kv = kv_head_count(shape);
          ATTNLENS_CHECK_CLOSE(r.dq, expected.dq, tol,
                               head_layout(shape.heads, shape.query_len, shape.head_dim, "d"),
                               "dq");
          ATTNLENS_CHECK_CLOSE(r.dk, expected.dk, tol,
                               head_layout(kv, shape.key_len, shape.head_dim, "d"), "dk");
          ATTNLENS_CHECK_CLOSE(r.dv, expected.dv, tol,
                               head_layout(kv, shape.key_len, shape.value_dim, "c"), "dv");
          options.threads = 3;
          const AttentionGradientsResult split = attention_backward(p.inputs(), d_output, options);
          CHECK(same_bits(r.dq, split.dq));
          CHECK(same_bits(r.dk, split.dk));
          CHECK(same_bits(r.dv, split.dv));
          options.threads = 1;
        }
      }
    }
  }
}

TEST_CASE("grouped-query: kv_heads must divide heads, and k and v hold kv_heads heads",
          "[gqa][errors]") {
  const AttentionShape shape{6, 4, 5, 3, 2, 2};
  const Problem p = make_problem(shape, 18400);
  for (std::int64_t bad : {-1, 4, 7, 12}) {
    AttentionShape s = shape;
    s.kv_heads = bad;
    INFO("kv_heads " << bad);
    check_error<RangeError>(
        [&] {
          attention(AttentionInputs{s, p.q, p.k, p.v}, {});
        },
        "kv_heads", "divisor of heads");
  }
  const Problem wide = make_problem(AttentionShape{6, 4, 5, 3, 2}, 18401);  // 6 K/V heads
  check_error<ShapeError>(
      [&] {
        attention(AttentionInputs{shape, p.q, wide.k, p.v}, {});
      },
      "k", "Hkv*Nk*D");
  check_error<ShapeError>(
      [&] {
        attention(AttentionInputs{shape, p.q, p.k, wide.v}, {});
      },
      "v", "Hkv*Nk*Dv");
  std::vector<float> dq(p.q.size()), dk(wide.k.size()), dv(p.v.size());
  std::vector<float> output(p.output_size()), lse(6 * 4);
  check_error<ShapeError>(
      [&] {
        attention_backward(AttentionBackwardInputs{p.inputs(), output, lse, output}, {},
                           AttentionGradients{dq, dk, dv});
      },
      "dk", "Hkv*Nk*D");
}
