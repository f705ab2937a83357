// The transformer forward pass (attnlens/models/transformer.h) against the double-precision
// reference (tests/reference/transformer_reference.cpp) for GPT-2, GPT-Neo and BERT, every kernel
// set, storage dtype and several lengths; mask overrides; thread counts; and every error it
// raises. The llama family's are in test_models_llama.cpp; the helpers and tolerances in
// models_test_util.h.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "models_test_util.h"

using namespace attnlens;
using namespace attnlens::models;
using namespace attnlens_test;

TEST_CASE("forward pass matches the double reference for every architecture", "[models]") {
  for (Architecture arch : {Architecture::kGpt2, Architecture::kGptNeo, Architecture::kBert}) {
    for (const KernelSet& kernels : kernel_sets()) {
      for (std::int64_t n : {1, 5, 9, 20}) {
        const TransformerConfig config = tiny(arch);
        Transformer model(config);
        const Checkpoint ckpt = make_checkpoint(model, 11);
        write_weights(model, ckpt);
        const auto ids = random_ids(n, config.vocab, static_cast<std::uint32_t>(n));
        std::vector<std::int32_t> types;
        if (arch == Architecture::kBert) {
          for (std::int64_t i = 0; i < n; ++i) types.push_back(i >= n / 2 ? 1 : 0);
        }
        ForwardOptions options;
        options.kernels = &kernels;
        INFO(arch_name(arch) << " kernels " << kernels.name << " N=" << n);
        check_against_reference(model, ckpt, ids, types, options);
      }
    }
  }
}

TEST_CASE("widths that are not multiples of the 8-column panels are padded and still exact",
          "[models]") {
  // hidden 20 (q | k | v groups of 2.5 panels), intermediate 30, head_dim 5.
  for (Architecture arch : {Architecture::kGpt2, Architecture::kGptNeo, Architecture::kBert}) {
    TransformerConfig c = tiny(arch);
    c.hidden = 20;
    c.heads = 4;
    c.intermediate = 30;
    for (WeightDtype dtype : {WeightDtype::kF32, WeightDtype::kF16}) {
      c.matrix_dtype = dtype;
      Transformer model(c);
      const Checkpoint ckpt = make_checkpoint(model, 71);
      write_weights(model, ckpt);
      std::vector<std::int32_t> types;
      if (arch == Architecture::kBert) types = {0, 0, 0, 1, 1, 1, 1};
      INFO(arch_name(arch) << (dtype == WeightDtype::kF16 ? " f16" : " f32"));
      check_against_reference(model, ckpt, random_ids(7, c.vocab, 72), types, {});
    }
  }
}

TEST_CASE("GPT-2 scaling options, GPT-2 without ln_f, a BERT checkpoint without its MLM head",
          "[models]") {
  TransformerConfig c = tiny(Architecture::kGpt2);
  {
    TransformerConfig bare_top = c;
    bare_top.final_norm = false;  // attnlens/train's finalNorm: false
    Transformer model(bare_top);
    for (const WeightInfo& w : model.weights()) CHECK(w.name.rfind("final_norm", 0) != 0);
    const Checkpoint ckpt = make_checkpoint(model, 2);
    write_weights(model, ckpt);
    check_against_reference(model, ckpt, random_ids(7, c.vocab, 5), {}, {});
  }
  for (bool by_head_dim : {false, true}) {
    c.scale_attn_weights = by_head_dim;
    c.scale_attn_by_inverse_layer_idx = true;
    Transformer model(c);
    const Checkpoint ckpt = make_checkpoint(model, 3);
    write_weights(model, ckpt);
    INFO("scale_attn_weights " << by_head_dim);
    check_against_reference(model, ckpt, random_ids(7, c.vocab, 5), {}, {});
  }
  TransformerConfig b = tiny(Architecture::kBert);
  b.lm_head = false;
  Transformer bare(b);
  const Checkpoint ckpt = make_checkpoint(bare, 4);
  write_weights(bare, ckpt);
  check_against_reference(bare, ckpt, random_ids(6, b.vocab, 6), {}, {});
  ForwardOptions asking;
  asking.logit_positions = {0};
  std::vector<float> logits(static_cast<std::size_t>(b.vocab));
  const auto ids = random_ids(6, b.vocab, 6);
  CHECK_THROWS_AS(bare.forward({ids, {}}, asking, {{}, logits, {}, {}, {}}), InvalidArgumentError);
}

