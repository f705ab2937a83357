// Bad input raises the documented Error subclass, names the parameter at fault (error messages
// start with it), and leaves the library usable: after every rejected call a valid one is checked.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "error_checks.h"
#include "reference/reference.h"
#include "test_util.h"

using namespace attnlens;
using namespace attnlens_test;

namespace {

// The small valid problem every error case perturbs, and the check that the library still
// computes it correctly after an exception.
const AttentionShape kShape{2, 5, 7, 4, 3};

const Problem& valid_problem() {
  static const Problem p = make_problem(kShape, 2024);
  return p;
}

void check_still_usable() {
  const Problem& p = valid_problem();
  AttentionOptions options;
  options.mask.causal = true;
  const reference::Result expected = reference::attention(p.inputs(), options);
  const AttentionResult r = attention(p.inputs(), options, true, false);
  ATTNLENS_CHECK_CLOSE(r.output, expected.output, (Tolerance{2e-5, 1e-4}),
                       head_layout(2, 5, 3, "c"), "output of a valid call after an error");
}

// check_error (error_checks.h), then a valid call to show the library is still usable.
template <typename E, typename Call>
void expect_error(Call&& call, const std::string& parameter, const std::string& message_part = "") {
  check_error<E>(call, parameter, message_part);
  check_still_usable();
}

template <typename E, typename Call>
void expect_error_of_kind(Call&& call) {
  check_error_of_kind<E>(call);
  check_still_usable();
}

// attention() on the valid problem after `change` has edited a copy of its inputs and options.
template <typename Change>
auto attention_with(Change change, bool with_weights = false) {
  return [change, with_weights] {
    Problem p = valid_problem();
    AttentionOptions options;
    MaskStorage storage;
    change(p, options, storage);
    return attention(p.inputs(), options, with_weights, false);
  };
}

}  // namespace

TEST_CASE("errors: the error classes", "[errors]") {
  const ShapeError e("q", "expected 40 elements, got 41");
  CHECK(std::string(e.what()).rfind("q", 0) == 0);
  CHECK(std::string(e.what()).find("expected 40 elements, got 41") != std::string::npos);
  CHECK(e.parameter() == "q");
  CHECK(e.kind() == ErrorKind::kShapeMismatch);
  CHECK_THROWS_AS(throw RangeError("x", "y"), Error);
  CHECK_THROWS_AS(throw NonFiniteError("x", "y"), std::runtime_error);
  CHECK(std::string(error_kind_name(ErrorKind::kInvalidArgument)) == "invalid_argument");
  CHECK(std::string(error_kind_name(ErrorKind::kShapeMismatch)) == "shape_mismatch");
  const std::vector<std::string> names = {
      error_kind_name(ErrorKind::kInvalidArgument), error_kind_name(ErrorKind::kShapeMismatch),
      error_kind_name(ErrorKind::kOutOfRange), error_kind_name(ErrorKind::kNonFinite),
      error_kind_name(ErrorKind::kSizeOverflow)};
  for (std::size_t a = 0; a < names.size(); ++a) {
    CHECK_FALSE(names[a].empty());
    for (std::size_t b = a + 1; b < names.size(); ++b) CHECK(names[a] != names[b]);
  }
}

TEST_CASE("errors: tensor and buffer lengths", "[errors]") {
  using P = Problem;
  using O = AttentionOptions;
  using S = MaskStorage;
  expect_error<ShapeError>(attention_with([](P& p, O&, S&) { p.q.push_back(0.0f); }), "q");
  expect_error<ShapeError>(attention_with([](P& p, O&, S&) { p.k.pop_back(); }), "k");
  expect_error<ShapeError>(attention_with([](P& p, O&, S&) { p.v.clear(); }), "v");

  // Caller-owned buffers, one of them a float short.
  const Problem& p = valid_problem();
  std::vector<float> output(p.output_size()), weights(p.weights_size()), scores(p.weights_size());
  std::vector<float> short_buffer(p.weights_size() - 1);
  const auto call_with = [&p](AttentionOutputs outputs) {
    return [&p, outputs] { return attention(p.inputs(), AttentionOptions{}, outputs); };
  };
  expect_error<ShapeError>(call_with({short_buffer, {}, {}}), "output");
  expect_error<ShapeError>(call_with({output, short_buffer, {}}), "weights");
  expect_error<ShapeError>(call_with({output, weights, short_buffer}), "scores");
  CHECK(call_with({output, weights, scores})().strategy == Strategy::kMaterialized);
}

