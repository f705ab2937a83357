// multi_head_attention() against the double reference (projections, heads, output projection),
// resolve_shape() defaults, and the errors that name the offending weight.
//
// Tolerances, with inputs in [-1, 1] and weights scaled by 1/sqrt(fan-in) so every stage is O(1):
// projections abs 1e-5 + rel 1e-5, weights abs 1e-5, outputs abs 5e-5 + rel 1e-4 (three chained
// float matrix products).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "reference/reference.h"
#include "test_util.h"

using namespace attnlens;
using namespace attnlens_test;

namespace {

const Tolerance kProjectionTol{1e-5, 1e-5};
const Tolerance kWeightTol{1e-5, 0.0};
const Tolerance kOutputTol{5e-5, 1e-4};

// The shape with multihead.h's defaults filled in, written out here independently.
MultiHeadShape with_defaults(MultiHeadShape s) {
  if (s.value_dim == 0) s.value_dim = s.head_dim;
  if (s.key_len == 0) s.key_len = s.query_len;
  if (s.key_model_dim == 0) s.key_model_dim = s.model_dim;
  if (s.out_dim == 0) s.out_dim = s.model_dim;
  if (s.kv_heads == 0) s.kv_heads = s.heads;
  return s;
}

// Owns every tensor of one multi-head call; inputs() returns views into it.
struct MultiHeadProblem {
  MultiHeadShape shape;     // as passed (0 = default)
  MultiHeadShape resolved;  // defaults filled in
  std::vector<float> x_query, x_key_value;
  std::vector<float> w_query, w_key, w_value, w_out;
  std::vector<float> b_query, b_key, b_value, b_out;

