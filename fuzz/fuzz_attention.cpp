// libFuzzer target: draws a whole attention problem (shape, score function, mask, options, kernel
// set, strategy, threads, values) from the fuzzer's bytes and checks the engine against the
// double-precision reference. Built with clang, AddressSanitizer and UndefinedBehaviorSanitizer
// (-DATTNLENS_FUZZ=ON; see fuzz/README.md), so a crash, a leak or undefined behaviour is found
// too.
//
// About one draw in eight breaks one rule on purpose (a size, a window, a temperature, a NaN):
// the call must then throw an attnlens::Error, never crash or return. Every other draw is valid
// and must succeed, with
//   - weights within a tolerance of the reference, exactly 0 where the mask hides a key, each row
//     summing to 1 (or all zero when the mask hides every key);
//   - outputs within a tolerance of the reference, and finite, also for values up to FLT_MAX
//     whose weighted sums overflow float32 (the output, their mean, does not);
//   - for the scores with a backward (all but additive), attention_backward()'s gradients for a
//     drawn dL/dO within a tolerance of the reference backward (one draw in eight puts a NaN in
//     dL/dO, which must raise NonFiniteError naming d_output).
// A failed check prints what was drawn and aborts, which libFuzzer reports with the input.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "attnlens/attnlens.h"
#include "draw_terms.h"
#include "reference/backward.h"
#include "reference/reference.h"

namespace {

using namespace attnlens;

struct Problem {
  AttentionShape shape;
  AttentionOptions options;
  std::vector<float> q, k, v, w_query, w_key, w_v;
  std::vector<float> d_output;  // dL/dO for the backward
  bool broken_d_output = false;
  std::vector<unsigned char> key_valid, custom;
  fuzz_terms::TermStorage terms;
  bool return_weights = false;
  float value_range = 2.0f;  // |v| <= value_range
  std::string broken;        // the rule this draw breaks on purpose, or empty
  std::string description;
};

[[noreturn]] void fail(const Problem& p, const std::string& what) {
  std::fprintf(stderr, "fuzz_attention: %s\n  problem: %s\n", what.c_str(), p.description.c_str());
  std::abort();
}

// Values in [-range, range], quantised to 1/64 so that draws are readable when printed.
std::vector<float> draw_values(FuzzedDataProvider& in, std::size_t n, float range) {
  std::vector<float> values(n);
  for (float& x : values) {
    x = static_cast<float>(in.ConsumeIntegralInRange<int>(-64, 64)) * (range / 64.0f);
  }
  return values;
}

void draw_mask(FuzzedDataProvider& in, Problem& p) {
  const std::int64_t nq = p.shape.query_len, nk = p.shape.key_len;
  MaskSpec& mask = p.options.mask;
  // A KV cache's queries after the past keys (mask.h), one draw in four.
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    mask.query_offset = in.ConsumeIntegralInRange<std::int64_t>(0, nk);
  }
  const std::int64_t longest = std::max(nq + mask.query_offset, nk);
  mask.causal = in.ConsumeBool();
  if (in.ConsumeBool()) {
    LocalWindow window;
    window.before = in.ConsumeIntegralInRange<std::int64_t>(0, longest);
    window.after = in.ConsumeIntegralInRange<std::int64_t>(0, longest);
    window.dilation = in.ConsumeBool() ? 1 : in.ConsumeIntegralInRange<std::int64_t>(1, longest);
    mask.window = window;
  }
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 1:
      mask.sparse.pattern = SparsePattern::kStrided;
      mask.sparse.stride = in.ConsumeIntegralInRange<std::int64_t>(1, longest);
      break;
    case 2:
      mask.sparse.pattern = SparsePattern::kFixed;
      mask.sparse.stride = in.ConsumeIntegralInRange<std::int64_t>(1, longest);
      mask.sparse.summary = in.ConsumeIntegralInRange<std::int64_t>(1, mask.sparse.stride);
      break;
    default:
      break;
  }
  const int globals = in.ConsumeIntegralInRange<int>(0, 3);
  for (int g = 0; g < globals; ++g) {
    mask.global_tokens.push_back(in.ConsumeIntegralInRange<std::int64_t>(0, longest - 1));
  }
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    for (std::int64_t h = 0; h < p.shape.heads; ++h) {
      mask.key_lengths.push_back(in.ConsumeIntegralInRange<std::int64_t>(0, nk));
    }
  }
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    p.key_valid.resize(static_cast<std::size_t>(nk));
    for (auto& flag : p.key_valid) flag = in.ConsumeIntegralInRange<int>(0, 3) != 0;
    mask.key_valid = ByteView{p.key_valid.data(), p.key_valid.size()};
  }
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    p.custom.resize(static_cast<std::size_t>(nq * nk));
    for (auto& flag : p.custom) flag = in.ConsumeIntegralInRange<int>(0, 4) != 0;
    mask.custom = ByteView{p.custom.data(), p.custom.size()};
  }
}

