// The vision unit (src/models/units/vit.cpp) on what its embeddings must be, computed here in
// double from the checkpoint values: the patch embedding is the checkpoint's convolution over
// whole patches (a remainder of pixels dropped), the class token and position embeddings are
// added, DINOv2's register tokens sit after the class token with no position, and a resized
// position grid keeps a constant grid constant (the filters' weights sum to one). Then every
// attention row sums to one, and bad pixels get errors naming them. The whole pass against the
// transformers library is checked in web/test/models-vision.test.js (torch reference).
#include <cmath>
#include <limits>
#include <vector>

#include "attnlens/models/kv_cache.h"
#include "error_checks.h"
#include "models_test_util.h"

using namespace attnlens;
using namespace attnlens::models;
using namespace attnlens_test;

namespace {

TransformerConfig vit_config(bool dinov2) {
  TransformerConfig c;
  c.architecture = Architecture::kVit;
  c.layers = 2;
  c.heads = 2;
  c.hidden = 8;
  c.intermediate = 12;
  c.vocab = 5;  // labels
  c.patch_size = 3;
  c.channels = 3;
  c.image_grid = 2;
  c.max_positions = 5;
  c.layer_norm_eps = 1e-12f;
  c.activation = Activation::kGeluErf;
  c.lm_head = !dinov2;
  if (dinov2) {
    c.layer_scale = true;
    c.interpolate_positions = true;
    c.registers = 2;
    c.antialias_positions = true;
  }
  return c;
}

struct Picture {
  std::vector<float> pixels;
  std::int64_t height, width;
};

Picture random_picture(std::int64_t height, std::int64_t width, std::uint32_t seed) {
  Rng rng(seed);
  Picture p{std::vector<float>(static_cast<std::size_t>(3 * height * width)), height, width};
  for (float& v : p.pixels) v = static_cast<float>(rng.integer(-4096, 4096)) / 2048.0f;
  return p;
}

struct VisionRun {
  std::vector<float> attention, hidden;
  std::int64_t n;
};

VisionRun run_picture(const Transformer& model, const Picture& p) {
  const TransformerConfig& c = model.config();
  ForwardInputs in;
  in.pixels = FloatView(p.pixels);
  in.image_height = p.height;
  in.image_width = p.width;
  VisionRun r;
  r.n = sequence_length(c, in);
  r.attention.resize(static_cast<std::size_t>(c.layers * c.heads * r.n * r.n));
  r.hidden.resize(static_cast<std::size_t>((c.layers + 1) * r.n * c.hidden));
  model.forward(in, {}, {r.attention, {}, r.hidden, {}, {}});
  return r;
}

// Embedding row `row` (hidden values) of state 0 against `expected`.
void check_row(const VisionRun& r, std::int64_t hidden, std::int64_t row,
               const std::vector<double>& expected) {
  for (std::int64_t k = 0; k < hidden; ++k) {
    const double got = r.hidden[static_cast<std::size_t>(row * hidden + k)];
    INFO("row " << row << " column " << k);
    CHECK(std::fabs(got - expected[static_cast<std::size_t>(k)]) <=
          1e-4 + 1e-4 * std::fabs(expected[static_cast<std::size_t>(k)]));
  }
}

}  // namespace

TEST_CASE("vit: the patch embedding is the convolution, plus class token and positions",
          "[models]") {
  const TransformerConfig c = vit_config(false);
  Transformer model(c);
  const Checkpoint ckpt = make_checkpoint(model, 11);
  write_weights(model, ckpt);
  // 7 x 8 pixels: two whole 3-pixel patches each way, the last row and columns dropped.
  const Picture p = random_picture(7, 8, 12);
  const VisionRun r = run_picture(model, p);
  REQUIRE(r.n == 5);
  const auto& w = ckpt.values.at("patch_embedding.weight");  // [hidden, C, P, P]
  const auto& b = ckpt.values.at("patch_embedding.bias");
  const auto& pos = ckpt.values.at("position_embedding");
  const auto& cls = ckpt.values.at("class_token");
  const std::int64_t h = c.hidden, size = c.patch_size;
  std::vector<double> expected(static_cast<std::size_t>(h));
  for (std::int64_t k = 0; k < h; ++k) expected[k] = cls[k] + pos[k];
  check_row(r, h, 0, expected);
  for (std::int64_t pr = 0; pr < 2; ++pr) {
    for (std::int64_t pc = 0; pc < 2; ++pc) {
      const std::int64_t row = 1 + pr * 2 + pc;
      for (std::int64_t k = 0; k < h; ++k) {
        double sum = b[k] + pos[row * h + k];
        for (std::int64_t ch = 0; ch < 3; ++ch) {
          for (std::int64_t y = 0; y < size; ++y) {
            for (std::int64_t x = 0; x < size; ++x) {
              const double pixel =
                  p.pixels[(ch * p.height + pr * size + y) * p.width + pc * size + x];
              sum += w[((k * 3 + ch) * size + y) * size + x] * pixel;
            }
          }
        }
        expected[k] = sum;
      }
      check_row(r, h, row, expected);
    }
  }
  // Every attention row is a distribution over the 5 tokens.
  for (std::size_t row = 0; row < r.attention.size() / 5; ++row) {
    double total = 0;
    for (std::size_t j = 0; j < 5; ++j) total += r.attention[row * 5 + j];
    CHECK(std::fabs(total - 1.0) < 1e-5);
  }
}