  MultiHeadInputs inputs() const {
    return {shape, x_query, x_key_value,
            MultiHeadWeights{w_query, w_key, w_value, w_out, b_query, b_key, b_value, b_out}};
  }
};

MultiHeadProblem make_multihead(const MultiHeadShape& shape, bool cross, bool biases,
                                std::uint32_t seed) {
  Rng rng(seed);
  MultiHeadProblem p;
  p.shape = shape;
  p.resolved = with_defaults(shape);
  const MultiHeadShape& s = p.resolved;
  const auto n = [](std::int64_t a, std::int64_t b) { return static_cast<std::size_t>(a * b); };
  const auto glorot = [&](std::int64_t fan_in, std::int64_t fan_out) {
    const float w = 1.0f / std::sqrt(static_cast<float>(fan_in));
    return random_floats(n(fan_in, fan_out), rng, -w, w);
  };
  p.x_query = random_floats(n(s.query_len, s.model_dim), rng);
  if (cross) p.x_key_value = random_floats(n(s.key_len, s.key_model_dim), rng);
  p.w_query = glorot(s.model_dim, s.heads * s.head_dim);
  p.w_key = glorot(s.key_model_dim, s.kv_heads * s.head_dim);
  p.w_value = glorot(s.key_model_dim, s.kv_heads * s.value_dim);
  p.w_out = glorot(s.heads * s.value_dim, s.out_dim);
  if (biases) {
    p.b_query = random_floats(n(s.heads, s.head_dim), rng, -0.5f, 0.5f);
    p.b_key = random_floats(n(s.kv_heads, s.head_dim), rng, -0.5f, 0.5f);
    p.b_value = random_floats(n(s.kv_heads, s.value_dim), rng, -0.5f, 0.5f);
    p.b_out = random_floats(n(1, s.out_dim), rng, -0.5f, 0.5f);
  }
  return p;
}

std::string describe(const MultiHeadShape& s) {
  std::ostringstream out;
  out << "H=" << s.heads << " D=" << s.head_dim << " Dv=" << s.value_dim << " Nq=" << s.query_len
      << " Nk=" << s.key_len << " model=" << s.model_dim << " key_model=" << s.key_model_dim
      << " out=" << s.out_dim << " Hkv=" << s.kv_heads;
  return out.str();
}

// Buffers for every output of one call.
struct MultiHeadBuffers {
  std::vector<float> output, weights, scores, q, k, v;
  explicit MultiHeadBuffers(const MultiHeadShape& s)
      : output(static_cast<std::size_t>(s.query_len * s.out_dim)),
        weights(static_cast<std::size_t>(s.heads * s.query_len * s.key_len)),
        scores(weights.size()),
        q(static_cast<std::size_t>(s.heads * s.query_len * s.head_dim)),
        k(static_cast<std::size_t>(s.kv_heads * s.key_len * s.head_dim)),
        v(static_cast<std::size_t>(s.kv_heads * s.key_len * s.value_dim)) {}
  MultiHeadOutputs all() { return {output, weights, scores, q, k, v}; }
};

// Runs one problem with all outputs (materialized) and with the output only (streaming), with
// every kernel set, against the reference.
void check_multihead(const MultiHeadProblem& p, const AttentionOptions& options) {
  const reference::MultiHeadResult expected = reference::multi_head_attention(p.inputs(), options);
  const MultiHeadShape& s = p.resolved;
  for (const KernelSet& set : kernel_sets()) {
    INFO(describe(s) << (p.b_query.empty() ? ", no biases" : ", biases") << ", kernels "
                     << set.name);
    AttentionOptions o = options;
    o.kernels = &set;
    MultiHeadBuffers b(s);
    const AttentionStats stats = multi_head_attention(p.inputs(), o, b.all());
    CHECK(stats.strategy == Strategy::kMaterialized);
    ATTNLENS_CHECK_CLOSE(b.output, expected.output, kOutputTol,
                         matrix_layout(s.query_len, s.out_dim), "output");
    ATTNLENS_CHECK_CLOSE(b.weights, expected.weights, kWeightTol,
                         head_layout(s.heads, s.query_len, s.key_len), "weights");
    ATTNLENS_CHECK_CLOSE(b.q, expected.q, kProjectionTol,
                         head_layout(s.heads, s.query_len, s.head_dim, "d"), "q");
    ATTNLENS_CHECK_CLOSE(b.k, expected.k, kProjectionTol,
                         head_layout(s.kv_heads, s.key_len, s.head_dim, "d"), "k");
    ATTNLENS_CHECK_CLOSE(b.v, expected.v, kProjectionTol,
                         head_layout(s.kv_heads, s.key_len, s.value_dim, "d"), "v");

    // Scores: the raw score function of the library's own projections.
    const AttentionShape head_shape{s.heads,    s.query_len, s.key_len,
                                    s.head_dim, s.value_dim, s.kv_heads};
    const reference::Result from_projections =
        reference::attention(AttentionInputs{head_shape, b.q, b.k, b.v}, o);
    ATTNLENS_CHECK_CLOSE(b.scores, from_projections.scores, (Tolerance{1e-5, 1e-5}),
                         head_layout(s.heads, s.query_len, s.key_len), "scores");

    // Output only: auto picks streaming, and the numbers agree.
    std::vector<float> output_only(b.output.size());
    const AttentionStats streamed =
        multi_head_attention(p.inputs(), o, {output_only, {}, {}, {}, {}, {}});
    CHECK(streamed.strategy == Strategy::kStreaming);
    ATTNLENS_CHECK_CLOSE(output_only, expected.output, kOutputTol,
                         matrix_layout(s.query_len, s.out_dim), "streamed output");
  }
}

}  // namespace

TEST_CASE("multihead: self-attention", "[multihead]") {
  // {heads, D, Dv, Nq, Nk, model, key_model, out}
  const std::vector<MultiHeadShape> shapes = {
      {1, 8, 0, 7, 0, 8, 0, 0},     // H = 1, every default
      {4, 16, 8, 17, 0, 32, 0, 0},  // Dv != D
      {12, 4, 0, 9, 0, 48, 0, 0},   // H = 12
      {4, 3, 5, 33, 0, 20, 0, 6},   // out_dim != model_dim
      {2, 1, 1, 1, 0, 3, 0, 0},     // one token
  };
  std::uint32_t seed = 1;
  for (const MultiHeadShape& shape : shapes) {
    for (bool biases : {false, true}) {
      check_multihead(make_multihead(shape, false, biases, seed++), AttentionOptions{});
    }
  }
}

