// Marian (units/marian.cpp): the encoder and decoder stacks against the double-precision
// reference (reference::marian_transformer): the encoder's self-attention, the decoder's causal
// self-attention and its cross-attention, hidden states and logits at every decoder position,
// over every kernel set; the decoder's causality (a prefix's logits do not change as the target
// grows); and the errors of encoder-decoder inputs and configs; head ablation in both stacks,
// the decoder's logit lens and the refusal of a resumed run.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "error_checks.h"
#include "models_test_util.h"

using namespace attnlens;
using namespace attnlens::models;
using namespace attnlens_test;

namespace {

struct EncoderDecoderRun {
  std::vector<float> encoder_attention, decoder_attention, cross_attention, logits, hidden;
};

EncoderDecoderRun run_marian(const Transformer& model, const std::vector<std::int32_t>& source,
                             const std::vector<std::int32_t>& target, ForwardOptions options) {
  const TransformerConfig& c = model.config();
  const auto n = static_cast<std::int64_t>(source.size());
  const auto t = static_cast<std::int64_t>(target.size());
  const std::int64_t e = c.encoder_layers, d = c.layers - c.encoder_layers;
  for (std::int64_t i = 0; i < t; ++i) options.logit_positions.push_back(i);
  EncoderDecoderRun r;
  r.encoder_attention.resize(static_cast<std::size_t>(e * c.heads * n * n));
  r.decoder_attention.resize(static_cast<std::size_t>(d * c.heads * t * t));
  r.cross_attention.resize(static_cast<std::size_t>(d * c.heads * t * n));
  r.logits.resize(static_cast<std::size_t>(t * c.vocab));
  r.hidden.resize(static_cast<std::size_t>((d + 1) * t * c.hidden));
  ForwardInputs inputs{source, {}, target};
  ForwardOutputs outputs;
  outputs.attention = r.encoder_attention;
  outputs.decoder_attention = r.decoder_attention;
  outputs.cross_attention = r.cross_attention;
  outputs.logits = r.logits;
  outputs.hidden_states = r.hidden;
  model.forward(inputs, options, outputs);
  return r;
}

}  // namespace

TEST_CASE("Marian's encoder and decoder match the double reference", "[models]") {
  const TransformerConfig c = tiny(Architecture::kMarian);
  Transformer model(c);
  const Checkpoint ckpt = make_checkpoint(model, 21);
  write_weights(model, ckpt);
  const std::int64_t e = c.encoder_layers, d = c.layers - e;
  for (const KernelSet& kernels : kernel_sets()) {
    for (const auto& [n, t] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {5, 3}, {9, 12}}) {
      const auto source = random_ids(n, c.vocab, static_cast<std::uint32_t>(n));
      const auto target = random_ids(t, c.vocab, static_cast<std::uint32_t>(100 + t));
      ForwardOptions options;
      options.kernels = &kernels;
      INFO("kernels " << kernels.name << " N=" << n << " T=" << t);
      const EncoderDecoderRun r = run_marian(model, source, target, options);
      const reference::EncoderDecoderResult expected =
          reference::marian_transformer(c, ckpt.values, source, target);
      ATTNLENS_CHECK_CLOSE(r.encoder_attention, expected.encoder_attention, kAttentionTol,
                           (Layout{{e, c.heads, n, n}, {"layer", "head", "i", "j"}}),
                           "encoder attention");
      ATTNLENS_CHECK_CLOSE(r.decoder_attention, expected.decoder_attention, kAttentionTol,
                           (Layout{{d, c.heads, t, t}, {"layer", "head", "i", "j"}}),
                           "decoder attention");
      ATTNLENS_CHECK_CLOSE(r.cross_attention, expected.cross_attention, kAttentionTol,
                           (Layout{{d, c.heads, t, n}, {"layer", "head", "i", "j"}}),
                           "cross attention");
      ATTNLENS_CHECK_CLOSE(r.hidden, expected.hidden, kHiddenTol,
                           (Layout{{d + 1, t, c.hidden}, {"state", "i", "c"}}), "hidden");
      ATTNLENS_CHECK_CLOSE(r.logits, expected.logits, kLogitTol, matrix_layout(t, c.vocab),
                           "logits");
    }
  }
}

TEST_CASE("Marian's decoder is causal: a longer target leaves the prefix's logits", "[models]") {
  const TransformerConfig c = tiny(Architecture::kMarian);
  Transformer model(c);
  write_weights(model, make_checkpoint(model, 22));
  const auto source = random_ids(6, c.vocab, 1);
  const auto target = random_ids(7, c.vocab, 2);
  const EncoderDecoderRun full = run_marian(model, source, target, {});
  const std::vector<std::int32_t> prefix(target.begin(), target.begin() + 4);
  const EncoderDecoderRun part = run_marian(model, source, prefix, {});
  for (std::size_t i = 0; i < part.logits.size(); ++i) {
    CHECK(part.logits[i] == Approx(full.logits[i]).margin(1e-5));
  }
}