TEST_CASE("the logits of a few positions equal those of all positions", "[models]") {
  // Few positions take the dot-product head, eight or more the GEMM head.
  const TransformerConfig c = tiny(Architecture::kGpt2);
  Transformer model(c);
  write_weights(model, make_checkpoint(model, 8));
  const auto ids = random_ids(12, c.vocab, 9);
  const Run all = run(model, ids, {}, {});
  for (std::vector<std::int64_t> positions :
       {std::vector<std::int64_t>{11}, {3, 3, 0}, {0, 1, 2, 3, 4, 5, 6, 7, 11}}) {
    ForwardOptions options;
    options.logit_positions = positions;
    const Run some = run(model, ids, {}, options, false);
    std::vector<double> expected;
    for (std::int64_t p : positions) {
      expected.insert(expected.end(), all.logits.begin() + p * c.vocab,
                      all.logits.begin() + (p + 1) * c.vocab);
    }
    INFO("positions " << positions.size());
    ATTNLENS_CHECK_CLOSE(some.logits, expected, (Tolerance{1e-5, 1e-5}), Layout{}, "logits");
  }
}

TEST_CASE("f16 storage gives the f32 results for the same (f16-exact) weights", "[models]") {
  for (Architecture arch : {Architecture::kGpt2, Architecture::kGptNeo, Architecture::kBert}) {
    TransformerConfig c = tiny(arch);
    Transformer f32_model(c);
    const Checkpoint ckpt = make_checkpoint(f32_model, 21);
    write_weights(f32_model, ckpt);
    c.matrix_dtype = WeightDtype::kF16;
    Transformer f16_model(c);
    write_weights(f16_model, ckpt);
    CHECK(f16_model.size().weight_bytes < f32_model.size().weight_bytes);
    INFO(arch_name(arch));
    const auto ids = random_ids(9, c.vocab, 2);
    std::vector<std::int32_t> types;
    if (arch == Architecture::kBert) types.assign(9, 1);
    // Halves convert to floats exactly and feed the same kernels: the same bits.
    const Run a = run(f32_model, ids, types, {}), b = run(f16_model, ids, types, {});
    CHECK(a.attention == b.attention);
    CHECK(a.logits == b.logits);
    CHECK(a.hidden == b.hidden);
    check_against_reference(f16_model, ckpt, ids, types, {});
  }
}

TEST_CASE("mask overrides: one for all layers, or one per layer", "[models]") {
  const TransformerConfig c = tiny(Architecture::kGptNeo);
  Transformer model(c);
  const Checkpoint ckpt = make_checkpoint(model, 31);
  write_weights(model, ckpt);
  const auto ids = random_ids(11, c.vocab, 12);

  MaskSpec look_back_two;
  look_back_two.causal = true;
  look_back_two.window = LocalWindow{2, 2, 1};
  ForwardOptions one;
  one.masks = {look_back_two};
  check_against_reference(model, ckpt, ids, {}, one, one.masks);
  const Run own = run(model, ids, {}, {}), overridden = run(model, ids, {}, one);
  CHECK(own.attention != overridden.attention);
  CHECK(own.logits != overridden.logits);
  // Query 10 of every head now sees keys 8..10 only.
  const std::int64_t n = 11;
  for (std::int64_t l = 0; l < c.layers; ++l) {
    for (std::int64_t hd = 0; hd < c.heads; ++hd) {
      const float* row = overridden.attention.data() + ((l * c.heads + hd) * n + 10) * n;
      for (std::int64_t j = 0; j < 8; ++j) CHECK(row[j] == 0.0f);
    }
  }

  MaskSpec global, strided;
  strided.sparse = SparseSpec{SparsePattern::kStrided, 3, 1};
  ForwardOptions per_layer;
  per_layer.masks = {global, strided, look_back_two};
  check_against_reference(model, ckpt, ids, {}, per_layer, per_layer.masks);
}