TEST_CASE("multihead: cross-attention", "[multihead]") {
  const std::vector<MultiHeadShape> shapes = {
      {4, 8, 0, 5, 11, 16, 24, 10},  // Nq < Nk, key_model_dim and out_dim differ
      {12, 8, 5, 33, 3, 20, 7, 3},   // Nq > Nk, Dv != D, H = 12
      {1, 6, 6, 9, 9, 12, 12, 12},   // same lengths, own key/value tokens
  };
  std::uint32_t seed = 100;
  for (const MultiHeadShape& shape : shapes) {
    for (bool biases : {false, true}) {
      check_multihead(make_multihead(shape, true, biases, seed++), AttentionOptions{});
    }
  }
}

TEST_CASE("multihead: grouped-query attention (kv_heads)", "[multihead][gqa]") {
  // {heads, D, Dv, Nq, Nk, model, key_model, out, kv_heads}
  const std::vector<MultiHeadShape> shapes = {
      {4, 8, 0, 9, 0, 16, 0, 0, 2},    // self-attention, two query heads per K/V head
      {6, 4, 5, 7, 13, 12, 10, 8, 1},  // cross-attention, multi-query
  };
  std::uint32_t seed = 180;
  for (const MultiHeadShape& shape : shapes) {
    for (bool biases : {false, true}) {
      AttentionOptions options;
      options.mask.causal = shape.key_len == 0;
      check_multihead(make_multihead(shape, shape.key_len != 0, biases, seed++), options);
    }
  }
}

TEST_CASE("multihead: masks, score functions and temperature", "[multihead]") {
  const MultiHeadShape shape{4, 8, 6, 19, 0, 16, 0, 0};
  std::uint32_t seed = 200;
  for (MaskKind kind : {MaskKind::kCausal, MaskKind::kCombined, MaskKind::kKeyLengths}) {
    for (ScoreFunction score : {ScoreFunction::kScaledDot, ScoreFunction::kCosine}) {
      const MultiHeadProblem p = make_multihead(shape, false, true, seed++);
      MaskStorage storage;
      AttentionOptions options;
      options.score = score;
      options.temperature = 0.8f;
      options.mask = make_mask(kind, AttentionShape{4, 19, 19, 8, 6}, seed++, storage);
      INFO("mask " << mask_name(kind) << ", score " << score_name(score));
      check_multihead(p, options);
    }
  }
  SECTION("additive") {
    const MultiHeadProblem p = make_multihead(shape, false, true, seed++);
    const Problem weights = make_problem(AttentionShape{4, 1, 1, 8, 6}, seed++, -1.0f, 1.0f, 5);
    AttentionOptions options;
    options.score = ScoreFunction::kAdditive;
    options.additive = weights.additive();
    check_multihead(p, options);
  }
}

TEST_CASE("multihead: resolve_shape fills the defaults", "[multihead]") {
  const MultiHeadShape resolved = resolve_shape(MultiHeadShape{3, 8, 0, 10, 0, 24, 0, 0});
  CHECK(resolved.heads == 3);
  CHECK(resolved.head_dim == 8);
  CHECK(resolved.value_dim == 8);
  CHECK(resolved.query_len == 10);
  CHECK(resolved.key_len == 10);
  CHECK(resolved.model_dim == 24);
  CHECK(resolved.key_model_dim == 24);
  CHECK(resolved.out_dim == 24);

  const MultiHeadShape explicit_shape{2, 4, 5, 6, 7, 8, 9, 10};
  const MultiHeadShape same = resolve_shape(explicit_shape);
  CHECK(same.value_dim == 5);
  CHECK(same.key_len == 7);
  CHECK(same.key_model_dim == 9);
  CHECK(same.out_dim == 10);

  CHECK_THROWS_AS(resolve_shape(MultiHeadShape{0, 8, 0, 10, 0, 24, 0, 0}), RangeError);
  CHECK_THROWS_AS(resolve_shape(MultiHeadShape{1, 0, 0, 10, 0, 24, 0, 0}), RangeError);
  CHECK_THROWS_AS(resolve_shape(MultiHeadShape{1, 8, 0, 0, 0, 24, 0, 0}), RangeError);
  CHECK_THROWS_AS(resolve_shape(MultiHeadShape{1, 8, 0, 10, 0, 0, 0, 0}), RangeError);
  CHECK_THROWS_AS(resolve_shape(MultiHeadShape{1, 8, -1, 10, 0, 24, 0, 0}), RangeError);
  CHECK_THROWS_AS(resolve_shape(MultiHeadShape{1, 8, 0, 10, -3, 24, 0, 0}), RangeError);
  CHECK_THROWS_AS(resolve_shape(MultiHeadShape{1, 8, 0, 10, 0, 24, -2, 0}), RangeError);
  CHECK_THROWS_AS(resolve_shape(MultiHeadShape{1, 8, 0, 10, 0, 24, 0, -5}), RangeError);
  const std::int64_t big = std::int64_t{1} << 40;
  CHECK_THROWS_AS(resolve_shape(MultiHeadShape{big, big, 0, 10, 0, 24, 0, 0}), OverflowError);
}