TEST_CASE("vit: DINOv2's registers follow the class token; a resized grid stays constant",
          "[models]") {
  const TransformerConfig c = vit_config(true);
  Transformer model(c);
  Checkpoint ckpt = make_checkpoint(model, 21);
  // Every patch position the same vector: any resize whose weights sum to one keeps it.
  auto& pos = ckpt.values.at("position_embedding");
  const std::int64_t h = c.hidden;
  for (std::int64_t row = 2; row < c.max_positions; ++row) {
    for (std::int64_t k = 0; k < h; ++k) pos[row * h + k] = pos[h + k];
  }
  write_weights(model, ckpt);
  // 3 x 5 patches from a 2 x 2 trained grid (up in both directions, unevenly).
  const Picture p = random_picture(9, 15, 22);
  const VisionRun r = run_picture(model, p);
  REQUIRE(r.n == 1 + 2 + 15);
  const auto& registers = ckpt.values.at("register_tokens");
  for (std::int64_t i = 0; i < 2; ++i) {
    check_row(r, h, 1 + i,
              std::vector<double>(registers.begin() + i * h, registers.begin() + (i + 1) * h));
  }
  // Patch rows minus the no-position embedding of the same picture at the trained grid's
  // position: every patch's position part equals the constant.
  const Picture flat{std::vector<float>(p.pixels.size(), 0.0f), p.height, p.width};
  const VisionRun zero = run_picture(model, flat);
  const auto& b = ckpt.values.at("patch_embedding.bias");
  for (std::int64_t row = 3; row < r.n; ++row) {
    std::vector<double> expected(static_cast<std::size_t>(h));
    for (std::int64_t k = 0; k < h; ++k) expected[k] = b[k] + pos[h + k];
    check_row(zero, h, row, expected);
  }
}

TEST_CASE("vit: bad pixels are errors naming them", "[models]") {
  const TransformerConfig c = vit_config(false);
  Transformer model(c);
  write_weights(model, make_checkpoint(model, 31));
  Picture p = random_picture(6, 6, 32);
  std::vector<float> attention(static_cast<std::size_t>(c.layers * c.heads * 25));
  const auto forward = [&](const ForwardInputs& in) {
    model.forward(in, {}, {attention, {}, {}, {}, {}});
  };
  ForwardInputs in;
  in.pixels = FloatView(p.pixels);
  in.image_height = 6;
  in.image_width = 6;
  forward(in);  // the trained 2 x 2 grid runs
  const std::vector<std::int32_t> ids = {1, 2};
  ForwardInputs tokens = in;
  tokens.token_ids = ids;
  CHECK_THROWS_AS(forward(tokens), InvalidArgumentError);
  ForwardInputs short_pixels = in;
  short_pixels.image_width = 7;  // 3 * 6 * 7 values expected
  CHECK_THROWS_AS(forward(short_pixels), ShapeError);
  ForwardInputs tiny = in;
  tiny.image_height = 2;  // smaller than a patch
  CHECK_THROWS_AS(forward(tiny), RangeError);
  Picture wide = random_picture(6, 9, 33);  // 2 x 3 patches: ViT runs at its trained grid only
  ForwardInputs other = in;
  other.pixels = FloatView(wide.pixels);
  other.image_width = 9;
  CHECK_THROWS_AS(forward(other), RangeError);
  p.pixels[17] = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_AS(forward(in), NonFiniteError);
}

TEST_CASE("vit and Marian: each refuses the other's inputs, settings and a KV cache by name",
          "[models]") {
  const TransformerConfig c = vit_config(false);
  Transformer vit(c);
  write_weights(vit, make_checkpoint(vit, 34));
  const Picture p = random_picture(6, 6, 35);
  ForwardInputs image;
  image.pixels = FloatView(p.pixels);
  image.image_height = 6;
  image.image_width = 6;
  const std::vector<std::int32_t> ids = {1, 2, 3};
  ForwardInputs with_decoder = image;
  with_decoder.decoder_token_ids = ids;
  check_error<InvalidArgumentError>([&] { vit.forward(with_decoder, {}, {}); },
                                    "decoder_token_ids");
  ForwardOptions surgery;
  surgery.cross_mask.kind = CrossMaskKind::kLast;
  check_error<InvalidArgumentError>([&] { vit.forward(image, surgery, {}); }, "cross_mask");
  check_error<InvalidArgumentError>([&] { KvCache refused(vit, 4); }, "model");
  TransformerConfig split = c;
  split.encoder_layers = 1;
  check_error<InvalidArgumentError>([&] { Transformer refused(split); }, "encoder_layers");

  TransformerConfig m = tiny(Architecture::kMarian);
  Transformer marian(m);
  write_weights(marian, make_checkpoint(marian, 36));
  ForwardInputs text;
  text.token_ids = ids;
  text.decoder_token_ids = ids;
  marian.forward(text, {}, {});  // runs
  ForwardInputs with_pixels = text;
  with_pixels.pixels = FloatView(p.pixels);
  check_error<InvalidArgumentError>([&] { marian.forward(with_pixels, {}, {}); }, "pixels");
  KvCache cache(marian, 8);  // the decoder is causal: Marian decodes against a cache
  ForwardOptions step;
  step.cache = &cache;
  marian.forward(text, step, {});
  CHECK(cache.length() == 3);
  m.patch_size = 2;
  check_error<InvalidArgumentError>([&] { Transformer refused(m); }, "patch_size");
}