// Breaks one rule the engine must reject with an attnlens::Error.
void break_one_rule(FuzzedDataProvider& in, Problem& p) {
  const std::int64_t longest =
      std::max(p.shape.query_len + p.options.mask.query_offset, p.shape.key_len);
  switch (in.ConsumeIntegralInRange<int>(0, 10)) {
    case 8:
      p.options.softcap = -1.0f;
      p.broken = "a negative softcap";
      break;
    case 9:
      p.options.top_k = p.shape.key_len + 1;
      p.broken = "top_k > Nk";
      break;
    case 10:
      p.options.lsh.buckets = 3;
      p.broken = "an odd lsh.buckets";
      break;
    case 0:
      p.options.temperature = in.ConsumeBool() ? 0.0f : -1.0f;
      p.broken = "temperature <= 0";
      break;
    case 1:
      p.q[in.ConsumeIntegralInRange<std::size_t>(0, p.q.size() - 1)] =
          in.ConsumeBool() ? std::numeric_limits<float>::quiet_NaN()
                           : std::numeric_limits<float>::infinity();
      p.broken = "a NaN or Infinity in q";
      break;
    case 2:
      p.options.mask.window = LocalWindow{longest + 1, 0, 1};
      p.broken = "window.before > max(Nq, Nk)";
      break;
    case 3:
      p.options.mask.global_tokens.push_back(longest);
      p.broken = "a global token past the end";
      break;
    case 4:
      p.options.threads = in.ConsumeBool() ? -1 : 257;
      p.broken = "threads outside 0..256";
      break;
    case 5:
      p.v.pop_back();
      p.broken = "v one element short";
      break;
    case 6:
      p.shape.kv_heads = p.shape.heads + 1;
      p.broken = "kv_heads that does not divide heads";
      break;
    default:
      p.options.scale = std::numeric_limits<float>::infinity();
      p.broken = "an infinite scale";
      break;
  }
}

