// attention_backward() rejects bad input as attention() does (error_checks.h): the documented
// Error subclass naming the parameter at fault, before anything is written; and the library stays
// usable afterwards (a valid backward is checked against the reference after every rejection).
#include <limits>
#include <string>
#include <vector>

#include "error_checks.h"
#include "reference/backward.h"
#include "test_util.h"

using namespace attnlens;
using namespace attnlens_test;

namespace {

const AttentionShape kShape{2, 5, 7, 4, 3};

// A valid split-API call that each case edits a copy of: the forward's inputs and results, dL/dO
// and gradient buffers, all owned here.
struct Call {
  Problem p = make_problem(kShape, 3024);
  AttentionOptions options;
  std::vector<float> output, lse, d_output, dq, dk, dv;

  Call() {
    output.resize(p.output_size());
    lse.resize(static_cast<std::size_t>(kShape.heads * kShape.query_len));
    attention(p.inputs(), options, AttentionOutputs{output, {}, {}, lse});
    d_output = random_floats(p.output_size(), 3025);
    dq.resize(p.q.size());
    dk.resize(p.k.size());
    dv.resize(p.v.size());
  }
  AttentionBackwardInputs inputs() const { return {p.inputs(), output, lse, d_output}; }
  AttentionStats run() { return attention_backward(inputs(), options, {dq, dk, dv}); }
};

void check_still_usable() {
  Call c;
  c.options.mask.causal = true;
  const reference::BackwardResult expected =
      reference::attention_backward(c.p.inputs(), c.d_output, c.options);
  const AttentionGradientsResult r = attention_backward(c.p.inputs(), c.d_output, c.options);
  ATTNLENS_CHECK_CLOSE(r.dq, expected.dq, (Tolerance{4e-5, 2e-4}), Layout{}, "dq after an error");
  ATTNLENS_CHECK_CLOSE(r.dv, expected.dv, (Tolerance{4e-5, 2e-4}), Layout{}, "dv after an error");
}

// The backward after `change` edited a fresh call.
template <typename Change>
auto backward_with(Change change) {
  return [change] {
    Call c;
    change(c);
    return c.run();
  };
}

template <typename E, typename Run>
void expect_error(Run&& run, const std::string& parameter, const std::string& message_part = "") {
  check_error<E>(run, parameter, message_part);
  check_still_usable();
}

}  // namespace

TEST_CASE("backward errors: tensor and buffer lengths", "[backward][errors]") {
  expect_error<ShapeError>(backward_with([](Call& c) { c.p.q.push_back(0.0f); }), "q");
  expect_error<ShapeError>(backward_with([](Call& c) { c.p.k.pop_back(); }), "k");
  expect_error<ShapeError>(backward_with([](Call& c) { c.p.v.clear(); }), "v");
  expect_error<ShapeError>(backward_with([](Call& c) { c.output.pop_back(); }), "output");
  expect_error<ShapeError>(backward_with([](Call& c) { c.lse.push_back(0.0f); }), "row_logsumexp");
  expect_error<ShapeError>(backward_with([](Call& c) { c.d_output.pop_back(); }), "d_output");
  expect_error<ShapeError>(backward_with([](Call& c) { c.dq.pop_back(); }), "dq");
  expect_error<ShapeError>(backward_with([](Call& c) { c.dk.push_back(0.0f); }), "dk");
  expect_error<ShapeError>(backward_with([](Call& c) { c.dv.clear(); }), "dv");
  expect_error<RangeError>(backward_with([](Call& c) { c.p.shape.heads = 0; }), "heads");
  // The overload that runs the forward checks d_output before it.
  const Problem p = make_problem(kShape, 3026);
  const std::vector<float> short_d_output(p.output_size() - 1);
  expect_error<ShapeError>([&] { attention_backward(p.inputs(), short_d_output, {}); }, "d_output");
}