TEST_CASE("encoder-decoder inputs and configs are checked by name", "[models][errors]") {
  TransformerConfig c = tiny(Architecture::kMarian);
  Transformer model(c);
  write_weights(model, make_checkpoint(model, 23));
  const std::vector<std::int32_t> ids = {1, 2, 3};
  const std::vector<std::int32_t> bad = {1, 99};
  ForwardOptions options;
  check_error<RangeError>([&] { model.forward({ids, {}, {}}, options, {}); }, "decoder_token_ids");
  check_error<RangeError>([&] { model.forward({ids, {}, bad}, options, {}); }, "decoder_token_ids");
  std::vector<float> wrong(5);
  ForwardOutputs outputs;
  outputs.cross_attention = wrong;
  check_error<ShapeError>(
      [&] {
        model.forward({ids, {}, ids}, options, outputs);
      },
      "cross_attention");
  options.projections_layer = 0;
  check_error<InvalidArgumentError>(
      [&] {
        model.forward({ids, {}, ids}, options, {});
      },
      "projections");

  TransformerConfig gpt2 = tiny(Architecture::kGpt2);
  Transformer gpt(gpt2);
  write_weights(gpt, make_checkpoint(gpt, 24));
  check_error<InvalidArgumentError>(
      [&] {
        gpt.forward({ids, {}, ids}, {}, {});
      },
      "decoder_token_ids");
  gpt2.encoder_layers = 1;
  check_error<InvalidArgumentError>([&] { Transformer refused(gpt2); }, "encoder_layers");
  for (std::int64_t layers : {0, 4}) {
    c.encoder_layers = layers;
    check_error<RangeError>([&] { Transformer refused(c); }, "encoder_layers");
  }
}

// Head ablation names the model's layers, the encoder's first: an encoder head and a decoder
// self-attention head zeroed equal the reference over a checkpoint whose output projections
// never read them, cross-attention untouched (its weights are the reference's own).
TEST_CASE("Marian's encoder and decoder self-attention heads can be ablated", "[models]") {
  const TransformerConfig c = tiny(Architecture::kMarian);
  Transformer model(c);
  const Checkpoint ckpt = make_checkpoint(model, 25);
  write_weights(model, ckpt);
  const std::int64_t d = head_dim_of(c), t = 4;
  const auto source = random_ids(6, c.vocab, 3);
  const auto target = random_ids(t, c.vocab, 4);
  ForwardOptions options;
  options.ablations = {{0, 1, AblationMode::kZero}, {c.encoder_layers + 1, 0, AblationMode::kZero}};
  Checkpoint without = ckpt;
  for (const HeadAblation& a : options.ablations) {
    std::vector<double>& w =
        without.values.at("layers." + std::to_string(a.layer) + ".attention.output.weight");
    for (std::int64_t o = 0; o < c.hidden; ++o) {  // nn.Linear [out, in]: head a.head's columns
      for (std::int64_t j = a.head * d; j < (a.head + 1) * d; ++j) {
        w[static_cast<std::size_t>(o * c.heads * d + j)] = 0;
      }
    }
  }
  const EncoderDecoderRun r = run_marian(model, source, target, options);
  const reference::EncoderDecoderResult expected =
      reference::marian_transformer(c, without.values, source, target);
  ATTNLENS_CHECK_CLOSE(r.logits, expected.logits, kLogitTol, matrix_layout(t, c.vocab), "logits");
  const auto n = static_cast<std::int64_t>(source.size());
  ATTNLENS_CHECK_CLOSE(
      r.cross_attention, expected.cross_attention, kAttentionTol,
      (Layout{{c.layers - c.encoder_layers, c.heads, t, n}, {"layer", "head", "i", "j"}}),
      "cross attention");
  // The ablation moves the logits: the comparison could fail.
  const EncoderDecoderRun clean = run_marian(model, source, target, {});
  double moved = 0;
  for (std::size_t i = 0; i < r.logits.size(); ++i) {
    moved = std::max(moved, static_cast<double>(std::fabs(r.logits[i] - clean.logits[i])));
  }
  CHECK(moved > 1e-3);
}

// An encoder-decoder's lens reads its decoder's states, [decoder layers + 1, T, k]; the last is
// the model's own prediction at every target position. A resumed run is refused by name.
TEST_CASE("Marian's logit lens is its decoder's; a resumed run is refused", "[models]") {
  const TransformerConfig c = tiny(Architecture::kMarian);
  Transformer model(c);
  write_weights(model, make_checkpoint(model, 26));
  const std::int64_t t = 5, k = 3, decoder_layers = c.layers - c.encoder_layers;
  const auto source = random_ids(7, c.vocab, 5);
  const auto target = random_ids(t, c.vocab, 6);
  const EncoderDecoderRun clean = run_marian(model, source, target, {});
  ForwardOptions options;
  options.lens_top_k = k;
  std::vector<std::int32_t> lens_ids(static_cast<std::size_t>((decoder_layers + 1) * t * k));
  std::vector<float> lens_probabilities(lens_ids.size());
  ForwardOutputs out;
  out.lens_ids = lens_ids;
  out.lens_probabilities = lens_probabilities;
  model.forward({source, {}, target}, options, out);
  for (std::int64_t i = 0; i < t; ++i) {
    const float* row = clean.logits.data() + i * c.vocab;
    const auto best = static_cast<std::int32_t>(std::max_element(row, row + c.vocab) - row);
    CHECK(lens_ids[static_cast<std::size_t>((decoder_layers * t + i) * k)] == best);
  }
  std::vector<std::int32_t> model_sized(static_cast<std::size_t>((c.layers + 1) * t * k));
  std::vector<float> model_sized_probabilities(model_sized.size());
  out.lens_ids = model_sized;
  out.lens_probabilities = model_sized_probabilities;
  check_error<ShapeError>([&] { model.forward({source, {}, target}, options, out); }, "lens_ids");

  ForwardOptions resumed;
  resumed.start_layer = c.encoder_layers;
  std::vector<float> state(static_cast<std::size_t>(t * c.hidden), 0.5f);
  resumed.start_state = state;
  check_error<InvalidArgumentError>(
      [&] {
        model.forward({source, {}, target}, resumed, {});
      },
      "start_layer");
}