Problem draw_problem(FuzzedDataProvider& in) {
  Problem p;
  p.shape.heads = in.ConsumeIntegralInRange<std::int64_t>(1, 4);
  // Grouped-query attention: K/V heads a divisor of the query heads (0: as many).
  if (in.ConsumeBool()) {
    std::vector<std::int64_t> divisors;
    for (std::int64_t n = 1; n <= p.shape.heads; ++n) {
      if (p.shape.heads % n == 0) divisors.push_back(n);
    }
    p.shape.kv_heads = divisors[in.ConsumeIntegralInRange<std::size_t>(0, divisors.size() - 1)];
  }
  p.shape.query_len = in.ConsumeIntegralInRange<std::int64_t>(1, 40);
  p.shape.key_len =
      in.ConsumeBool() ? p.shape.query_len : in.ConsumeIntegralInRange<std::int64_t>(1, 40);
  p.shape.head_dim = in.ConsumeIntegralInRange<std::int64_t>(1, 20);
  p.shape.value_dim =
      in.ConsumeBool() ? p.shape.head_dim : in.ConsumeIntegralInRange<std::int64_t>(1, 20);
  const auto h = static_cast<std::size_t>(p.shape.heads);
  const auto hkv = static_cast<std::size_t>(kv_head_count(p.shape));
  const auto nq = static_cast<std::size_t>(p.shape.query_len);
  const auto nk = static_cast<std::size_t>(p.shape.key_len);
  const auto d = static_cast<std::size_t>(p.shape.head_dim);
  const auto dv = static_cast<std::size_t>(p.shape.value_dim);

  AttentionOptions& o = p.options;
  o.score = static_cast<ScoreFunction>(in.ConsumeIntegralInRange<int>(0, 3));
  if (in.ConsumeBool()) o.scale = static_cast<float>(in.ConsumeIntegralInRange<int>(1, 32)) / 16.0f;
  o.temperature = static_cast<float>(in.ConsumeIntegralInRange<int>(1, 16)) / 4.0f;
  draw_mask(in, p);
  o.strategy = static_cast<Strategy>(in.ConsumeIntegralInRange<int>(0, 2));
  p.return_weights = o.strategy != Strategy::kStreaming && in.ConsumeBool();
  if (in.ConsumeBool()) o.query_block = in.ConsumeIntegralInRange<std::int64_t>(1, 48);
  if (in.ConsumeBool()) o.key_block = in.ConsumeIntegralInRange<std::int64_t>(1, 48);
  const Span<const KernelSet> sets = kernel_sets();
  o.kernels = &sets.data[in.ConsumeIntegralInRange<std::size_t>(0, sets.size - 1)];
  o.threads = in.ConsumeIntegralInRange<std::int64_t>(1, 3);
  const std::string terms = fuzz_terms::draw_terms(in, p.shape, o, p.terms);

  p.q = draw_values(in, h * nq * d, 2.0f);
  p.k = draw_values(in, hkv * nk * d, 2.0f);
  // One draw in four has values so large that Nk * max |v| passes FLT_MAX (up to FLT_MAX itself):
  // the output, a weighted mean of values, must still come out finite and right.
  p.value_range = 2.0f;
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    const float largest = std::numeric_limits<float>::max();
    p.value_range = in.ConsumeBool()
                        ? largest
                        : static_cast<float>(std::min(2.0 * largest / static_cast<double>(nk),
                                                      static_cast<double>(largest)));
  }
  p.v = draw_values(in, hkv * nk * dv, p.value_range);
  if (o.score == ScoreFunction::kAdditive) {
    const std::int64_t hidden = in.ConsumeIntegralInRange<std::int64_t>(1, 8);
    p.w_query = draw_values(in, h * static_cast<std::size_t>(hidden) * d, 1.0f);
    p.w_key = draw_values(in, h * static_cast<std::size_t>(hidden) * d, 1.0f);
    p.w_v = draw_values(in, h * static_cast<std::size_t>(hidden), 1.0f);
    o.additive = AdditiveWeights{hidden, FloatView{p.w_query.data(), p.w_query.size()},
                                 FloatView{p.w_key.data(), p.w_key.size()},
                                 FloatView{p.w_v.data(), p.w_v.size()}};
  }
  p.d_output = draw_values(in, h * nq * dv, 1.0f);
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) {
    p.d_output[in.ConsumeIntegralInRange<std::size_t>(0, p.d_output.size() - 1)] =
        std::numeric_limits<float>::quiet_NaN();
    p.broken_d_output = true;
  }
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) break_one_rule(in, p);

  const MaskSpec& m = o.mask;
  p.description =
      "H=" + std::to_string(h) + " Hkv=" + std::to_string(hkv) + " Nq=" + std::to_string(nq) +
      " Nk=" + std::to_string(nk) + " D=" + std::to_string(d) + " Dv=" + std::to_string(dv) +
      " score=" + std::to_string(static_cast<int>(o.score)) +
      " strategy=" + std::to_string(static_cast<int>(o.strategy)) + " kernels=" + o.kernels->name +
      " threads=" + std::to_string(o.threads) + " temperature=" + std::to_string(o.temperature) +
      " |v|<=" + std::to_string(p.value_range) + " causal=" + std::to_string(m.causal) +
      (m.window ? " window=" + std::to_string(m.window->before) + "/" +
                      std::to_string(m.window->after) + "/" + std::to_string(m.window->dilation)
                : "") +
      " sparse=" + std::to_string(static_cast<int>(m.sparse.pattern)) +
      " globals=" + std::to_string(m.global_tokens.size()) +
      " key_lengths=" + std::to_string(!m.key_lengths.empty()) +
      " key_valid=" + std::to_string(!m.key_valid.empty()) +
      " custom=" + std::to_string(!m.custom.empty()) +
      " query_offset=" + std::to_string(m.query_offset) + terms +
      (p.broken.empty() ? "" : " broken: " + p.broken) +
      (p.broken_d_output ? " (a NaN in d_output)" : "");
  return p;
}