TEST_CASE("backward errors: NaN and Infinity in every input", "[backward][errors]") {
  for (const float bad : {kNaN, kInf, -kInf}) {
    INFO("value " << bad);
    expect_error<NonFiniteError>(backward_with([bad](Call& c) { c.p.q[3] = bad; }), "q", "q[3]");
    expect_error<NonFiniteError>(backward_with([bad](Call& c) { c.p.k[0] = bad; }), "k");
    expect_error<NonFiniteError>(backward_with([bad](Call& c) { c.p.v[5] = bad; }), "v");
    expect_error<NonFiniteError>(backward_with([bad](Call& c) { c.output[2] = bad; }), "output");
    expect_error<NonFiniteError>(backward_with([bad](Call& c) { c.d_output[7] = bad; }), "d_output",
                                 "d_output[7]");
  }
  expect_error<NonFiniteError>(backward_with([](Call& c) { c.lse[4] = kNaN; }), "row_logsumexp",
                               "row_logsumexp[4] is NaN");
  expect_error<NonFiniteError>(backward_with([](Call& c) { c.lse[0] = kInf; }), "row_logsumexp");
  // -inf is what the forward saves for a row that sees no key: accepted, and that row's
  // weights are zero, so its query gets a zero gradient.
  Call c;
  c.lse[1] = -kInf;
  c.run();
  for (std::int64_t x = 0; x < kShape.head_dim; ++x) CHECK(c.dq[1 * kShape.head_dim + x] == 0.0f);
}

TEST_CASE("backward errors: options, masks and scores", "[backward][errors]") {
  expect_error<RangeError>(backward_with([](Call& c) { c.options.temperature = 0.0f; }),
                           "temperature");
  expect_error<RangeError>(backward_with([](Call& c) { c.options.scale = kNaN; }), "scale");
  expect_error<RangeError>(backward_with([](Call& c) { c.options.threads = 1000; }), "threads");
  expect_error<RangeError>(backward_with([](Call& c) {
                             c.options.mask.window = LocalWindow{8, 0, 1};
                           }),
                           "window.before");
  expect_error<ShapeError>(backward_with([](Call& c) {
                             c.options.mask.key_lengths = {1, 2, 3};
                           }),
                           "key_lengths");
  expect_error<InvalidArgumentError>(backward_with([](Call& c) {
                                       c.options.score = ScoreFunction::kAdditive;
                                       c.options.additive = c.p.additive();
                                     }),
                                     "score", "additive");
  const Problem p = make_problem(kShape, 3027);
  AttentionOptions additive;
  additive.score = ScoreFunction::kAdditive;
  additive.additive = p.additive();
  const std::vector<float> d_output(p.output_size());
  expect_error<InvalidArgumentError>([&] { attention_backward(p.inputs(), d_output, additive); },
                                     "score");
}

TEST_CASE("backward errors: gradient buffers that overlap an input", "[backward][errors]") {
  // dq shaped like q, written over q itself: the backward would read what it already wrote.
  expect_error<InvalidArgumentError>(
      [] {
        Call c;
        return attention_backward(c.inputs(), c.options, {c.p.q, c.dk, c.dv});
      },
      "dq", "overlaps q");
  expect_error<InvalidArgumentError>(
      [] {
        Call c;
        // dk and dv share memory ([H, Nk, D] and [H, Nk, Dv] views of one buffer).
        std::vector<float> shared(c.dk.size() + c.dv.size());
        const MutableFloatView dk(shared.data(), c.dk.size());
        const MutableFloatView dv(shared.data() + 4, c.dv.size());
        return attention_backward(c.inputs(), c.options, {c.dq, dk, dv});
      },
      "dk", "overlaps dv");
}

TEST_CASE("backward errors: finite inputs that overflow float32", "[backward][errors]") {
  // Logits beyond float32 (the forward's rule), and gradients beyond it: dP = dO . v overflows.
  check_error_of_kind<NonFiniteError>(backward_with([](Call& c) {
    for (float& x : c.p.q) x = 1e30f;
    for (float& x : c.p.k) x = 1e30f;
  }));
  check_error<NonFiniteError>(backward_with([](Call& c) {
                                for (float& x : c.d_output) x = 3e38f;
                                for (float& x : c.p.v) x = x > 0 ? 3e38f : -3e38f;
                              }),
                              "dq", "overflowed");
  check_still_usable();
}
