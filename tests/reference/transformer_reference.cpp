#include "reference/transformer_reference.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "reference/reference.h"

namespace attnlens::reference {
namespace {

using models::Architecture;
using models::TransformerConfig;
using Matrix = std::vector<double>;  // row-major, sizes passed alongside

const std::vector<double>& get(const std::map<std::string, std::vector<double>>& weights,
                               const std::string& name) {
  const auto it = weights.find(name);
  if (it == weights.end()) throw std::runtime_error("reference: missing weight " + name);
  return it->second;
}

}  // namespace

Matrix linear(const Matrix& x, std::int64_t n, std::int64_t in, std::int64_t out,
              const std::vector<double>& w, const std::vector<double>* b, bool conv1d) {
  Matrix y(static_cast<std::size_t>(n * out));
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t o = 0; o < out; ++o) {
      double s = b ? (*b)[o] : 0.0;
      for (std::int64_t p = 0; p < in; ++p) {
        s += x[i * in + p] * (conv1d ? w[p * out + o] : w[o * in + p]);
      }
      y[i * out + o] = s;
    }
  }
  return y;
}

Matrix layer_norm(const Matrix& x, std::int64_t n, std::int64_t h, const std::vector<double>& g,
                  const std::vector<double>& b, double eps) {
  Matrix y(x.size());
  for (std::int64_t i = 0; i < n; ++i) {
    double mean = 0, var = 0;
    for (std::int64_t j = 0; j < h; ++j) mean += x[i * h + j];
    mean /= static_cast<double>(h);
    for (std::int64_t j = 0; j < h; ++j) var += (x[i * h + j] - mean) * (x[i * h + j] - mean);
    var /= static_cast<double>(h);
    for (std::int64_t j = 0; j < h; ++j) {
      y[i * h + j] = (x[i * h + j] - mean) / std::sqrt(var + eps) * g[j] + b[j];
    }
  }
  return y;
}

void activation(Matrix& x, models::Activation act) {
  const double pi = 3.14159265358979323846;
  for (double& v : x) {
    if (act == models::Activation::kGeluErf) {
      v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    } else {
      v = 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (v + 0.044715 * v * v * v)));
    }
  }
}

namespace {

void add(Matrix& x, const Matrix& y) {
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += y[i];
}

// The layer's own visibility, straight from the modelling code: GPT-2's and GPT-Neo's global
// layers a lower triangle, GPT-Neo's local layers tril(ones) ^ tril(ones, -window), BERT all.
bool own_visible(const TransformerConfig& c, std::int64_t layer, std::int64_t i, std::int64_t j) {
  if (c.architecture == Architecture::kBert) return true;
  if (j > i) return false;
  const std::int64_t window =
      c.local_windows.empty() ? 0 : c.local_windows[static_cast<std::size_t>(layer)];
  return window == 0 || j > i - window;
}

}  // namespace

std::vector<double> layer_attention(const std::vector<double>& q, const std::vector<double>& k,
                                    const std::vector<double>& v, const LayerShape& s, double scale,
                                    const Visibility& visible, double* weights) {
  const std::int64_t n = s.n, d = s.head_dim, heads = s.heads, kv = s.kv_heads;
  const std::int64_t m = s.key_len > 0 ? s.key_len : n;
  std::vector<double> context(static_cast<std::size_t>(n * heads * d));
  for (std::int64_t hd = 0; hd < heads; ++hd) {
    const std::int64_t g = hd / (heads / kv);  // the K/V head this query head reads
    for (std::int64_t i = 0; i < n; ++i) {
      std::vector<double> logits(static_cast<std::size_t>(m));
      std::vector<bool> seen(static_cast<std::size_t>(m));
      double max = -std::numeric_limits<double>::infinity();
      for (std::int64_t j = 0; j < m; ++j) {
        seen[j] = visible(hd, i, j);
        if (!seen[j]) continue;
        double dot = 0;
        for (std::int64_t e = 0; e < d; ++e) {
          dot += q[(i * heads + hd) * d + e] * k[(j * kv + g) * d + e];
        }
        logits[j] = dot * scale;
        max = std::max(max, logits[j]);
      }
      double sum = 0;
      for (std::int64_t j = 0; j < m; ++j) {
        logits[j] = seen[j] ? std::exp(logits[j] - max) : 0.0;
        sum += logits[j];
      }
      for (std::int64_t j = 0; j < m; ++j) {
        const double p_ij = sum > 0 ? logits[j] / sum : 0.0;
        weights[(hd * n + i) * m + j] = p_ij;
        for (std::int64_t e = 0; e < d; ++e) {
          context[(i * heads + hd) * d + e] += p_ij * v[(j * kv + g) * d + e];
        }
      }
    }
  }
  return context;
}