TEST_CASE("the projections of any layer are the q, k and v its attention used", "[models]") {
  for (Architecture arch : {Architecture::kGpt2, Architecture::kGptNeo, Architecture::kBert}) {
    const TransformerConfig c = tiny(arch);
    Transformer model(c);
    const Checkpoint ckpt = make_checkpoint(model, 71);
    write_weights(model, ckpt);
    const std::int64_t n = 7, d = c.hidden / c.heads;
    const auto ids = random_ids(n, c.vocab, 72);
    const reference::TransformerResult expected = reference::transformer(c, ckpt.values, ids, {});
    const auto per_layer = static_cast<std::size_t>(3 * c.heads * n * d);
    for (std::int64_t l = 0; l < c.layers; ++l) {
      INFO(arch_name(arch) << " layer " << l);
      ForwardOptions options;
      options.projections_layer = l;
      std::vector<float> projections(per_layer),
          attention(static_cast<std::size_t>(c.layers * c.heads * n * n));
      model.forward({ids, {}}, options, {attention, {}, {}, {}, projections});
      const std::vector<double> layer(expected.projections.begin() + l * per_layer,
                                      expected.projections.begin() + (l + 1) * per_layer);
      ATTNLENS_CHECK_CLOSE(projections, layer, kHiddenTol,
                           (Layout{{3, c.heads, n, d}, {"part", "head", "i", "c"}}), "projections");
      // Scores from them, scaled as the layer scales and masked as it masks, give the layer's
      // weights (shown for the last query).
      const float scale = model.attention_scale(l);
      const MaskSpec mask = model.layer_mask(l);
      for (std::int64_t hd = 0; hd < c.heads; ++hd) {
        const float* q = projections.data() + (hd * n + (n - 1)) * d;
        std::vector<double> logits(static_cast<std::size_t>(n));
        double max = -1e300, sum = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          const float* k = projections.data() + ((c.heads + hd) * n + j) * d;
          double s = 0;
          for (std::int64_t e = 0; e < d; ++e) s += static_cast<double>(q[e]) * k[e];
          logits[j] = s * scale;
          max = std::max(max, logits[j]);
        }
        for (std::int64_t j = 0; j < n; ++j) {
          const bool seen = reference::visible(mask, {c.heads, n, n, d, d}, hd, n - 1, j);
          sum += (logits[j] = seen ? std::exp(logits[j] - max) : 0.0);
        }
        for (std::int64_t j = 0; j < n; ++j) {
          const float w = attention[((l * c.heads + hd) * n + (n - 1)) * n + j];
          CHECK(std::fabs(w - logits[j] / sum) < 1e-5);
        }
      }
    }
  }
  const Transformer neo(tiny(Architecture::kGptNeo));
  CHECK(neo.attention_scale(0) == 1.0f);
  CHECK_THROWS_AS(neo.attention_scale(3), RangeError);
}

TEST_CASE("the forward pass gives the same bits on any number of threads", "[models][threads]") {
  for (Architecture arch : {Architecture::kGpt2, Architecture::kBert}) {
    TransformerConfig c = tiny(arch);
    c.hidden = 48;  // wide enough that q/k/v and the MLP split into several column blocks
    c.heads = 4;
    c.intermediate = 600;
    c.vocab = 1100;  // several vocabulary blocks in the head
    Transformer model(c);
    write_weights(model, make_checkpoint(model, 41));
    const auto ids = random_ids(17, c.vocab, 42);
    ForwardOptions one, several;
    several.threads = 3;
    const Run a = run(model, ids, {}, one), b = run(model, ids, {}, several);
    INFO(arch_name(arch));
    CHECK(std::memcmp(a.attention.data(), b.attention.data(), a.attention.size() * 4) == 0);
    CHECK(std::memcmp(a.logits.data(), b.logits.data(), a.logits.size() * 4) == 0);
    CHECK(std::memcmp(a.hidden.data(), b.hidden.data(), a.hidden.size() * 4) == 0);
  }
}

