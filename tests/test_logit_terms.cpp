// The terms between the score and the softmax (attention.h): the soft cap (its kernels: kernels/),
// an additive bias per head or broadcast, ALiBi, and the query offset of a KV cache (mask.h) with
// K/V rows read out of a larger capacity. Against the double reference over awkward shapes, every
// score, strategy and kernel set; against ONNX Attention's definitions written out by hand (float
// attn_mask, softcap, past keys with causal); and the errors that name each option.
#include <cmath>
#include <limits>
#include <vector>

#include "attention_checks.h"
#include "attnlens/training/attention_backward.h"
#include "error_checks.h"

using namespace attnlens;
using namespace attnlens_test;

namespace {

// Each combination of terms a case runs, with the storage its views point into.
struct Terms {
  std::vector<float> bias, slopes;
  void apply(AttentionOptions& o, int which) const {
    if (which & 1) o.softcap = 2.5f;
    if (which & 2) o.bias = FloatView(bias);
    if (which & 4) o.alibi_slopes = FloatView(slopes);
  }
};

Terms make_terms(const AttentionShape& s, bool per_head, std::uint32_t seed) {
  Rng rng(seed);
  Terms t;
  const std::int64_t matrix = s.query_len * s.key_len;
  t.bias = random_floats(static_cast<std::size_t>(per_head ? s.heads * matrix : matrix), rng, -2.0f,
                         2.0f);
  t.slopes = alibi_slopes(s.heads);
  return t;
}

}  // namespace

TEST_CASE("alibi_slopes: the paper's geometric slopes, and its rule for other head counts",
          "[terms][alibi]") {
  const std::vector<float> eight = alibi_slopes(8);
  for (int h = 0; h < 8; ++h)
    CHECK(eight[static_cast<std::size_t>(h)] == std::ldexp(1.0f, -(h + 1)));
  // 6 heads: the 4 slopes of 4 heads (2^-2, 2^-4, ...), then every other of 8 heads (2^-1, 2^-3).
  const std::vector<float> six = alibi_slopes(6);
  const std::vector<float> expected = {0.25f, 0.0625f, 0.015625f, 0.00390625f, 0.5f, 0.125f};
  CHECK(six == expected);
  CHECK(alibi_slopes(1) == std::vector<float>{0.00390625f});
  check_error<RangeError>([] { alibi_slopes(0); }, "heads");
}

TEST_CASE("logit terms: softcap, bias and ALiBi against the reference", "[terms]") {
  const std::vector<AttentionShape> shapes = {
      {1, 1, 1, 1, 1},       {2, 3, 5, 4, 3},   {3, 9, 8, 7, 5, 1},
      {4, 17, 33, 16, 8, 2}, {2, 33, 17, 5, 5}, {2, 70, 130, 32, 16},
  };
  const std::vector<MaskKind> masks = {MaskKind::kNone, MaskKind::kCausal, MaskKind::kKeyLengths,
                                       MaskKind::kCombined, MaskKind::kCombinedSparse};
  std::uint32_t seed = 19000;
  for (const AttentionShape& shape : shapes) {
    const Problem p = make_problem(shape, seed++);
    for (const bool per_head : {true, false}) {
      const Terms terms = make_terms(shape, per_head, seed++);
      for (int which = 1; which < 8; ++which) {
        if (!per_head && (which & 2) == 0) continue;  // the broadcast case only matters with bias
        if (shape.key_len > 64 && which != 7) continue;  // past the tiles: everything at once
        for (ScoreFunction score : all_scores()) {
          for (MaskKind kind : masks) {
            MaskStorage storage;
            AttentionOptions options;
            options.score = score;
            options.temperature = which == 7 ? 0.75f : 1.0f;
            options.mask = make_mask(kind, shape, seed++, storage);
            terms.apply(options, which);
            INFO(describe(shape) << ", score " << score_name(score) << ", mask " << mask_name(kind)
                                 << ", terms " << which
                                 << (per_head ? " (bias per head)" : " (bias broadcast)"));
            check_all_runs(p, options, tolerances_for(shape));
          }
        }
      }
    }
  }
}