TEST_CASE("errors: sizes must be at least 1", "[errors]") {
  // Buffers are sized for the (empty) product, so only the size itself is wrong.
  const std::vector<std::pair<const char*, std::int64_t AttentionShape::*>> dims = {
      {"heads", &AttentionShape::heads},
      {"query_len", &AttentionShape::query_len},
      {"key_len", &AttentionShape::key_len},
      {"head_dim", &AttentionShape::head_dim},
      {"value_dim", &AttentionShape::value_dim}};
  for (const auto& dim : dims) {
    for (std::int64_t bad : {0, -1, -1000}) {
      INFO(dim.first << " = " << bad);
      AttentionShape s = kShape;
      s.*dim.second = bad;
      const auto count = [](std::int64_t a, std::int64_t b, std::int64_t c) {
        return static_cast<std::size_t>(std::max<std::int64_t>(a * b * c, 0));
      };
      const std::vector<float> q(count(s.heads, s.query_len, s.head_dim), 0.5f);
      const std::vector<float> k(count(s.heads, s.key_len, s.head_dim), 0.5f);
      const std::vector<float> v(count(s.heads, s.key_len, s.value_dim), 0.5f);
      std::vector<float> out(count(s.heads, s.query_len, s.value_dim));
      const AttentionInputs inputs{s, q, k, v};
      const AttentionOutputs outputs{out, {}, {}};
      expect_error<RangeError>([&] { attention(inputs, AttentionOptions{}, outputs); }, dim.first);
    }
  }
}

namespace {

MaskSpec window_mask(std::int64_t before, std::int64_t after, std::int64_t dilation) {
  MaskSpec m;
  m.window = LocalWindow{before, after, dilation};
  return m;
}

MaskSpec sparse_mask(SparsePattern pattern, std::int64_t stride, std::int64_t summary) {
  MaskSpec m;
  m.sparse = SparseSpec{pattern, stride, summary};
  return m;
}

MaskSpec global_mask(std::vector<std::int64_t> tokens) {
  MaskSpec m;
  m.global_tokens = std::move(tokens);
  return m;
}

MaskSpec key_lengths_mask(std::vector<std::int64_t> lengths) {
  MaskSpec m;
  m.key_lengths = std::move(lengths);
  return m;
}

// A bad mask and the parameter its error must name.
struct BadMask {
  const char* parameter;
  MaskSpec mask;
};

void attention_with_mask(const MaskSpec& mask) {
  AttentionOptions options;
  options.mask = mask;
  attention(valid_problem().inputs(), options);
}

template <typename E>
void expect_mask_errors(const std::vector<BadMask>& cases) {
  for (const BadMask& c : cases)
    expect_error<E>([&c] { attention_with_mask(c.mask); }, c.parameter);
}

}  // namespace

TEST_CASE("errors: mask parameters", "[errors][mask]") {
  // max(Nq, Nk) = 7 for the valid problem.
  expect_mask_errors<RangeError>({
      {"before", window_mask(-1, 0, 1)},
      {"after", window_mask(0, -1, 1)},
      {"before", window_mask(8, 0, 1)},
      {"after", window_mask(1, 8, 1)},
      {"dilation", window_mask(1, 1, 0)},
      {"dilation", window_mask(1, 1, -2)},
      {"stride", sparse_mask(SparsePattern::kStrided, 0, 1)},
      {"stride", sparse_mask(SparsePattern::kFixed, 0, 1)},
      {"summary", sparse_mask(SparsePattern::kFixed, 3, 0)},
      {"summary", sparse_mask(SparsePattern::kFixed, 3, 4)},
      {"global_tokens", global_mask({0, 7})},
      {"global_tokens", global_mask({-1})},
      {"key_lengths", key_lengths_mask({3, 8})},
      {"key_lengths", key_lengths_mask({-1, 3})},
  });

  const std::vector<unsigned char> six_flags(6, 1), too_many_flags(5 * 7 + 1, 1);
  MaskSpec bad_key_valid, bad_custom;
  bad_key_valid.key_valid = six_flags;
  bad_custom.custom = too_many_flags;
  expect_mask_errors<ShapeError>({
      {"key_lengths", key_lengths_mask({3})},
      {"key_lengths", key_lengths_mask({3, 3, 3})},
      {"key_valid", bad_key_valid},
      {"custom", bad_custom},
  });

  // The boundaries themselves are valid.
  AttentionOptions options;
  options.mask.window = LocalWindow{7, 7, 1};
  options.mask.global_tokens = {6};
  options.mask.key_lengths = {0, 7};
  CHECK_NOTHROW(attention(valid_problem().inputs(), options));
  // mask_matrix validates like attention(), and its head index too.
  CHECK_THROWS_AS(mask_matrix(window_mask(8, 0, 1), kShape, 0), RangeError);
  CHECK_THROWS_AS(mask_matrix(MaskSpec{}, kShape, 2), RangeError);
}