TEST_CASE("model configs are validated, and too large a model is refused before allocating",
          "[models][errors]") {
  const auto parameter_of = [](const TransformerConfig& c, std::int64_t limit = 0) {
    try {
      Transformer model(c, limit);
    } catch (const Error& e) {
      return e.parameter() + (dynamic_cast<const RangeError*>(&e) ? " range" : " other") + ": " +
             e.what();
    }
    return std::string("no error");
  };
  TransformerConfig c = tiny(Architecture::kGpt2);
  c.heads = 5;  // 24 is no multiple of 5
  CHECK(parameter_of(c).rfind("heads range", 0) == 0);
  c = tiny(Architecture::kGpt2);
  c.layers = 0;
  CHECK(parameter_of(c).rfind("layers range", 0) == 0);
  c = tiny(Architecture::kGptNeo);
  c.local_windows = {0, 4};
  CHECK(parameter_of(c).rfind("local_windows range", 0) == 0);
  c = tiny(Architecture::kBert);
  c.token_types = 0;
  CHECK(parameter_of(c).rfind("token_types range", 0) == 0);
  c = tiny(Architecture::kBert);
  c.layer_norm_eps = 0.0f;
  CHECK(parameter_of(c).rfind("layer_norm_eps range", 0) == 0);
  for (const Architecture arch :
       {Architecture::kGptNeo, Architecture::kBert, Architecture::kLlama}) {
    c = tiny(arch);
    c.final_norm = false;
    CHECK(parameter_of(c).rfind("final_norm other", 0) == 0);
  }

  // GPT-2 small's shape at f32: 124M parameters, ~475 MiB. A 100 MiB limit refuses it and says
  // how much it needs; f16 storage is suggested.
  c = tiny(Architecture::kGpt2);
  c.layers = 12;
  c.heads = 12;
  c.hidden = 768;
  c.intermediate = 3072;
  c.vocab = 50257;
  c.max_positions = 1024;
  const ModelSize size = model_size(c);
  CHECK(size.parameters == 124439808);
  const std::string refused = parameter_of(c, 100 << 20);
  INFO(refused);
  CHECK(refused.rfind("model range", 0) == 0);
  CHECK(refused.find("124439808 parameters") != std::string::npos);
  CHECK(refused.find("100.0 MiB") != std::string::npos);
  CHECK(refused.find("f16") != std::string::npos);
  // The same check without building the model: the sizes when it fits, the error when not.
  CHECK(require_model_fits(c, std::int64_t{1} << 30).parameters == 124439808);
  CHECK_THROWS_AS(require_model_fits(c, 100 << 20), RangeError);
  // Dimensions whose products do not fit are refused too.
  c.vocab = 2147483647;
  c.hidden = 2147483647 / 12 * 12;
  CHECK(parameter_of(c, 100 << 20) != "no error");
}