TEST_CASE("logit terms: ONNX's float attn_mask, softcap and past keys, by hand", "[terms][onnx]") {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  SECTION("a 0 / -inf bias is the boolean mask it encodes, and a fully hidden row is zeros") {
    const AttentionShape shape{2, 11, 13, 8, 6};
    const Problem p = make_problem(shape, 19100);
    MaskStorage storage;
    const MaskSpec custom = make_mask(MaskKind::kCustom, shape, 19101, storage);
    std::vector<float> bias(storage.custom.size());
    for (std::size_t i = 0; i < bias.size(); ++i) bias[i] = storage.custom[i] ? 0.0f : kNegInf;
    for (std::int64_t j = 0; j < shape.key_len; ++j) bias[static_cast<std::size_t>(j)] = kNegInf;
    for (std::int64_t j = 0; j < shape.key_len; ++j)
      storage.custom[static_cast<std::size_t>(j)] = 0;
    for (Strategy strategy : {Strategy::kMaterialized, Strategy::kStreaming}) {
      AttentionOptions with_mask, with_bias;
      with_mask.mask = custom;
      with_bias.bias = FloatView(bias);
      with_mask.strategy = with_bias.strategy = strategy;
      const AttentionResult a = attention(p.inputs(), with_mask);
      const AttentionResult b = attention(p.inputs(), with_bias);
      CHECK(a.output == b.output);
      for (std::int64_t h = 0; h < shape.heads; ++h) {
        for (std::int64_t c = 0; c < shape.value_dim; ++c) {
          CHECK(b.output[static_cast<std::size_t>(h * shape.query_len * shape.value_dim + c)] == 0);
        }
      }
    }
  }
  SECTION("softcap: weights of cap * tanh(scale * q.k / cap), written out") {
    const AttentionShape shape{1, 1, 3, 2, 1};
    const std::vector<float> q = {3.0f, -1.0f}, k = {2.0f, 1.0f, -4.0f, 0.5f, 0.0f, 0.0f},
                             v = {1.0f, 2.0f, 4.0f};
    AttentionOptions options;
    options.score = ScoreFunction::kDot;
    options.scale = 1.5f;
    options.softcap = 5.0f;
    const std::vector<float> bias = {0.5f, 0.0f, -1.0f};
    options.bias = FloatView(bias);
    double logits[3], sum = 0.0, out = 0.0;
    for (int j = 0; j < 3; ++j) {
      const double s = 1.5 * (3.0 * k[2 * j] - 1.0 * k[2 * j + 1]);
      logits[j] = 5.0 * std::tanh(s / 5.0) + bias[static_cast<std::size_t>(j)];
      sum += std::exp(logits[j]);
    }
    for (int j = 0; j < 3; ++j) out += std::exp(logits[j]) / sum * v[static_cast<std::size_t>(j)];
    for (Strategy strategy : {Strategy::kMaterialized, Strategy::kStreaming}) {
      options.strategy = strategy;
      const AttentionResult r = attention({shape, q, k, v}, options);
      CHECK(r.output[0] == Approx(out).epsilon(1e-5));
    }
  }
  SECTION("past keys: query_offset = Nk - Nq is the last Nq rows of causal self-attention") {
    const AttentionShape full{3, 37, 37, 16, 8};
    const Problem p = make_problem(full, 19200);
    const Terms terms = make_terms(full, true, 19201);
    for (const std::int64_t nq : {1, 5, 37}) {
      const AttentionShape step{3, nq, 37, 16, 8};
      std::vector<float> q_step, bias_step;
      for (std::int64_t h = 0; h < 3; ++h) {
        const auto first = p.q.begin() + (h * 37 + 37 - nq) * 16;
        q_step.insert(q_step.end(), first, first + nq * 16);
        const auto rows = terms.bias.begin() + (h * 37 + 37 - nq) * 37;
        bias_step.insert(bias_step.end(), rows, rows + nq * 37);
      }
      for (Strategy strategy : {Strategy::kMaterialized, Strategy::kStreaming}) {
        AttentionOptions a, b;
        a.mask.causal = b.mask.causal = true;
        a.mask.window = b.mask.window = LocalWindow{9, 0, 1};
        a.alibi_slopes = b.alibi_slopes = FloatView(terms.slopes);
        a.bias = FloatView(terms.bias);
        b.bias = FloatView(bias_step);
        b.mask.query_offset = 37 - nq;
        a.strategy = b.strategy = strategy;
        const AttentionResult whole = attention(p.inputs(), a);
        const AttentionResult last = attention({step, q_step, p.k, p.v}, b);
        std::vector<double> expected;
        for (std::int64_t h = 0; h < 3; ++h) {
          const auto first = whole.output.begin() + (h * 37 + 37 - nq) * 8;
          expected.insert(expected.end(), first, first + nq * 8);
        }
        INFO("Nq " << nq << ", " << strategy_name(strategy));
        ATTNLENS_CHECK_CLOSE(last.output, expected, (Tolerance{2e-6, 1e-5}), Layout{}, "output");
      }
    }
  }
}