CrossAttentionResult cross_attention(const Matrix& x, std::int64_t n, std::int64_t hidden,
                                     const Matrix& encoder, std::int64_t m, std::int64_t width,
                                     const CrossAttentionWeights& w, const LayerShape& shape,
                                     double scale, const std::vector<unsigned char>& key_valid) {
  const std::int64_t d = shape.head_dim, q_width = shape.heads * d, kv_width = shape.kv_heads * d;
  const Matrix q = linear(x, n, hidden, q_width, *w.wq, w.bq, false);
  const Matrix k = linear(encoder, m, width, kv_width, *w.wk, w.bk, false);
  const Matrix v = linear(encoder, m, width, kv_width, *w.wv, w.bv, false);
  CrossAttentionResult r;
  r.weights.resize(static_cast<std::size_t>(shape.heads * n * m));
  LayerShape s = shape;
  s.n = n;
  s.key_len = m;
  const Matrix context = layer_attention(
      q, k, v, s, scale,
      [&](std::int64_t, std::int64_t, std::int64_t j) {
        return key_valid.empty() || key_valid[static_cast<std::size_t>(j)] != 0;
      },
      r.weights.data());
  r.output = linear(context, n, q_width, hidden, *w.wo, w.bo, false);
  return r;
}

TransformerResult transformer(const TransformerConfig& c,
                              const std::map<std::string, std::vector<double>>& w,
                              const std::vector<std::int32_t>& ids,
                              const std::vector<std::int32_t>& types,
                              const std::vector<MaskSpec>& masks) {
  if (c.architecture == Architecture::kLlama) return llama_transformer(c, w, ids, masks);
  const auto n = static_cast<std::int64_t>(ids.size());
  const std::int64_t h = c.hidden, heads = c.heads, d = h / heads, inter = c.intermediate;
  const bool bert = c.architecture == Architecture::kBert;
  const bool gpt2 = c.architecture == Architecture::kGpt2;
  const double eps = c.layer_norm_eps;
  TransformerResult r;
  r.attention.resize(static_cast<std::size_t>(c.layers * heads * n * n));

  Matrix x(static_cast<std::size_t>(n * h));
  const auto& wte = get(w, "token_embedding");
  const auto& wpe = get(w, "position_embedding");
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < h; ++j) {
      double v = wte[ids[i] * h + j] + wpe[i * h + j];
      if (bert) v += get(w, "token_type_embedding")[(types.empty() ? 0 : types[i]) * h + j];
      x[i * h + j] = v;
    }
  }
  if (bert)
    x = layer_norm(x, n, h, get(w, "embedding_norm.weight"), get(w, "embedding_norm.bias"), eps);
  const auto keep_hidden = [&] { r.hidden.insert(r.hidden.end(), x.begin(), x.end()); };
  keep_hidden();

  for (std::int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    const auto vec = [&](const std::string& name) { return &get(w, p + name); };
    const Matrix a =
        bert ? x
             : layer_norm(x, n, h, *vec("attention_norm.weight"), *vec("attention_norm.bias"), eps);
    Matrix q, k, v;
    if (gpt2) {
      const Matrix qkv =
          linear(a, n, h, 3 * h, *vec("attention.qkv.weight"), vec("attention.qkv.bias"), true);
      q.resize(x.size());
      k.resize(x.size());
      v.resize(x.size());
      for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < h; ++j) {
          q[i * h + j] = qkv[i * 3 * h + j];
          k[i * h + j] = qkv[i * 3 * h + h + j];
          v[i * h + j] = qkv[i * 3 * h + 2 * h + j];
        }
      }
    } else {
      q = linear(a, n, h, h, *vec("attention.query.weight"),
                 bert ? vec("attention.query.bias") : nullptr, false);
      k = linear(a, n, h, h, *vec("attention.key.weight"),
                 bert ? vec("attention.key.bias") : nullptr, false);
      v = linear(a, n, h, h, *vec("attention.value.weight"),
                 bert ? vec("attention.value.bias") : nullptr, false);
    }
    for (const Matrix* part : {&q, &k, &v}) {  // head-major: [heads][N][d]
      for (std::int64_t hd = 0; hd < heads; ++hd) {
        for (std::int64_t i = 0; i < n; ++i) {
          const auto row = part->begin() + i * h + hd * d;
          r.projections.insert(r.projections.end(), row, row + d);
        }
      }
    }
    double scale = 1.0;
    if (bert || (gpt2 && c.scale_attn_weights)) scale = 1.0 / std::sqrt(static_cast<double>(d));
    if (gpt2 && c.scale_attn_by_inverse_layer_idx) scale /= static_cast<double>(l + 1);
    const AttentionShape shape{heads, n, n, d, d};
    const Matrix context = layer_attention(
        q, k, v, {heads, heads, n, d}, scale,
        [&](std::int64_t hd, std::int64_t i, std::int64_t j) {
          return masks.empty()
                     ? own_visible(c, l, i, j)
                     : reference::visible(masks.size() == 1 ? masks[0] : masks[l], shape, hd, i, j);
        },
        r.attention.data() + l * heads * n * n);
    add(x, linear(context, n, h, h, *vec("attention.output.weight"), vec("attention.output.bias"),
                  gpt2));
    if (bert)
      x = layer_norm(x, n, h, *vec("attention_norm.weight"), *vec("attention_norm.bias"), eps);
    const Matrix m_in =
        bert ? x : layer_norm(x, n, h, *vec("mlp_norm.weight"), *vec("mlp_norm.bias"), eps);
    Matrix m = linear(m_in, n, h, inter, *vec("mlp.input.weight"), vec("mlp.input.bias"), gpt2);
    activation(m, c.activation);
    add(x, linear(m, n, inter, h, *vec("mlp.output.weight"), vec("mlp.output.bias"), gpt2));
    if (bert) x = layer_norm(x, n, h, *vec("mlp_norm.weight"), *vec("mlp_norm.bias"), eps);
    if (l + 1 < c.layers || bert) keep_hidden();
  }
  if (!bert) {
    if (c.final_norm) {
      x = layer_norm(x, n, h, get(w, "final_norm.weight"), get(w, "final_norm.bias"), eps);
    }
    keep_hidden();
  }
  if (bert && !c.lm_head) return r;
  Matrix top = x;
  const std::vector<double>* bias = nullptr;
  if (bert) {
    top = linear(x, n, h, h, get(w, "head.dense.weight"), &get(w, "head.dense.bias"), false);
    activation(top, c.activation);
    top = layer_norm(top, n, h, get(w, "head.norm.weight"), get(w, "head.norm.bias"), eps);
    bias = &get(w, "head.bias");
  }
  // The decoder is tied to the word embeddings: an nn.Linear whose weight is wte [vocab, hidden].
  r.logits = linear(top, n, h, c.vocab, wte, bias, false);
  return r;
}

}  // namespace attnlens::reference