TEST_CASE("bad inputs to forward() name the problem and leave the model usable",
          "[models][errors]") {
  const TransformerConfig c = tiny(Architecture::kGpt2);
  Transformer model(c);
  const auto too_early = random_ids(3, c.vocab, 1);
  CHECK_THROWS_AS(model.forward({too_early, {}}, {}, {}), InvalidArgumentError);
  write_weights(model, make_checkpoint(model, 51));
  CHECK_THROWS_AS(model.finalize(), InvalidArgumentError);
  CHECK_THROWS_AS(model.weight_data(0), InvalidArgumentError);

  const auto message_of = [&](const std::vector<std::int32_t>& ids, const ForwardOptions& o,
                              const ForwardOutputs& out) {
    try {
      model.forward({ids, {}}, o, out);
    } catch (const Error& e) {
      return e.parameter() + ": " + e.what();
    }
    return std::string("no error");
  };
  const auto long_text = random_ids(c.max_positions + 1, c.vocab, 2);
  CHECK(message_of(long_text, {}, {}).find("21 tokens are more than the model's 20 positions") !=
        std::string::npos);
  std::vector<std::int32_t> ids = random_ids(4, c.vocab, 3);
  ids[2] = static_cast<std::int32_t>(c.vocab);
  CHECK(message_of(ids, {}, {}).rfind("token_ids", 0) == 0);
  ids[2] = 0;
  std::vector<float> wrong(5);
  CHECK(message_of(ids, {}, {wrong, {}, {}, {}, {}}).rfind("attention", 0) == 0);
  ForwardOptions positions;
  positions.logit_positions = {4};
  CHECK(message_of(ids, positions, {}).rfind("logit_positions", 0) == 0);
  ForwardOptions two_masks;
  two_masks.masks.resize(2);
  CHECK(message_of(ids, two_masks, {}).rfind("masks", 0) == 0);
  std::vector<std::int32_t> types(4, 0);
  CHECK_THROWS_AS(model.forward({ids, types}, {}, {}), InvalidArgumentError);
  ForwardOptions layer;
  layer.projections_layer = c.layers;  // one past the last
  std::vector<float> projections(3 * 4 * static_cast<std::size_t>(c.hidden));
  CHECK(message_of(ids, layer, {{}, {}, {}, {}, projections}).rfind("projections_layer", 0) == 0);
  layer.projections_layer = 1;
  CHECK(message_of(ids, layer, {}).rfind("projections", 0) == 0);
  CHECK(message_of(ids, layer, {{}, {}, {}, {}, wrong}).rfind("projections", 0) == 0);
  CHECK(message_of(ids, layer, {{}, {}, {}, {}, projections}) == "no error");
  // Still usable.
  check_against_reference(model, make_checkpoint(model, 51), ids, {}, {});
}

TEST_CASE("finalize() names a weight by the name its source gives", "[models][errors]") {
  Transformer model(tiny(Architecture::kGpt2));
  std::vector<std::string> names;
  for (const WeightInfo& w : model.weights()) names.push_back("checkpoint." + w.name);
  CHECK_THROWS_AS(model.finalize({"one"}), InvalidArgumentError);
  for (std::size_t i = 0; i < model.weights().size(); ++i) {
    auto* data = static_cast<float*>(model.weight_data(static_cast<std::int64_t>(i)));
    std::fill(data, data + model.weights()[i].elements, 0.5f);
    if (i == 3) data[2] = std::numeric_limits<float>::infinity();
  }
  const std::string expected = "checkpoint." + model.weights()[3].name;
  try {
    model.finalize(names);
    FAIL("finalize accepted a non-finite weight");
  } catch (const NonFiniteError& e) {
    CHECK(e.parameter() == expected);
    CHECK(std::string(e.what()) ==
          expected + ": " + expected + "[2] is +Infinity; inputs must be finite");
  }
}

TEST_CASE("weights that are not finite are refused by finalize(), naming the tensor",
          "[models][errors]") {
  for (WeightDtype dtype : {WeightDtype::kF32, WeightDtype::kF16}) {
    TransformerConfig c = tiny(Architecture::kBert);
    c.matrix_dtype = dtype;
    Transformer model(c);
    const Checkpoint ckpt = make_checkpoint(model, 61);
    for (std::size_t i = 0; i < model.weights().size(); ++i) {
      const WeightInfo& w = model.weights()[i];
      void* data = model.weight_data(static_cast<std::int64_t>(i));
      write_weight(w, ckpt.values.at(w.name), data);
      if (w.name == "layers.1.attention.key.weight") {
        if (w.dtype == WeightDtype::kF16) {
          static_cast<std::uint16_t*>(data)[7] = 0x7c00;  // +Infinity
        } else {
          static_cast<float*>(data)[7] = std::nanf("");
        }
      }
    }
    try {
      model.finalize();
      FAIL("finalize accepted a non-finite weight");
    } catch (const NonFiniteError& e) {
      CHECK(e.parameter() == "layers.1.attention.key.weight");
      CHECK(std::string(e.what()).find("[7]") != std::string::npos);
    }
  }
}