namespace {

// `call` throws E whose parameter names `parameter` (or a dotted path ending in it) and whose
// message starts with the parameter.
template <typename E, typename Call>
void expect_named(Call&& call, const std::string& parameter, const std::string& message_part = "") {
  INFO("expected an error naming \"" << parameter << "\"");
  REQUIRE_THROWS_AS(call(), E);
  try {
    call();
  } catch (const E& e) {
    const std::string what = e.what();
    const std::string& got = e.parameter();
    INFO("what(): \"" << what << "\"");
    CHECK((got == parameter || (got.size() > parameter.size() &&
                                got.compare(got.size() - parameter.size() - 1, std::string::npos,
                                            "." + parameter) == 0)));
    CHECK(what.rfind(got, 0) == 0);
    if (!message_part.empty()) CHECK(what.find(message_part) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("multihead: errors name the weight or buffer at fault", "[multihead][errors]") {
  const MultiHeadShape shape{2, 4, 3, 5, 6, 8, 7, 9};
  const MultiHeadProblem valid = make_multihead(shape, true, true, 300);
  const auto call_with = [&valid](auto edit) {
    return [edit, &valid] {
      MultiHeadProblem p = valid;
      MultiHeadBuffers b(p.resolved);
      MultiHeadOutputs outputs = b.all();
      edit(p, outputs, b);
      multi_head_attention(p.inputs(), AttentionOptions{}, outputs);
    };
  };
  using P = MultiHeadProblem;
  using O = MultiHeadOutputs;
  using B = MultiHeadBuffers;
  expect_named<ShapeError>(call_with([](P& p, O&, B&) { p.w_query.pop_back(); }), "w_query");
  expect_named<ShapeError>(call_with([](P& p, O&, B&) { p.w_key.push_back(0.0f); }), "w_key");
  expect_named<ShapeError>(call_with([](P& p, O&, B&) { p.w_value.pop_back(); }), "w_value");
  expect_named<ShapeError>(call_with([](P& p, O&, B&) { p.w_out.pop_back(); }), "w_out");
  expect_named<ShapeError>(call_with([](P& p, O&, B&) { p.b_query.pop_back(); }), "b_query");
  expect_named<ShapeError>(call_with([](P& p, O&, B&) { p.b_key.push_back(0.0f); }), "b_key");
  expect_named<ShapeError>(call_with([](P& p, O&, B&) { p.b_value.pop_back(); }), "b_value");
  expect_named<ShapeError>(call_with([](P& p, O&, B&) { p.b_out.pop_back(); }), "b_out");
  expect_named<ShapeError>(call_with([](P& p, O&, B&) { p.x_query.pop_back(); }), "x_query");
  expect_named<ShapeError>(call_with([](P& p, O&, B&) { p.x_key_value.push_back(0.0f); }),
                           "x_key_value");
  expect_named<ShapeError>(call_with([](P&, O& o, B& b) {
                             o.output = {b.output.data(), b.output.size() - 1};
                           }),
                           "output");
  expect_named<ShapeError>(call_with([](P&, O& o, B& b) {
                             o.weights = {b.weights.data(), 3};
                           }),
                           "weights");
  expect_named<ShapeError>(call_with([](P&, O& o, B& b) {
                             o.q = {b.q.data(), b.q.size() - 1};
                           }),
                           "q");
  expect_named<ShapeError>(call_with([](P&, O& o, B& b) { o.v = {b.v.data(), 1}; }), "v");
  expect_named<NonFiniteError>(call_with([](P& p, O&, B&) { p.x_query[7] = std::nanf(""); }),
                               "x_query", "x_query[7]");
  expect_named<NonFiniteError>(
      call_with([](P& p, O&, B&) { p.w_out[2] = std::numeric_limits<float>::infinity(); }), "w_out",
      "w_out[2]");
  expect_named<RangeError>(call_with([](P& p, O&, B&) { p.shape.heads = 0; }), "heads");
  // Cross-attention lengths without the key/value tokens.
  CHECK_THROWS_AS(call_with([](P& p, O&, B&) { p.x_key_value.clear(); })(), Error);

  // The module still works afterwards.
  MultiHeadBuffers b(valid.resolved);
  CHECK_NOTHROW(multi_head_attention(valid.inputs(), AttentionOptions{}, b.all()));
  const reference::MultiHeadResult expected =
      reference::multi_head_attention(valid.inputs(), AttentionOptions{});
  ATTNLENS_CHECK_CLOSE(b.output, expected.output, kOutputTol, matrix_layout(5, 9),
                       "output after errors");
}

TEST_CASE("multihead: threads give bit-identical results to one thread", "[multihead][threads]") {
  // 70 tokens: projections split into 16-row blocks with a partial last one; H = 3 does not
  // divide among 2 threads.
  const MultiHeadShape shape{3, 16, 8, 70, 0, 40, 0, 24};
  const MultiHeadProblem p = make_multihead(shape, false, true, 400);
  const MultiHeadShape& s = p.resolved;
  AttentionOptions options;
  options.mask.causal = true;
  MultiHeadBuffers one(s);
  const AttentionStats one_stats = multi_head_attention(p.inputs(), options, one.all());
  CHECK(one_stats.threads == 1);
  for (std::int64_t threads : {2, 3, 0}) {
    INFO("threads " << threads);
    options.threads = threads;
    MultiHeadBuffers many(s);
    const AttentionStats stats = multi_head_attention(p.inputs(), options, many.all());
    if (threads_supported() && threads == 2) CHECK(stats.threads == 2);
    if (!threads_supported()) CHECK(stats.threads == 1);
    const auto same = [](const std::vector<float>& a, const std::vector<float>& b) {
      return a.size() == b.size() &&
             std::equal(a.begin(), a.end(), b.begin(),
                        [](float x, float y) { return std::memcmp(&x, &y, sizeof x) == 0; });
    };
    CHECK(same(many.output, one.output));
    CHECK(same(many.weights, one.weights));
    CHECK(same(many.scores, one.scores));
    CHECK(same(many.q, one.q));
    CHECK(same(many.k, one.k));
    CHECK(same(many.v, one.v));
  }
  // Streaming (output only) too.
  options.threads = 1;
  std::vector<float> streamed_one(one.output.size()), streamed_two(one.output.size());
  multi_head_attention(p.inputs(), options, {streamed_one, {}, {}, {}, {}, {}});
  options.threads = 2;
  multi_head_attention(p.inputs(), options, {streamed_two, {}, {}, {}, {}, {}});
  CHECK(std::memcmp(streamed_one.data(), streamed_two.data(),
                    streamed_one.size() * sizeof(float)) == 0);

  // A bad thread count is rejected before any projection runs.
  options.threads = -2;
  MultiHeadBuffers bad(s);
  try {
    multi_head_attention(p.inputs(), options, bad.all());
    FAIL("no error");
  } catch (const RangeError& e) {
    CHECK(e.parameter() == "threads");
  }
}