TEST_CASE("errors: temperature and scale", "[errors]") {
  for (float bad : {0.0f, -0.0f, -1.0f, kNaN, kInf, -kInf}) {
    INFO("temperature " << bad);
    expect_error<RangeError>(
        attention_with([bad](Problem&, AttentionOptions& o, MaskStorage&) { o.temperature = bad; }),
        "temperature");
  }
  for (float bad : {kNaN, kInf, -kInf}) {
    INFO("scale " << bad);
    expect_error<RangeError>(
        attention_with([bad](Problem&, AttentionOptions& o, MaskStorage&) { o.scale = bad; }),
        "scale");
  }
}

TEST_CASE("errors: non-finite values in q, k and v name the first bad index", "[errors]") {
  struct Tensor {
    const char* name;
    std::vector<float> Problem::*member;
  };
  for (const Tensor& t :
       {Tensor{"q", &Problem::q}, Tensor{"k", &Problem::k}, Tensor{"v", &Problem::v}}) {
    for (float bad : {kNaN, kInf, -kInf}) {
      INFO(t.name << " holds " << bad);
      // Index 5 is the first bad one; a later one must not be reported instead.
      const auto poison = [t, bad](Problem& p, AttentionOptions&, MaskStorage&) {
        (p.*t.member)[5] = bad;
        (p.*t.member)[9] = kNaN;
      };
      expect_error<NonFiniteError>(attention_with(poison), t.name, std::string(t.name) + "[5]");
      expect_error<NonFiniteError>(attention_with(poison, true), t.name,
                                   std::string(t.name) + "[5]");
    }
  }
}

TEST_CASE("errors: additive score weights", "[errors]") {
  using P = Problem;
  using O = AttentionOptions;
  using S = MaskStorage;
  expect_error<InvalidArgumentError>(
      attention_with([](P&, O& o, S&) { o.score = ScoreFunction::kAdditive; }), "additive");
  // From here on the views point into a copy that each case edits.
  const auto with_additive = [](auto edit) {
    return attention_with([edit](P& p, O& o, S&) {
      o.score = ScoreFunction::kAdditive;
      edit(p);
      o.additive = p.additive();
    });
  };
  expect_error<ShapeError>(with_additive([](P& p) { p.w_query.pop_back(); }), "w_query");
  expect_error<ShapeError>(with_additive([](P& p) { p.w_key.push_back(1.0f); }), "w_key");
  expect_error<ShapeError>(with_additive([](P& p) { p.w_v.pop_back(); }), "v");
  expect_error<NonFiniteError>(with_additive([](P& p) { p.w_key[3] = kNaN; }), "w_key", "w_key[3]");
  expect_error<NonFiniteError>(with_additive([](P& p) { p.w_query[0] = kInf; }), "w_query",
                               "w_query[0]");
  expect_error<NonFiniteError>(with_additive([](P& p) { p.w_v[1] = -kInf; }), "v", "v[1]");
  CHECK_NOTHROW(with_additive([](P&) {})());
}