// Float32 logits carry a relative rounding error of a few ulps; a weight moves by about that
// much times the logit's size, and an output by the weights' error times |v| (the tolerance
// below is for |v| <= 2 and grows with the range the values were drawn from).
// Returns the weights' tolerance, which the backward's builds on, or -1 when a near tie under
// top_k makes the call not comparable.
double check_against_reference(const Problem& p, const AttentionInputs& inputs,
                               const AttentionResult& got) {
  const reference::Result want = reference::attention(inputs, p.options);
  const std::int64_t heads = p.shape.heads, nq = p.shape.query_len, nk = p.shape.key_len;
  const double max_logit = fuzz_terms::max_abs_logit(p.shape, p.options, want.scores);
  const double weight_tolerance = 2e-5 * (1.0 + max_logit);
  // A near tie at a row's k-th key: float and double may rightly keep different keys.
  if (fuzz_terms::top_k_near_tie(inputs, p.options, want.scores, 1e-5)) return -1.0;
  const double output_tolerance =
      (weight_tolerance * static_cast<double>(nk) + 5e-6) * static_cast<double>(p.value_range);

  for (std::size_t i = 0; i < got.output.size(); ++i) {
    const double error = std::abs(static_cast<double>(got.output[i]) - want.output[i]);
    if (!std::isfinite(got.output[i]) || error > output_tolerance) {
      fail(p, "output[" + std::to_string(i) + "] = " + std::to_string(got.output[i]) +
                  ", reference " + std::to_string(want.output[i]) + " (tolerance " +
                  std::to_string(output_tolerance) + ")");
    }
  }
  if (!p.return_weights) return weight_tolerance;
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t i = 0; i < nq; ++i) {
      double sum = 0.0;
      bool any_visible = false;
      for (std::int64_t j = 0; j < nk; ++j) {
        const std::size_t at = static_cast<std::size_t>((h * nq + i) * nk + j);
        const float w = got.weights[at];
        const bool visible = reference::visible(p.options.mask, p.shape, h, i, j);
        any_visible = any_visible || visible;
        if (!visible && w != 0.0f) {
          fail(p, "weight [" + std::to_string(h) + "," + std::to_string(i) + "," +
                      std::to_string(j) + "] of a masked key is " + std::to_string(w));
        }
        if (std::abs(static_cast<double>(w) - want.weights[at]) > weight_tolerance) {
          fail(p, "weight [" + std::to_string(h) + "," + std::to_string(i) + "," +
                      std::to_string(j) + "] = " + std::to_string(w) + ", reference " +
                      std::to_string(want.weights[at]));
        }
        sum += w;
      }
      // A -inf bias, top_k and hashing hide keys the mask shows: the reference's row says.
      double reference_sum = 0.0;
      for (std::int64_t j = 0; j < nk; ++j) {
        reference_sum += want.weights[static_cast<std::size_t>((h * nq + i) * nk + j)];
      }
      const double expected_sum = any_visible && reference_sum > 0.5 ? 1.0 : 0.0;
      if (std::abs(sum - expected_sum) > 1e-5 * static_cast<double>(nk) + 1e-6) {
        fail(p, "weights of row [" + std::to_string(h) + "," + std::to_string(i) + "] sum to " +
                    std::to_string(sum));
      }
    }
  }
  return weight_tolerance;
}

