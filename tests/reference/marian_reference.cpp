// Marian (MarianMTModel) in double precision, written from the transformers library's
// modeling_marian.py and sharing no code with src/models/: embeddings times sqrt(hidden) plus the
// position table, post-LN encoder layers (self-attention, MLP), post-LN decoder layers (causal
// self-attention, cross-attention over the encoder's output, MLP), SiLU, no final norm, logits
// through the shared embeddings plus final_logits_bias. Tests only.
#include <cmath>
#include <stdexcept>

#include "reference/transformer_reference.h"

namespace attnlens::reference {
namespace {

using Matrix = std::vector<double>;
using models::TransformerConfig;

const Matrix& get(const std::map<std::string, Matrix>& w, const std::string& name) {
  const auto it = w.find(name);
  if (it == w.end()) throw std::runtime_error("marian reference: missing " + name);
  return it->second;
}

Matrix embed(const TransformerConfig& c, const std::map<std::string, Matrix>& w,
             const std::vector<std::int32_t>& ids) {
  const std::int64_t h = c.hidden;
  const double scale = c.scale_embedding ? std::sqrt(static_cast<double>(h)) : 1.0;
  const Matrix& tokens = get(w, "token_embedding");
  const Matrix& positions = get(w, "position_embedding");
  Matrix x(ids.size() * static_cast<std::size_t>(h));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    for (std::int64_t j = 0; j < h; ++j) {
      x[i * h + j] = tokens[ids[i] * h + j] * scale + positions[i * h + j];
    }
  }
  return x;
}

// x = ln(x + block), the post-LN residual.
void add_and_norm(Matrix& x, const Matrix& block, std::int64_t n, const TransformerConfig& c,
                  const std::map<std::string, Matrix>& w, const std::string& norm) {
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += block[i];
  x = layer_norm(x, n, c.hidden, get(w, norm + ".weight"), get(w, norm + ".bias"),
                 c.layer_norm_eps);
}

CrossAttentionWeights attention_weights(const std::map<std::string, Matrix>& w,
                                        const std::string& p) {
  return {&get(w, p + ".query.weight"),  &get(w, p + ".query.bias"),   &get(w, p + ".key.weight"),
          &get(w, p + ".key.bias"),      &get(w, p + ".value.weight"), &get(w, p + ".value.bias"),
          &get(w, p + ".output.weight"), &get(w, p + ".output.bias")};
}

// One attention block (self: memory = x); its weights into `weights`.
Matrix attend(const TransformerConfig& c, const std::map<std::string, Matrix>& w,
              const std::string& p, const Matrix& x, std::int64_t n, const Matrix& memory,
              std::int64_t m, bool causal, double* weights) {
  const std::int64_t h = c.hidden, d = h / c.heads;
  const CrossAttentionWeights a = attention_weights(w, p);
  const Matrix q = linear(x, n, h, h, *a.wq, a.bq, false);
  const Matrix k = linear(memory, m, h, h, *a.wk, a.bk, false);
  const Matrix v = linear(memory, m, h, h, *a.wv, a.bv, false);
  LayerShape shape{c.heads, c.heads, n, d, m};
  const Matrix context = layer_attention(
      q, k, v, shape, 1.0 / std::sqrt(static_cast<double>(d)),
      [&](std::int64_t, std::int64_t i, std::int64_t j) { return !causal || j <= i; }, weights);
  return linear(context, n, h, h, *a.wo, a.bo, false);
}

void mlp(const TransformerConfig& c, const std::map<std::string, Matrix>& w, const std::string& p,
         Matrix& x, std::int64_t n) {
  Matrix hidden = linear(x, n, c.hidden, c.intermediate, get(w, p + "mlp.input.weight"),
                         &get(w, p + "mlp.input.bias"), false);
  for (double& v : hidden) v = v / (1.0 + std::exp(-v));  // SiLU ("swish")
  add_and_norm(x,
               linear(hidden, n, c.intermediate, c.hidden, get(w, p + "mlp.output.weight"),
                      &get(w, p + "mlp.output.bias"), false),
               n, c, w, p + "mlp_norm");
}

}  // namespace

EncoderDecoderResult marian_transformer(const TransformerConfig& c,
                                        const std::map<std::string, Matrix>& w,
                                        const std::vector<std::int32_t>& source,
                                        const std::vector<std::int32_t>& target) {
  const auto n = static_cast<std::int64_t>(source.size());
  const auto t = static_cast<std::int64_t>(target.size());
  const std::int64_t heads = c.heads, encoder_layers = c.encoder_layers;
  const std::int64_t decoder_layers = c.layers - encoder_layers;
  EncoderDecoderResult r;
  r.encoder_attention.resize(static_cast<std::size_t>(encoder_layers * heads * n * n));
  r.decoder_attention.resize(static_cast<std::size_t>(decoder_layers * heads * t * t));
  r.cross_attention.resize(static_cast<std::size_t>(decoder_layers * heads * t * n));

  Matrix x = embed(c, w, source);
  for (std::int64_t l = 0; l < encoder_layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    add_and_norm(x,
                 attend(c, w, p + "attention", x, n, x, n, false,
                        r.encoder_attention.data() + l * heads * n * n),
                 n, c, w, p + "attention_norm");
    mlp(c, w, p, x, n);
  }
  const Matrix encoder = x;

  Matrix y = embed(c, w, target);
  r.hidden = y;
  for (std::int64_t i = 0; i < decoder_layers; ++i) {
    const std::string p = "layers." + std::to_string(encoder_layers + i) + ".";
    add_and_norm(y,
                 attend(c, w, p + "attention", y, t, y, t, true,
                        r.decoder_attention.data() + i * heads * t * t),
                 t, c, w, p + "attention_norm");
    add_and_norm(y,
                 attend(c, w, p + "cross_attention", y, t, encoder, n, false,
                        r.cross_attention.data() + i * heads * t * n),
                 t, c, w, p + "cross_attention_norm");
    mlp(c, w, p, y, t);
    r.hidden.insert(r.hidden.end(), y.begin(), y.end());
  }
  const Matrix& embedding = get(w, "token_embedding");
  const Matrix& bias = get(w, "final_logits_bias");
  r.logits.resize(static_cast<std::size_t>(t * c.vocab));
  for (std::int64_t i = 0; i < t; ++i) {
    for (std::int64_t v = 0; v < c.vocab; ++v) {
      double dot = bias[v];
      for (std::int64_t j = 0; j < c.hidden; ++j)
        dot += y[i * c.hidden + j] * embedding[v * c.hidden + j];
      r.logits[i * c.vocab + v] = dot;
    }
  }
  return r;
}

}  // namespace attnlens::reference
