// The double-precision llama-family forward pass (LlamaForCausalLM, Qwen2ForCausalLM), written
// from the transformers library's modelling code and sharing no code with src/models/: RMSNorm,
// rotary embeddings by rotate_half, grouped K/V heads read by index (repeat_kv's order, in
// layer_attention()), the SwiGLU MLP, a final RMSNorm and the tied or separate LM head. Tests
// only.
#include <cmath>
#include <stdexcept>

#include "reference/reference.h"
#include "reference/transformer_reference.h"

namespace attnlens::reference {
namespace {

using models::RopeScaling;
using models::TransformerConfig;
using Matrix = std::vector<double>;
using Weights = std::map<std::string, std::vector<double>>;

const std::vector<double>* find(const Weights& w, const std::string& name) {
  const auto it = w.find(name);
  return it == w.end() ? nullptr : &it->second;
}

const std::vector<double>& get(const Weights& w, const std::string& name) {
  const std::vector<double>* found = find(w, name);
  if (!found) throw std::runtime_error("reference: missing weight " + name);
  return *found;
}

// nn.Linear: y = x W^T + b with W [out, in]; b may be absent.
Matrix linear(const Matrix& x, std::int64_t n, std::int64_t in, std::int64_t out,
              const std::vector<double>& w, const std::vector<double>* b) {
  Matrix y(static_cast<std::size_t>(n * out));
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t o = 0; o < out; ++o) {
      double s = b ? (*b)[o] : 0.0;
      for (std::int64_t p = 0; p < in; ++p) s += x[i * in + p] * w[o * in + p];
      y[i * out + o] = s;
    }
  }
  return y;
}

// LlamaRMSNorm: weight * x / sqrt(mean(x^2) + eps).
Matrix rms_norm(const Matrix& x, std::int64_t n, std::int64_t h, const std::vector<double>& g,
                double eps) {
  Matrix y(x.size());
  for (std::int64_t i = 0; i < n; ++i) {
    double ms = 0;
    for (std::int64_t j = 0; j < h; ++j) ms += x[i * h + j] * x[i * h + j];
    const double r = 1.0 / std::sqrt(ms / static_cast<double>(h) + eps);
    for (std::int64_t j = 0; j < h; ++j) y[i * h + j] = g[j] * (x[i * h + j] * r);
  }
  return y;
}

// ROPE_INIT_FUNCTIONS' default, linear and llama3 inverse frequencies.
std::vector<double> inverse_frequencies(const models::RotaryConfig& r, std::int64_t d) {
  const double pi = 3.14159265358979323846;
  std::vector<double> inv;
  for (std::int64_t i = 0; i < d / 2; ++i) {
    double f = 1.0 / std::pow(r.theta, static_cast<double>(2 * i) / static_cast<double>(d));
    if (r.scaling == RopeScaling::kLinear) f /= r.factor;
    if (r.scaling == RopeScaling::kLlama3) {
      const double old = static_cast<double>(r.original_max_positions);
      const double wavelength = 2 * pi / f;
      const double scaled = wavelength > old / r.low_freq_factor ? f / r.factor : f;
      const double smooth =
          (old / wavelength - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
      const bool medium =
          !(wavelength < old / r.high_freq_factor) && !(wavelength > old / r.low_freq_factor);
      f = medium ? (1 - smooth) * scaled / r.factor + smooth * scaled : scaled;
    }
    inv.push_back(f);
  }
  return inv;
}

// q * cos + rotate_half(q) * sin for one head row of d values at `position`.
void rotate(double* x, std::int64_t d, std::int64_t position, const std::vector<double>& inv) {
  const std::int64_t half = d / 2;
  std::vector<double> out(static_cast<std::size_t>(d));
  for (std::int64_t e = 0; e < d; ++e) {
    const double angle = static_cast<double>(position) * inv[e % half];  // cat(freqs, freqs)
    const double rotated = e < half ? -x[e + half] : x[e - half];
    out[e] = x[e] * std::cos(angle) + rotated * std::sin(angle);
  }
  std::copy(out.begin(), out.end(), x);
}

// create_causal_mask, or with a sliding window: kv_idx > q_idx - window.
bool own_visible(const TransformerConfig& c, std::int64_t layer, std::int64_t i, std::int64_t j) {
  if (j > i) return false;
  const std::int64_t window =
      c.local_windows.empty() ? 0 : c.local_windows[static_cast<std::size_t>(layer)];
  return window == 0 || j > i - window;
}

}  // namespace

