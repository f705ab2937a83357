// Head ablation, resumed runs and the logit lens of the forward pass (transformer.h's
// ForwardOptions::ablations, start_layer, lens_top_k). A zeroed head equals the double reference
// over a checkpoint whose output projection never reads that head; a mean-ablated one equals a
// checkpoint whose output bias carries the head's mean instead. The torch reference checks every
// architecture's ablations and lens from JavaScript (web/test/models-ablation-lens.test.js).
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "models_test_util.h"

using namespace attnlens;
using namespace attnlens::models;
using namespace attnlens_test;

namespace {

// The output projection weight's entries that read head h's d columns of the merged heads: rows
// h*d.. of a Conv1D [in, out] (GPT-2), columns h*d.. of an nn.Linear [out, in].
template <typename Visit>
void for_head_inputs(const TransformerConfig& c, std::vector<double>& w, std::int64_t h,
                     Visit visit) {
  const std::int64_t d = head_dim_of(c), in = c.heads * d, out = c.hidden;
  const bool conv1d = c.architecture == Architecture::kGpt2;
  for (std::int64_t j = h * d; j < (h + 1) * d; ++j) {
    for (std::int64_t o = 0; o < out; ++o) {
      visit(w[static_cast<std::size_t>(conv1d ? j * out + o : o * in + j)], j - h * d, o);
    }
  }
}

std::string output_weight(std::int64_t layer) {
  return "layers." + std::to_string(layer) + ".attention.output.weight";
}

}  // namespace

TEST_CASE("a zero-ablated head equals the reference without that head's output", "[models]") {
  for (Architecture arch : {Architecture::kGpt2, Architecture::kBert, Architecture::kLlama}) {
    const TransformerConfig c = tiny(arch);
    Transformer model(c);
    const Checkpoint ckpt = make_checkpoint(model, 31);
    write_weights(model, ckpt);
    const auto ids = random_ids(9, c.vocab, 32);
    ForwardOptions options;
    options.ablations = {{1, 2, AblationMode::kZero}, {0, 0, AblationMode::kZero}};
    Checkpoint without = ckpt;
    for (const HeadAblation& a : options.ablations) {
      for_head_inputs(c, without.values.at(output_weight(a.layer)), a.head,
                      [](double& w, std::int64_t, std::int64_t) { w = 0; });
    }
    const Run r = run(model, ids, {}, options);
    const reference::TransformerResult expected =
        reference::transformer(c, without.values, ids, {});
    INFO(arch_name(arch));
    ATTNLENS_CHECK_CLOSE(r.logits, expected.logits, kLogitTol, matrix_layout(9, c.vocab), "logits");
    // The ablation changes the prediction: the test could fail.
    const Run clean = run(model, ids, {}, {});
    double moved = 0;
    for (std::size_t i = 0; i < r.logits.size(); ++i) {
      moved = std::max(moved, static_cast<double>(std::fabs(r.logits[i] - clean.logits[i])));
    }
    CHECK(moved > 1e-3);
  }
}

TEST_CASE("a mean-ablated head equals its mean carried by the output bias", "[models]") {
  // GPT-2's c_proj has a bias: head h's mean output m (over the text's positions) contributes
  // m W_h to every position, which a bias of b + m W_h with W_h zeroed gives too. m comes from
  // the layer's own attention weights and values: m = mean_i(A_h[i, :]) V_h.
  const TransformerConfig c = tiny(Architecture::kGpt2);
  Transformer model(c);
  const Checkpoint ckpt = make_checkpoint(model, 41);
  write_weights(model, ckpt);
  const std::int64_t n = 7, layer = 1, head = 2, d = head_dim_of(c);
  const auto ids = random_ids(n, c.vocab, 42);
  const reference::TransformerResult clean = reference::transformer(c, ckpt.values, ids, {});
  std::vector<double> mean(static_cast<std::size_t>(d), 0.0);
  const double* a = clean.attention.data() + (layer * c.heads + head) * n * n;
  const double* v = clean.projections.data() + ((layer * 3 + 2) * c.heads + head) * n * d;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t e = 0; e < d; ++e) mean[e] += a[i * n + j] * v[j * d + e] / n;
    }
  }
  Checkpoint carried = ckpt;
  std::vector<double>& bias =
      carried.values.at("layers." + std::to_string(layer) + ".attention.output.bias");
  for_head_inputs(c, carried.values.at(output_weight(layer)), head,
                  [&](double& w, std::int64_t e, std::int64_t o) {
                    bias[static_cast<std::size_t>(o)] += mean[static_cast<std::size_t>(e)] * w;
                    w = 0;
                  });
  ForwardOptions options;
  options.ablations = {{layer, head, AblationMode::kMean}};
  const Run r = run(model, ids, {}, options);
  const reference::TransformerResult expected = reference::transformer(c, carried.values, ids, {});
  ATTNLENS_CHECK_CLOSE(r.logits, expected.logits, kLogitTol, matrix_layout(n, c.vocab), "logits");
}