TEST_CASE("errors: streaming cannot return weights or scores", "[errors]") {
  const Problem& p = valid_problem();
  AttentionOptions options;
  options.strategy = Strategy::kStreaming;
  expect_error<InvalidArgumentError>([&] { attention(p.inputs(), options, true, false); },
                                     "strategy");
  expect_error<InvalidArgumentError>([&] { attention(p.inputs(), options, false, true); },
                                     "strategy");
  std::vector<float> output(p.output_size()), weights(p.weights_size());
  const AttentionOutputs with_weights{output, weights, {}};
  expect_error<InvalidArgumentError>([&] { attention(p.inputs(), options, with_weights); },
                                     "strategy");
}

TEST_CASE("errors: size products that overflow are rejected before any memory is touched",
          "[errors]") {
  // Tiny buffers: a library that multiplied sizes without checking would read or write far out of
  // bounds (AddressSanitizer) or throw a ShapeError for the wrong reason.
  const std::vector<float> tiny(4, 0.5f);
  std::vector<float> out(4);
  const std::int64_t big = std::int64_t{1} << 40;
  const AttentionShape shapes[] = {
      {big, big, 4, 4, 4},                  // heads * query_len = 2^80
      {1, std::int64_t{1} << 62, 8, 1, 1},  // query_len * key_len = 2^65
      {1, 4, 4, std::int64_t{1} << 62, 4},  // head_dim * 4 bytes
      {std::numeric_limits<std::int64_t>::max(), 2, 2, 2, 2},
  };
  for (const AttentionShape& s : shapes) {
    INFO(describe(s));
    expect_error_of_kind<OverflowError>([&] {
      attention(AttentionInputs{s, tiny, tiny, tiny}, AttentionOptions{}, {out, {}, {}});
    });
  }
}

TEST_CASE("errors: finite inputs that overflow float32 raise NonFiniteError", "[errors]") {
  // q, k entries of 1e30 with D = 4: each product is 1e60, far beyond float32.
  const AttentionShape shape{1, 3, 3, 4, 2};
  Problem p = make_problem(shape, 5);
  for (float& x : p.q) x = 1e30f;
  for (float& x : p.k) x = 1e30f;
  for (const KernelSet& set : kernel_sets()) {
    for (Strategy strategy : {Strategy::kMaterialized, Strategy::kStreaming}) {
      for (ScoreFunction score : {ScoreFunction::kScaledDot, ScoreFunction::kDot}) {
        INFO(set.name << " " << strategy_name(strategy) << " " << score_name(score));
        AttentionOptions options;
        options.kernels = &set;
        options.strategy = strategy;
        options.score = score;
        expect_error_of_kind<NonFiniteError>([&] { attention(p.inputs(), options); });
      }
    }
  }
}

TEST_CASE("errors: huge finite inputs never come back as NaN or Inf", "[errors]") {
  // Either a NonFiniteError or a finite, correct result is acceptable; a silent NaN is not.
  const auto finite_or_error = [](const Problem& p, const AttentionOptions& options) {
    const reference::Result expected = reference::attention(p.inputs(), options);
    for (const KernelSet& set : kernel_sets()) {
      for (Strategy strategy : {Strategy::kMaterialized, Strategy::kStreaming}) {
        INFO(set.name << " " << strategy_name(strategy));
        AttentionOptions o = options;
        o.kernels = &set;
        o.strategy = strategy;
        try {
          const AttentionResult r = attention(p.inputs(), o);
          ATTNLENS_CHECK_CLOSE(r.output, expected.output, (Tolerance{0.0, 1e-4}), Layout{},
                               "output");
        } catch (const NonFiniteError& e) {
          SUCCEED(e.what());
        }
      }
    }
  };
  SECTION("cosine of vectors whose squared norms overflow") {
    Problem p = make_problem(AttentionShape{1, 3, 4, 4, 2}, 6);
    for (float& x : p.q) x *= 1e30f;
    for (float& x : p.k) x *= 1e30f;
    AttentionOptions options;
    options.score = ScoreFunction::kCosine;
    finite_or_error(p, options);
  }
  SECTION("values near the float32 maximum") {
    Problem p = make_problem(AttentionShape{1, 3, 70, 4, 2}, 7);
    for (float& x : p.q) x *= 1e-3f;  // nearly uniform weights over 70 keys
    for (float& x : p.v) x = x > 0 ? 3e38f : 2.9e38f;
    finite_or_error(p, AttentionOptions{});
  }
}