TransformerResult llama_transformer(const TransformerConfig& c, const Weights& w,
                                    const std::vector<std::int32_t>& ids,
                                    const std::vector<MaskSpec>& masks) {
  const auto n = static_cast<std::int64_t>(ids.size());
  const std::int64_t h = c.hidden, heads = c.heads, inter = c.intermediate;
  const std::int64_t d = c.head_dim ? c.head_dim : h / heads;
  const std::int64_t kv = c.kv_heads ? c.kv_heads : heads;
  const double eps = c.layer_norm_eps;
  const std::vector<double> inv = inverse_frequencies(c.rotary, d);
  TransformerResult r;
  r.attention.resize(static_cast<std::size_t>(c.layers * heads * n * n));

  const auto& embed = get(w, "token_embedding");
  Matrix x(static_cast<std::size_t>(n * h));
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < h; ++j) x[i * h + j] = embed[ids[i] * h + j];
  }
  r.hidden = x;
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    const auto proj = [&](const Matrix& in, std::int64_t rows, std::int64_t from, std::int64_t to,
                          const std::string& name) {
      return linear(in, rows, from, to, get(w, p + name + ".weight"), find(w, p + name + ".bias"));
    };
    const Matrix a = rms_norm(x, n, h, get(w, p + "attention_norm.weight"), eps);
    Matrix q = proj(a, n, h, heads * d, "attention.query");
    Matrix k = proj(a, n, h, kv * d, "attention.key");
    const Matrix v = proj(a, n, h, kv * d, "attention.value");
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t hd = 0; hd < heads; ++hd) rotate(&q[(i * heads + hd) * d], d, i, inv);
      for (std::int64_t g = 0; g < kv; ++g) rotate(&k[(i * kv + g) * d], d, i, inv);
    }
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    const AttentionShape shape{heads, n, n, d, d};
    const Matrix context = layer_attention(
        q, k, v, {heads, kv, n, d}, scale,
        [&](std::int64_t hd, std::int64_t i, std::int64_t j) {
          return masks.empty() ? own_visible(c, l, i, j)
                               : visible(masks.size() == 1 ? masks[0] : masks[l], shape, hd, i, j);
        },
        r.attention.data() + l * heads * n * n);
    const Matrix o = proj(context, n, heads * d, h, "attention.output");
    for (std::size_t e = 0; e < x.size(); ++e) x[e] += o[e];
    const Matrix m_in = rms_norm(x, n, h, get(w, p + "mlp_norm.weight"), eps);
    Matrix gate = proj(m_in, n, h, inter, "mlp.gate");
    const Matrix up = proj(m_in, n, h, inter, "mlp.input");
    for (std::size_t e = 0; e < gate.size(); ++e) {
      gate[e] = gate[e] / (1.0 + std::exp(-gate[e])) * up[e];  // silu(gate) * up
    }
    const Matrix f = proj(gate, n, inter, h, "mlp.output");
    for (std::size_t e = 0; e < x.size(); ++e) x[e] += f[e];
    if (l + 1 < c.layers) r.hidden.insert(r.hidden.end(), x.begin(), x.end());
  }
  x = rms_norm(x, n, h, get(w, "final_norm.weight"), eps);
  r.hidden.insert(r.hidden.end(), x.begin(), x.end());
  const std::vector<double>* head = find(w, "lm_head");
  r.logits = linear(x, n, h, c.vocab, head ? *head : embed, nullptr);
  return r;
}

}  // namespace attnlens::reference