TEST_CASE("query_offset: every mask against the reference", "[terms][offset]") {
  std::uint32_t seed = 19300;
  for (const AttentionShape& shape :
       {AttentionShape{2, 1, 40, 8, 8}, AttentionShape{3, 9, 70, 5, 3, 1},
        AttentionShape{2, 17, 12, 4, 4}}) {
    const Problem p = make_problem(shape, seed++);
    for (const std::int64_t offset :
         {std::int64_t{0}, shape.key_len - shape.query_len, std::int64_t{3}}) {
      if (offset < 0) continue;
      for (MaskKind kind : all_mask_kinds()) {
        MaskStorage storage;
        AttentionOptions options;
        options.mask = make_mask(kind, shape, seed++, storage);
        options.mask.query_offset = offset;
        INFO(describe(shape) << ", mask " << mask_name(kind) << ", offset " << offset);
        check_all_runs(p, options, tolerances_for(shape));
      }
    }
  }
}

TEST_CASE("kv_capacity: K/V rows past Nk are never read", "[terms][kv_capacity]") {
  const AttentionShape shape{4, 3, 21, 8, 5, 2};
  const Problem p = make_problem(shape, 19400);
  const std::int64_t capacity = 32;
  // k and v laid out [Hkv, capacity, width], the rows past Nk NaN: reading one would show.
  const auto widen = [&](const std::vector<float>& x, std::int64_t width) {
    std::vector<float> out(static_cast<std::size_t>(2 * capacity * width),
                           std::numeric_limits<float>::quiet_NaN());
    for (std::int64_t h = 0; h < 2; ++h) {
      std::copy(x.begin() + h * 21 * width, x.begin() + (h + 1) * 21 * width,
                out.begin() + h * capacity * width);
    }
    return out;
  };
  const std::vector<float> k = widen(p.k, 8), v = widen(p.v, 5);
  AttentionInputs cached{shape, p.q, k, v};
  cached.kv_capacity = capacity;
  for (const Run& run : all_runs()) {
    AttentionOptions options;
    options.mask.causal = true;
    options.mask.query_offset = 18;
    options.strategy = run.strategy;
    const AttentionResult a = attention(p.inputs(), options, run.with_weights);
    const AttentionResult b = attention(cached, options, run.with_weights);
    CHECK(a.output == b.output);
    CHECK(a.weights == b.weights);
  }
  cached.kv_capacity = 20;
  check_error<RangeError>([&] { attention(cached, AttentionOptions{}); }, "kv_capacity");
  cached.kv_capacity = capacity;
  std::vector<float> short_k(k.begin(), k.end() - 1);
  cached.k = FloatView(short_k);
  check_error_of_kind<ShapeError>([&] { attention(cached, AttentionOptions{}); });
}

TEST_CASE("logit terms: bad options name themselves", "[terms][errors]") {
  const AttentionShape shape{2, 4, 6, 3, 3};
  const Problem p = make_problem(shape, 19500);
  const auto run = [&](const AttentionOptions& o) { attention(p.inputs(), o); };
  for (const float cap :
       {-1.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    AttentionOptions o;
    o.softcap = cap;
    check_error<RangeError>([&] { run(o); }, "softcap");
  }
  std::vector<float> bias(24 + 1, 0.0f);
  AttentionOptions o;
  o.bias = FloatView(bias);
  check_error<ShapeError>([&] { run(o); }, "bias", "H*Nq*Nk = 2*4*6 = 48 or Nq*Nk = 4*6 = 24");
  bias.pop_back();
  for (const float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    bias[7] = bad;
    o.bias = FloatView(bias);
    check_error<NonFiniteError>([&] { run(o); }, "bias", "bias[7]");
  }
  bias[7] = 0.0f;
  std::vector<float> slopes = {0.5f};
  AttentionOptions a;
  a.alibi_slopes = FloatView(slopes);
  check_error<ShapeError>([&] { run(a); }, "alibi_slopes");
  slopes = {0.5f, std::numeric_limits<float>::quiet_NaN()};
  a.alibi_slopes = FloatView(slopes);
  check_error<NonFiniteError>([&] { run(a); }, "alibi_slopes");
  AttentionOptions offset;
  offset.mask.query_offset = -1;
  check_error<RangeError>([&] { run(offset); }, "query_offset");
  offset.mask.query_offset = 3;
  offset.mask.window = LocalWindow{8, 0, 1};  // L = max(4 + 3, 6) = 7
  check_error<RangeError>([&] { run(offset); }, "window.before");
  // A bias near FLT_MAX would overflow the logits: an error, never NaN.
  std::vector<float> huge(24, std::numeric_limits<float>::max());
  AttentionOptions h;
  h.bias = FloatView(huge);
  check_error_of_kind<NonFiniteError>([&] { run(h); });
  // The backward differentiates plain logits only; it refuses the terms rather than ignore them.
  const std::vector<float> d_output(p.output_size(), 1.0f);
  AttentionOptions capped;
  capped.softcap = 3.0f;
  check_error<InvalidArgumentError>(
      [&] { attention_backward(p.inputs(), FloatView(d_output), capped); }, "softcap");
  check_error<InvalidArgumentError>([&] { attention_backward(p.inputs(), FloatView(d_output), o); },
                                    "bias");
}