// The backward's errors compound the weights' (times |dP - rowsum(dO * O)|, then summed over up
// to 40 queries or keys) with the float dot products': the tolerance scales with the weights',
// with the largest reference gradient and with the number of terms.
void check_backward(const Problem& p, const AttentionInputs& inputs, double weight_tolerance) {
  const FloatView d_output{p.d_output.data(), p.d_output.size()};
  AttentionGradientsResult got;
  try {
    got = attention_backward(inputs, d_output, p.options);
  } catch (const NonFiniteError& e) {
    if (p.broken_d_output && e.parameter() == "d_output") return;
    fail(p, std::string("the backward of a valid problem was rejected: ") + e.what());
  } catch (const Error& e) {
    fail(p, std::string("the backward of a valid problem was rejected: ") + e.what());
  }
  if (p.broken_d_output) fail(p, "a NaN in d_output was accepted");
  const reference::BackwardResult want = reference::attention_backward(inputs, d_output, p.options);
  const double terms = static_cast<double>(p.shape.query_len + p.shape.key_len);
  const struct {
    const std::vector<float>& got;
    const std::vector<double>& want;
    const char* name;
  } gradients[] = {{got.dq, want.dq, "dq"}, {got.dk, want.dk, "dk"}, {got.dv, want.dv, "dv"}};
  for (const auto& g : gradients) {
    double largest = 0.0;
    for (double x : g.want) largest = std::max(largest, std::abs(x));
    const double tolerance = 4.0 * weight_tolerance * terms * (1.0 + largest) + 1e-5;
    for (std::size_t i = 0; i < g.want.size(); ++i) {
      const double error = std::abs(static_cast<double>(g.got[i]) - g.want[i]);
      if (!std::isfinite(g.got[i]) || error > tolerance) {
        fail(p, std::string(g.name) + "[" + std::to_string(i) + "] = " + std::to_string(g.got[i]) +
                    ", reference " + std::to_string(g.want[i]) + " (tolerance " +
                    std::to_string(tolerance) + ")");
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  Problem p = draw_problem(in);
  const AttentionInputs inputs{p.shape, FloatView{p.q.data(), p.q.size()},
                               FloatView{p.k.data(), p.k.size()},
                               FloatView{p.v.data(), p.v.size()}};
  AttentionResult got;
  try {
    got = attention(inputs, p.options, p.return_weights);
  } catch (const Error& e) {
    if (p.broken.empty()) fail(p, std::string("a valid problem was rejected: ") + e.what());
    return 0;  // a typed error naming the problem: what a broken rule must give
  }
  if (!p.broken.empty()) fail(p, "a broken rule was accepted");
  const double weight_tolerance = check_against_reference(p, inputs, got);
  if (weight_tolerance < 0.0) return 0;  // a near tie under top_k: not comparable
  if (fuzz_terms::has_terms(p.options)) {
    // The backward refuses what it does not differentiate, by name, rather than ignore it.
    try {
      attention_backward(inputs, FloatView{p.d_output.data(), p.d_output.size()}, p.options);
    } catch (const InvalidArgumentError&) {
      return 0;
    } catch (const NonFiniteError&) {
      if (p.broken_d_output) return 0;
    }
    fail(p, "the backward accepted options it does not differentiate");
  }
  // The backward's gradients grow with |v| (dP = dO V^T) and genuinely overflow float32 for the
  // huge values drawn to test the forward's rescaling, so it is checked on the ordinary draws.
  if (p.options.score != ScoreFunction::kAdditive && p.value_range <= 2.0f) {
    check_backward(p, inputs, weight_tolerance);
  }
  return 0;
}
