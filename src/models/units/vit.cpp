// Vision transformers (ViTForImageClassification, ViTModel: ViT, DeiT as ViT, DINO; Dinov2Model):
//   x = [cls; unfold(pixels) W_patch + b] + positions
//   x += s1 * attn(ln_before(x));  x += s2 * mlp(ln_after(x))   (s1, s2: DINOv2's layer scale,
//                                                                 1 for ViT)
//   x = layernorm(x);  logits = classifier(x[0])
// no mask, scores scaled by 1/sqrt(head_dim), GELU (erf) in the MLP.
//
// The patch embedding is the checkpoint's Conv2d (kernel = stride = patch) computed as a GEMM:
// each patch unfolded into a row of channels * patch^2 pixels in the weight's own order
// (channel, then row, then column), times the weight read as a linear layer [hidden, C*P*P].
// DINOv2 runs at any grid: its trained grid of position embeddings is resized to the image's
// with bicubic interpolation, as torch.nn.functional.interpolate(mode="bicubic",
// align_corners=False) does in the transformers library's Dinov2Embeddings; DINOv2 with
// registers resizes with antialias=True (torch's separable filter whose support grows with the
// downscale, a = -0.5), and puts its register tokens, which have no position, after the class
// token: x = [cls + pos_0; registers; patches + pos].
#include <algorithm>
#include <cmath>
#include <vector>

#include "models/packing.h"
#include "models/units/unit.h"