TEST_CASE("a run resumed at a layer's input equals the whole run", "[models]") {
  for (Architecture arch : {Architecture::kGpt2, Architecture::kBert, Architecture::kLlama}) {
    const TransformerConfig c = tiny(arch);
    Transformer model(c);
    write_weights(model, make_checkpoint(model, 51));
    const std::int64_t n = 6;
    const auto ids = random_ids(n, c.vocab, 52);
    ForwardOptions ablated;
    ablated.ablations = {{c.layers - 1, 1, AblationMode::kZero}};
    const Run whole = run(model, ids, {}, ablated);
    for (std::int64_t start = 0; start < c.layers; ++start) {
      ForwardOptions resumed = ablated;
      resumed.start_layer = start;
      resumed.start_state = FloatView(whole.hidden.data() + start * n * c.hidden,
                                      static_cast<std::size_t>(n * c.hidden));
      const Run r = run(model, ids, {}, resumed);
      INFO(arch_name(arch) << " from layer " << start);
      ATTNLENS_CHECK_CLOSE(r.logits, std::vector<double>(whole.logits.begin(), whole.logits.end()),
                           (Tolerance{1e-5, 1e-5}), Layout{}, "logits");
    }
  }
}

TEST_CASE("the last layer's lens is the model's own top-k prediction", "[models]") {
  for (Architecture arch : {Architecture::kGpt2, Architecture::kBert, Architecture::kLlama}) {
    const TransformerConfig c = tiny(arch);
    Transformer model(c);
    write_weights(model, make_checkpoint(model, 61));
    const std::int64_t n = 20, k = 3;  // more rows than the lens computes at once
    const auto ids = random_ids(n, c.vocab, 62);
    const Run clean = run(model, ids, {}, {});
    ForwardOptions options;
    options.lens_top_k = k;
    for (std::int64_t i = 0; i < n; ++i) options.logit_positions.push_back(i);
    const auto states = static_cast<std::size_t>((c.layers + 1) * n * k);
    std::vector<std::int32_t> lens_ids(states);
    std::vector<float> lens_probabilities(states), logits(clean.logits.size());
    ForwardOutputs out;
    out.logits = logits;
    out.lens_ids = lens_ids;
    out.lens_probabilities = lens_probabilities;
    model.forward({ids, {}}, options, out);
    INFO(arch_name(arch));
    for (std::int64_t i = 0; i < n; ++i) {
      const float* row = clean.logits.data() + i * c.vocab;
      std::vector<std::int32_t> order(static_cast<std::size_t>(c.vocab));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [row](std::int32_t a, std::int32_t b) { return row[a] > row[b]; });
      const double lse = clean.log_sum_exp[static_cast<std::size_t>(i)];
      for (std::int64_t j = 0; j < k; ++j) {
        const std::size_t at = static_cast<std::size_t>((c.layers * n + i) * k + j);
        CHECK(lens_ids[at] == order[static_cast<std::size_t>(j)]);
        CHECK(std::fabs(lens_probabilities[at] - std::exp(row[order[j]] - lse)) < 1e-5);
      }
      // Each state's probabilities come best first and are probabilities.
      for (std::int64_t s = 0; s <= c.layers; ++s) {
        const float* p = lens_probabilities.data() + (s * n + i) * k;
        CHECK(p[0] <= 1.0f);
        CHECK(p[k - 1] >= 0.0f);
        CHECK(std::is_sorted(p, p + k, std::greater<float>()));
      }
    }
  }
}

TEST_CASE("bad ablations, resumed runs and lens options name the problem", "[models][errors]") {
  const TransformerConfig c = tiny(Architecture::kGpt2);
  Transformer model(c);
  write_weights(model, make_checkpoint(model, 71));
  const auto ids = random_ids(4, c.vocab, 72);
  const auto message_of = [&](const ForwardOptions& o, const ForwardOutputs& out) {
    try {
      model.forward({ids, {}}, o, out);
    } catch (const Error& e) {
      CHECK(e.parameter() == std::string(e.what()).substr(0, e.parameter().size()));
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto ablating = [](std::vector<HeadAblation> list) {
    ForwardOptions o;
    o.ablations = std::move(list);
    return o;
  };
  CHECK(message_of(ablating({{3, 0, AblationMode::kZero}}), {}) ==
        "ablations: layer 3 is outside the model's 3 layers");
  CHECK(message_of(ablating({{0, -1, AblationMode::kZero}}), {}) ==
        "ablations: head -1 is outside the 3 heads of a layer");
  CHECK(message_of(ablating({{1, 2, AblationMode::kZero}, {1, 2, AblationMode::kMean}}), {}) ==
        "ablations: layer 1 head 2 is ablated twice");
  ForwardOptions resumed;
  resumed.start_layer = 1;
  CHECK(message_of(resumed, {}).rfind("start_state", 0) == 0);
  std::vector<float> state(static_cast<std::size_t>(4 * c.hidden), 0.5f);
  resumed.start_state = state;
  resumed.start_layer = 3;
  CHECK(message_of(resumed, {}).rfind("start_layer", 0) == 0);
  ForwardOptions lens;
  lens.lens_top_k = c.vocab + 1;
  CHECK(message_of(lens, {}).rfind("lens_top_k", 0) == 0);
  lens.lens_top_k = 2;
  CHECK(message_of(lens, {}).rfind("lens_ids", 0) == 0);
  // Still usable.
  CHECK(message_of({}, {}) == "no error");
}