namespace attnlens::models {
namespace {

void add_weights(const TransformerConfig& c, TableBuilder& t) {
  const std::int64_t g = c.layers, h = c.hidden;
  const std::int64_t patch_pixels = c.channels * c.patch_size * c.patch_size;
  t.add(g, kClassToken, "class_token", {1, 1, h});
  t.add(g, kPositionEmbedding, "position_embedding", {1, c.max_positions, h});
  if (c.registers > 0) t.add(g, kRegisterTokens, "register_tokens", {1, c.registers, h});
  t.linear(g, kPatchWeight, kPatchBias, "patch_embedding", patch_pixels, h, false);
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    t.norm(l, kAttentionNormWeight, kAttentionNormBias, p + "attention_norm");
    t.linear(l, kQueryWeight, kQueryBias, p + "attention.query", h, h, false, true);
    t.linear(l, kKeyWeight, kKeyBias, p + "attention.key", h, h, false, true);
    t.linear(l, kValueWeight, kValueBias, p + "attention.value", h, h, false, true);
    t.linear(l, kAttentionOutWeight, kAttentionOutBias, p + "attention.output", h, h, false);
    if (c.layer_scale) t.add(l, kLayerScaleAttention, p + "attention_scale.weight", {h});
    t.norm(l, kMlpNormWeight, kMlpNormBias, p + "mlp_norm");
    t.linear(l, kMlpInWeight, kMlpInBias, p + "mlp.input", h, c.intermediate, false);
    t.linear(l, kMlpOutWeight, kMlpOutBias, p + "mlp.output", c.intermediate, h, false);
    if (c.layer_scale) t.add(l, kLayerScaleMlp, p + "mlp_scale.weight", {h});
  }
  t.norm(g, kFinalNormWeight, kFinalNormBias, "final_norm");
  if (c.lm_head) {  // read in place like llama's lm_head (forward.cpp's logits), not packed
    t.add(g, kLmHead, "classifier.weight", {c.vocab, h});
    t.add(g, kHeadBias, "classifier.bias", {c.vocab});
  }
}

// torch's cubic convolution weights (A = -0.75) for the four taps around a point t in [0, 1).
void cubic_weights(double t, double w[4]) {
  const double a = -0.75;
  const auto near = [a](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
  const auto far = [a](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

// For each of `out` positions, its first tap (may be outside 0..in-1: clamped when read) and
// weights: source = (i + 0.5) * in / out - 0.5, with no clamping of the source itself (torch's
// cubic source index).
void cubic_taps(std::int64_t in, std::int64_t out, std::vector<std::int64_t>& first,
                std::vector<double>& weights) {
  first.resize(static_cast<std::size_t>(out));
  weights.resize(static_cast<std::size_t>(out * 4));
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  for (std::int64_t i = 0; i < out; ++i) {
    const double source = (static_cast<double>(i) + 0.5) * scale - 0.5;
    const double floor = std::floor(source);
    first[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(floor) - 1;
    cubic_weights(source - floor, weights.data() + i * 4);
  }
}

// One direction of a resize: for each output, the inputs it reads and their weights. Sparse, so
// the work is bounded by the taps (about 4 per output up, 4 * in / out down), never in * out:
// a checkpoint's grid may be large.
struct Tap {
  std::int64_t index;
  double weight;
};
using ResizeTaps = std::vector<std::vector<Tap>>;

// torch's plain bicubic: four taps around the source point, each index clamped to the edge.
ResizeTaps cubic_resize(std::int64_t in, std::int64_t out) {
  std::vector<std::int64_t> first;
  std::vector<double> weights;
  cubic_taps(in, out, first, weights);
  ResizeTaps taps(static_cast<std::size_t>(out));
  for (std::int64_t i = 0; i < out; ++i) {
    for (std::int64_t k = 0; k < 4; ++k) {
      const std::int64_t x =
          std::min(std::max(first[static_cast<std::size_t>(i)] + k, std::int64_t{0}), in - 1);
      taps[static_cast<std::size_t>(i)].push_back(
          {x, weights[static_cast<std::size_t>(i * 4 + k)]});
    }
  }
  return taps;
}

// torch's antialiased bicubic (a = -0.5): Pillow's scheme in floating point; the filter is
// stretched by the downscale factor, taps outside the input are dropped and the weights
// renormalised.
ResizeTaps antialiased_resize(std::int64_t in, std::int64_t out) {
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  const double support = scale >= 1.0 ? 2.0 * scale : 2.0;
  const double inverse = scale >= 1.0 ? 1.0 / scale : 1.0;
  const auto filter = [](double x) {
    const double a = -0.5, t = std::abs(x);
    if (t < 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2) return (((t - 5) * t + 8) * t - 4) * a;
    return 0.0;
  };
  ResizeTaps taps(static_cast<std::size_t>(out));
  for (std::int64_t i = 0; i < out; ++i) {
    const double center = scale * (static_cast<double>(i) + 0.5);
    const auto xmin = std::max(static_cast<std::int64_t>(center - support + 0.5), std::int64_t{0});
    const std::int64_t xmax = std::min(static_cast<std::int64_t>(center + support + 0.5), in);
    std::vector<Tap>& row = taps[static_cast<std::size_t>(i)];
    double total = 0;
    for (std::int64_t x = xmin; x < xmax; ++x) {
      row.push_back({x, filter((static_cast<double>(x) - center + 0.5) * inverse)});
      total += row.back().weight;
    }
    if (total != 0) {
      for (Tap& tap : row) tap.weight /= total;
    }
  }
  return taps;
}

// The trained grid of patch position embeddings [grid * grid, h] resized to rows x columns,
// separably.
void interpolate_positions(const float* grid_rows, std::int64_t grid, std::int64_t h,
                           std::int64_t rows, std::int64_t columns, bool antialias, float* out,
                           std::int64_t out_stride) {
  const ResizeTaps y = antialias ? antialiased_resize(grid, rows) : cubic_resize(grid, rows);
  const ResizeTaps x = antialias ? antialiased_resize(grid, columns) : cubic_resize(grid, columns);
  std::vector<double> sum(static_cast<std::size_t>(h));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < columns; ++c) {
      std::fill(sum.begin(), sum.end(), 0.0);
      for (const Tap& ty : y[static_cast<std::size_t>(r)]) {
        for (const Tap& tx : x[static_cast<std::size_t>(c)]) {
          const double w = ty.weight * tx.weight;
          const float* e = grid_rows + (ty.index * grid + tx.index) * h;
          for (std::int64_t k = 0; k < h; ++k) sum[static_cast<std::size_t>(k)] += w * e[k];
        }
      }
      float* dst = out + (r * columns + c) * out_stride;
      for (std::int64_t k = 0; k < h; ++k) {
        dst[k] = static_cast<float>(sum[static_cast<std::size_t>(k)]);
      }
    }
  }
}

// Patches unfolded into rows [rows * columns, C * P * P] in the weight's order (channel, row,
// column), times the patch weight, into `out` (rows of hidden).
void embed_patches(ForwardPass& p, const ForwardInputs& in, PatchGrid grid, float* out) {
  const TransformerConfig& c = p.config;
  const std::int64_t size = c.patch_size, patches = grid.rows * grid.columns;
  const std::int64_t depth = c.channels * size * size;
  std::vector<float> unfolded(static_cast<std::size_t>(patches * depth));
  const std::int64_t plane = in.image_height * in.image_width;
  for (std::int64_t pr = 0; pr < grid.rows; ++pr) {
    for (std::int64_t pc = 0; pc < grid.columns; ++pc) {
      float* row = unfolded.data() + (pr * grid.columns + pc) * depth;
      for (std::int64_t ch = 0; ch < c.channels; ++ch) {
        for (std::int64_t y = 0; y < size; ++y) {
          const float* src =
              in.pixels.data + ch * plane + (pr * size + y) * in.image_width + pc * size;
          std::copy(src, src + size, row + (ch * size + y) * size);
        }
      }
    }
  }
  RowPanels panels;
  pack_rows(unfolded.data(), patches, depth, panels);
  p.note_threads(linear(p.ctx, panels, p.views.packed(c.layers, kPatchWeight),
                        p.views.vector(c.layers, kPatchBias), out, p.hidden));
}

void embed(ForwardPass& p, const ForwardInputs& in) {
  const TransformerConfig& c = p.config;
  const std::int64_t h = p.hidden, registers = c.registers;
  const PatchGrid grid = patch_grid(c, in);
  float* x = p.x.data();
  embed_patches(p, in, grid, x + (1 + registers) * h);
  const float* cls = p.views.vector(c.layers, kClassToken);
  std::copy(cls, cls + h, x);
  // Position rows: the class token's, then the patches' (the trained grid or resized).
  const float* positions = p.views.vector(c.layers, kPositionEmbedding);
  const std::int64_t patches = grid.rows * grid.columns;
  std::vector<float> resized;
  const float* patch_positions = positions + h;
  if (grid.rows != c.image_grid || grid.columns != c.image_grid) {  // only when it interpolates
    resized.resize(static_cast<std::size_t>(patches * h));
    interpolate_positions(positions + h, c.image_grid, h, grid.rows, grid.columns,
                          c.antialias_positions, resized.data(), h);
    patch_positions = resized.data();
  }
  for (std::int64_t k = 0; k < h; ++k) x[k] += positions[k];
  float* patch_rows = x + (1 + registers) * h;
  for (std::int64_t j = 0; j < patches * h; ++j) patch_rows[j] += patch_positions[j];
  if (registers > 0) {  // after the positions: registers have none
    const float* tokens = p.views.vector(c.layers, kRegisterTokens);
    std::copy(tokens, tokens + registers * h, x + h);
  }
}

// x += scale * block_out (scale null: 1).
void add_scaled_block_output(ForwardPass& p, const float* scale) {
  if (!scale) return add_block_output(p);
  const std::int64_t h = p.hidden;
  for (std::int64_t i = 0; i < p.n; ++i) {
    float* x = p.x.data() + i * h;
    const float* b = p.block_out.data() + i * h;
    for (std::int64_t k = 0; k < h; ++k) x[k] += b[k] * scale[k];
  }
}

void layer(ForwardPass& p, std::int64_t l) {
  const LayerView w = p.views.layer(l);
  normalize(p, NormKind::kLayerNorm, w.attention_norm, p.x.data(), p.normed.data());
  self_attention(p, w.attention, l, p.normed.data());
  add_scaled_block_output(p, p.views.vector(l, kLayerScaleAttention));
  normalize(p, NormKind::kLayerNorm, w.mlp_norm, p.x.data(), p.normed.data());
  feed_forward(p, MlpKind::kPlain, activation_of(p), w, p.normed.data());
  add_scaled_block_output(p, p.views.vector(l, kLayerScaleMlp));
}

void finish(ForwardPass& p) { final_norm(p, NormKind::kLayerNorm); }

// The classifier reads the class token's row as it is; its bias is the head's.
const float* classifier_bias(ForwardPass& p, std::vector<float>&, std::int64_t) {
  return p.views.vector(p.config.layers, kHeadBias);
}

MaskSpec no_mask(const TransformerConfig&, std::int64_t) { return {}; }

}  // namespace

const ModelUnit kVitUnit = {
    "vit",        // name
    add_weights,  // add_weights
    {{
        "encoder",              // name
        all_layers,             // layers
        MlpKind::kPlain,        // mlp
        false,                  // rotary
        false,                  // causal
        embed,                  // embed
        layer,                  // layer
        finish,                 // finish
        true,                   // hidden_after_finish
        no_mask,                // layer_mask
        inverse_sqrt_head_dim,  // attention_scale
    }},
    classifier_bias,  // head_transform
};

}  // namespace attnlens::models
